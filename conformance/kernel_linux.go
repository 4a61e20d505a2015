package conformance

import (
	"golang.org/x/sys/unix"
)

// hostKeyAdd puts a "user" key named desc holding data into the host
// process's user keyring and returns its id.
func hostKeyAdd(desc, data string) (int, error) {
	return unix.AddKey("user", desc, []byte(data), unix.KEY_SPEC_USER_KEYRING)
}

// hostKeyFind returns the id of the "user" key named desc in the host's
// user keyring, or an error when there is none.
func hostKeyFind(desc string) (int, error) {
	return unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", desc, 0)
}

// hostKeyRemove unlinks key id from the host's user keyring.
func hostKeyRemove(id int) {
	_, _ = unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_USER_KEYRING, 0, 0)
}

// hostShmCreate makes a System V shared memory segment with key holding
// data (owner-only) and returns its id.
func hostShmCreate(key int, data string) (int, error) {
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		return 0, err
	}
	b, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		hostShmRemove(id)
		return 0, err
	}
	copy(b, data)
	_ = unix.SysvShmDetach(b)
	return id, nil
}

// hostShmRemove removes the segment id.
func hostShmRemove(id int) { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) }
