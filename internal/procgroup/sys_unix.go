//go:build unix

package procgroup

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr makes the child a session (and process group) leader without
// a controlling terminal.
func sysProcAttr() (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Setsid: true}, nil
}

// setCtty makes descriptor 0 the new session's controlling terminal.
func setCtty(sys *syscall.SysProcAttr) { sys.Setctty, sys.Ctty = true, 0 }

// signalGroup sends sig to process group pgid.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = unix.Kill(-pgid, sig)
}

// killGroup sends SIGKILL to process group pgid; an empty group is fine.
func killGroup(pgid int) {
	_ = unix.Kill(-pgid, unix.SIGKILL)
}
