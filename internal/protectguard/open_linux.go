package protectguard

import (
	"errors"

	"golang.org/x/sys/unix"
)

// openNoLinks opens the absolute path with flags, failing (ELOOP) when
// any component of it is a symbolic link: the trees are resolved paths,
// so a link on the way means a command swapped a directory for one. It
// is one openat2 with RESOLVE_NO_SYMLINKS (Linux 5.6), or a walk one
// component at a time where openat2 is missing or filtered.
func openNoLinks(path string, flags int) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_NO_SYMLINKS})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return openWalk(path, flags)
	}
	return fd, err
}
