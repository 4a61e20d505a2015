package workspace

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// walkDirFlags opens intermediate directories of a walk: O_PATH needs no
// read permission.
const walkDirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC

// openat2Missing is set once openat2 turned out to be unavailable (ENOSYS
// on kernels before 5.6, or a seccomp filter refusing it).
var openat2Missing atomic.Bool

// openResolved opens abs with openat2(RESOLVE_NO_SYMLINKS|
// RESOLVE_NO_MAGICLINKS), falling back to a component walk.
func openResolved(abs string, flags int) (int, error) {
	if openat2Missing.Load() {
		return walkOpen(abs, flags)
	}
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, abs, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM) && !openat2Works():
			openat2Missing.Store(true)
			return walkOpen(abs, flags)
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.EXDEV):
			// Find out which component is in the way: the walk
			// reports a link as *PathChangedError.
			return walkOpen(abs, flags)
		default:
			return -1, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
	}
}

// openat2Works tells a genuine EPERM from a seccomp filter that blocks
// openat2: opening "/" through openat2 must work.
func openat2Works() bool {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &how)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// procFD reports whether /proc/self/fd can be read.
var procFD = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
})

// verifyFD checks that the descriptor's real path, /proc/self/fd/N, is the
// judged path.
func verifyFD(fd int, abs string) error {
	if !procFD() {
		return nil // the no-symlink open is the guarantee; documented
	}
	got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return &PathChangedError{Path: abs, Reason: "cannot read the opened descriptor's path: " + err.Error()}
	}
	if got != abs {
		return &PathChangedError{Path: abs, Opened: got, Reason: "the opened file is not the file that was checked"}
	}
	return nil
}

// renameNoReplace is renameat2(RENAME_NOREPLACE), falling back to
// link+unlink on file systems without it.
func renameNoReplace(dirfd int, old, new string) error {
	err := unix.Renameat2(dirfd, old, dirfd, new, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return linkRename(dirfd, old, new)
	}
	return err
}
