package probe

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

const getTermios = unix.TCGETS

// ttyNr returns field 7 of /proc/self/stat: the controlling terminal's
// device number, "0" when there is none.
func ttyNr() string {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return "unknown (" + errnoName(err) + ")"
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s) // state ppid pgrp session tty_nr ...
	if len(f) < 5 {
		return "unknown"
	}
	return f[4]
}

// keyringRead finds a "user" key named desc in the user keyring (as
// the process sees it) and returns its payload.
func keyringRead(desc string) (string, error) {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", desc, 0)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil {
		return "", err
	}
	return string(buf[:min(n, len(buf))]), nil
}

// keyringAdd adds a "user" key named desc holding data to the session
// keyring.
func keyringAdd(desc, data string) error {
	_, err := unix.AddKey("user", desc, []byte(data), unix.KEY_SPEC_USER_KEYRING)
	return err
}

// shmRead attaches the System V shared memory segment with the key and
// returns its first bytes up to a NUL.
func shmRead(key int) (string, error) {
	id, err := unix.SysvShmGet(key, 0, 0)
	if err != nil {
		return "", err
	}
	b, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
	if err != nil {
		return "", err
	}
	defer unix.SysvShmDetach(b)
	s := string(b[:min(len(b), 256)])
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s, nil
}
