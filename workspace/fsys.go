package workspace

import (
	"io/fs"
	"time"
)

// The race-safe file system layer. The policy judges a resolved absolute
// path; everything below opens exactly that path and nothing else:
//
//   - openFile and openDir open an absolute, already resolved path without
//     following any symbolic link in any component (openat2 with
//     RESOLVE_NO_SYMLINKS on Linux, else a component-by-component openat
//     walk with O_NOFOLLOW), then, where /proc is available, check that
//     /proc/self/fd/N names the judged path. A component replaced by a link
//     after the decision makes the open fail with *PathChangedError.
//   - a dirHandle is a verified directory descriptor; files in it are
//     opened, created, renamed and removed relative to it (openat with
//     O_NOFOLLOW, renameat), so a swap of any ancestor after the open
//     cannot redirect the operation.

// statInfo is what the tools need from a stat.
type statInfo struct {
	mode    fs.FileMode
	size    int64
	modTime time.Time
	uid     int
	gid     int
	dev     uint64
	ino     uint64
	nlink   uint64
}

// kindOf names a file mode's type for errors and listings.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "other"
}
