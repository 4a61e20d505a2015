//go:build linux

package backend

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Remove removes the empty directory p without following a
// symbolic link in any component: a command that replaced a parent by a
// link cannot point the removal elsewhere. A directory that is not empty
// (something was put into it since) or gone is left alone without error.
func Remove(p string) error {
	dir, name := filepath.Split(p)
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		err = unix.Rmdir(p) // Linux < 5.6
		return ignoreGone(p, err)
	}
	if err != nil {
		return ignoreGone(dir, err)
	}
	defer unix.Close(fd)
	return ignoreGone(p, unix.Unlinkat(fd, name, unix.AT_REMOVEDIR))
}

func ignoreGone(p string, err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
		return nil
	}
	return &os.PathError{Op: "rmdir", Path: p, Err: err}
}
