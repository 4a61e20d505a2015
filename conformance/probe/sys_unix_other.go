//go:build unix && !linux

package probe

import "golang.org/x/sys/unix"

const getTermios = unix.TIOCGETA

// ttyNr is only known on Linux (from /proc/self/stat).
func ttyNr() string { return "unknown" }
