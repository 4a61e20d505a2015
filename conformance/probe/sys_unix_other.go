//go:build unix && !linux

package probe

import "golang.org/x/sys/unix"

const getTermios = unix.TIOCGETA

// ttyNr is only known on Linux (from /proc/self/stat).
func ttyNr() string { return "unknown" }

// keyringRead, keyringAdd and shmRead are Linux only.
func keyringRead(string) (string, error) { return "", unix.ENOSYS }
func keyringAdd(string, string) error    { return unix.ENOSYS }
func shmRead(int) (string, error)        { return "", unix.ENOSYS }
