package protectguard

import "golang.org/x/sys/unix"

// openNoLinks opens the absolute path with flags, failing when any
// component of it is a symbolic link (O_NOFOLLOW_ANY, macOS 11): the
// trees are resolved paths, so a link on the way means a command swapped
// a directory for one.
func openNoLinks(path string, flags int) (int, error) {
	return unix.Open(path, flags|unix.O_NOFOLLOW_ANY|unix.O_CLOEXEC, 0)
}
