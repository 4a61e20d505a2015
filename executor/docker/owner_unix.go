//go:build unix && !linux

package docker

import (
	"errors"
	"syscall"
)

// bootID and startTime are unknown here: a recycled pid keeps a stray
// container until that process exits too.
func bootID() string       { return "" }
func startTime(int) string { return "" }

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
