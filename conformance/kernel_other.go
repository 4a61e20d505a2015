//go:build unix && !linux

package conformance

import "golang.org/x/sys/unix"

// Keyrings and System V shared memory are exercised on Linux only.
func hostKeyAdd(string, string) (int, error) { return 0, unix.ENOSYS }
func hostKeyFind(string) (int, error)        { return 0, unix.ENOSYS }
func hostKeyRemove(int)                      {}
func hostShmCreate(int, string) (int, error) { return 0, unix.ENOSYS }
func hostShmRemove(int)                      {}
