//go:build unix

// Package procscan finds the processes a conformance case started, by a
// unique tag in their command line or environment, so the suite can see
// from outside whether a command left processes behind and kill what a
// hung case leaves running. It works across PID namespaces: processes in a
// bwrap or Docker PID namespace are visible in the host's /proc under their
// host pids.
package procscan

import (
	"bytes"
	"errors"
	"os"
	"syscall"
)

// Process is a process that carries the tag.
type Process struct {
	Pid int
	// Cmdline is the command line with NULs replaced by spaces.
	Cmdline string
}

// Kill sends SIGKILL to every process in ps and returns the first error
// other than "no such process".
func Kill(ps []Process) error {
	var first error
	for _, p := range ps {
		if err := syscall.Kill(p.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) && first == nil {
			first = err
		}
	}
	return first
}

func matches(tag []byte, blobs ...[]byte) bool {
	for _, b := range blobs {
		if bytes.Contains(b, tag) {
			return true
		}
	}
	return false
}

func self(pid int) bool { return pid == os.Getpid() }
