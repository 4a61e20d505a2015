//go:build linux

package scan

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"sync"

	"golang.org/x/sys/unix"
)

// rootHandle is an open walk root. Directories below it are opened with
// openat2(RESOLVE_NO_SYMLINKS) relative to it, so a directory swapped for a
// symlink during the search fails to open instead of leading out of the
// tree.
type rootHandle struct{ fd int }

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK

func openRoot(path string) (*rootHandle, error) {
	fd, err := retry(func() (int, error) { return unix.Open(path, dirFlags, 0) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &rootHandle{fd: fd}, nil
}

func (h *rootHandle) close() { unix.Close(h.fd) }

// haveOpenat2 reports whether openat2 works here (Linux 5.6; seccomp
// filters in containers may refuse it).
var haveOpenat2 = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: dirFlags, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// openBelow opens the directory rel below the root fd without following any
// symlink. Without openat2 it opens abs with O_NOFOLLOW, which protects the
// last component only.
func openBelow(root int, rel, abs string) (int, error) {
	if haveOpenat2() {
		return retry(func() (int, error) {
			return unix.Openat2(root, rel, &unix.OpenHow{Flags: dirFlags, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH})
		})
	}
	return retry(func() (int, error) { return unix.Open(abs, dirFlags, 0) })
}

func retry(f func() (int, error)) (int, error) {
	for {
		fd, err := f()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// readDir lists directory n of wr. It never follows symlinks; entry types
// come from the directory itself (d_type), or fstatat without following
// when the file system does not report them.
func (s *search) readDir(w *worker, wr *walkRoot, n *node) ([]entry, error) {
	rel := "."
	if n != wr.root {
		rel = n.path[len(wr.path)+1:]
		if wr.path == "/" {
			rel = n.path[1:]
		}
	}
	fd, err := openBelow(wr.h.fd, rel, n.path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: n.path, Err: err}
	}
	defer unix.Close(fd)
	if s.cache != nil {
		// Watch (or stat) before reading, so a change during the
		// listing is seen by the next search.
		s.cache.noteListing(fd, n)
	}
	if w.buf == nil {
		w.buf = make([]byte, 64<<10)
	}
	var entries []entry
	for {
		nb, err := unix.Getdents(fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: n.path, Err: err}
		}
		if nb <= 0 {
			break
		}
		entries, err = parseDirents(fd, w.buf[:nb], entries)
		if err != nil {
			return nil, &fs.PathError{Op: "fstatat", Path: n.path, Err: err}
		}
	}
	if s.needMode {
		kept := entries[:0]
		for _, e := range entries {
			if e.typ != TypeSymlink {
				var st unix.Stat_t
				err := unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW)
				if errors.Is(err, unix.ENOENT) {
					continue // removed since the listing
				}
				if err != nil {
					return nil, &fs.PathError{Op: "fstatat", Path: n.path + "/" + e.name, Err: err}
				}
				e.perm = st.Mode & 0o7777
				e.typ = statType(st.Mode)
			}
			kept = append(kept, e)
		}
		entries = kept
	}
	return entries, nil
}

// parseDirents appends the linux_dirent64 records of b to entries.
func parseDirents(fd int, b []byte, entries []entry) ([]entry, error) {
	for len(b) >= 19 {
		ino := binary.NativeEndian.Uint64(b[0:])
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < 19 || reclen > len(b) {
			return entries, unix.EBADMSG
		}
		dt := b[18]
		name := b[19:reclen]
		b = b[reclen:]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if ino == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		e := entry{name: string(name), ino: ino}
		switch dt {
		case unix.DT_DIR:
			e.typ = TypeDir
		case unix.DT_REG:
			e.typ = TypeFile
		case unix.DT_LNK:
			e.typ = TypeSymlink
		case unix.DT_SOCK:
			e.typ = TypeSocket
		case unix.DT_UNKNOWN:
			var st unix.Stat_t
			err := unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW)
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			if err != nil {
				return entries, err
			}
			e.typ = statType(st.Mode)
		default:
			e.typ = TypeOther
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func statType(mode uint32) Type {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return TypeDir
	case unix.S_IFREG:
		return TypeFile
	case unix.S_IFLNK:
		return TypeSymlink
	case unix.S_IFSOCK:
		return TypeSocket
	}
	return TypeOther
}

// isVanished reports an error that means the path no longer is a directory
// reachable without symlinks (deleted, replaced by a file or a link).
func isVanished(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV)
}
