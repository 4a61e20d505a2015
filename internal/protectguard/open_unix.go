//go:build unix

package protectguard

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openWalk opens the absolute path with flags from the root one
// component at a time, never following a symbolic link (ELOOP).
func openWalk(path string, flags int) (int, error) {
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) {
		return -1, &os.PathError{Op: "open", Path: path, Err: unix.EINVAL}
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if path == "/" {
		unix.Close(fd)
		return unix.Open("/", flags|unix.O_CLOEXEC, 0)
	}
	comps := strings.Split(path[1:], "/")
	for i, c := range comps {
		fl := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(comps)-1 {
			fl = flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
		}
		next, err := unix.Openat(fd, c, fl, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}
