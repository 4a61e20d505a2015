//go:build unix

package toolcache

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// setGroup starts cmd in a process group of its own, killed whole when
// its context ends.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killGroup kills what is left of cmd's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// ownedSafe reports whether st is this user's and not writable by group
// or others.
func ownedSafe(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Geteuid() && st.Mode().Perm()&0o022 == 0
}

// rootID names the root by its path, device, inode and, where the file
// system records it, its birth time (an inode number is reused soon after
// a directory is removed).
func rootID(root string) (string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return "", err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return root, nil
	}
	return fmt.Sprintf("%s\x00%d\x00%d\x00%s", root, sys.Dev, sys.Ino, birth(root)), nil
}
