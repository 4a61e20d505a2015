//go:build linux || darwin

package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// dirHandle is a directory opened by its verified absolute path.
type dirHandle struct {
	f    *os.File
	fd   int
	path string
}

// openDir opens the resolved absolute directory path without following
// symbolic links anywhere in it.
func openDir(abs string) (*dirHandle, error) {
	fd, err := openNoFollow(abs, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return &dirHandle{f: os.NewFile(uintptr(fd), abs), fd: fd, path: abs}, nil
}

// openFile opens the resolved absolute path for reading without following
// symbolic links anywhere in it. O_NONBLOCK keeps a FIFO from blocking the
// open; callers check the type with Stat.
func openFile(abs string) (*os.File, error) {
	fd, err := openNoFollow(abs, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), abs), nil
}

// openNoFollow opens abs with flags, refusing symbolic links in every
// component, and verifies the descriptor.
func openNoFollow(abs string, flags int) (int, error) {
	if !filepath.IsAbs(abs) || filepath.Clean(abs) != abs {
		return -1, &fs.PathError{Op: "open", Path: abs, Err: errors.New("path is not absolute and clean")}
	}
	fd, err := openResolved(abs, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return -1, err
	}
	if err := verifyFD(fd, abs); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// walkOpen opens abs one component at a time from "/", each directory with
// O_NOFOLLOW|O_DIRECTORY, the last one with flags (which include
// O_NOFOLLOW).
func walkOpen(abs string, flags int) (int, error) {
	if abs == "/" {
		fd, err := unix.Open("/", flags&^unix.O_NOFOLLOW, 0)
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
		return fd, nil
	}
	fd, err := unix.Open("/", walkDirFlags, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	parts := strings.Split(abs[1:], "/")
	for i, name := range parts {
		fl := walkDirFlags | unix.O_NOFOLLOW
		if i == len(parts)-1 {
			fl = flags
		}
		nfd, err := unix.Openat(fd, name, fl, 0)
		if err != nil {
			err = openError(fd, name, abs, err)
			unix.Close(fd)
			return -1, err
		}
		unix.Close(fd)
		fd = nfd
	}
	return fd, nil
}

// openError maps a failed openat of name in dirfd. The path was resolved
// before, so a symbolic link in the way (ELOOP), or ENOTDIR where the entry
// is now a link or a directory, means it was swapped after the decision:
// *PathChangedError. Anything else is an *fs.PathError.
func openError(dirfd int, name, abs string, err error) error {
	changed := &PathChangedError{Path: abs, Reason: "a component was replaced by a symbolic link after the policy decision"}
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EMLINK):
		return changed
	case errors.Is(err, unix.ENOTDIR):
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			if t := uint32(st.Mode) & unix.S_IFMT; t == unix.S_IFLNK || t == unix.S_IFDIR {
				return changed
			}
		}
	}
	return &fs.PathError{Op: "open", Path: abs, Err: err}
}

func (d *dirHandle) Close() error { return d.f.Close() }

// child returns the absolute path of name in d.
func (d *dirHandle) child(name string) string {
	if d.path == "/" {
		return "/" + name
	}
	return d.path + "/" + name
}

// lstat stats name in d without following it.
func (d *dirHandle) lstat(name string) (statInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return statInfo{}, &fs.PathError{Op: "lstat", Path: d.child(name), Err: err}
	}
	return fromStat(&st), nil
}

// fstat stats an open file by descriptor.
func fstat(f *os.File) (statInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return statInfo{}, &fs.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return fromStat(&st), nil
}

func fromStat(st *unix.Stat_t) statInfo {
	m := fs.FileMode(st.Mode & 0o777)
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if uint32(st.Mode)&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if uint32(st.Mode)&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if uint32(st.Mode)&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return statInfo{
		mode:    m,
		size:    st.Size,
		modTime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
		uid:     int(st.Uid),
		gid:     int(st.Gid),
		dev:     uint64(st.Dev),
		ino:     uint64(st.Ino),
		nlink:   uint64(st.Nlink),
	}
}

// permBits converts a FileMode's permission and special bits to the
// numeric mode for fchmod.
func permBits(m fs.FileMode) uint32 {
	b := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		b |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		b |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		b |= unix.S_ISVTX
	}
	return b
}

// openChildFile opens name in d for reading, never following a link.
func (d *dirHandle) openChildFile(name string) (*os.File, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, openError(d.fd, name, d.child(name), err)
	}
	return os.NewFile(uintptr(fd), d.child(name)), nil
}

// openChildDir opens the directory name in d, never following a link.
func (d *dirHandle) openChildDir(name string) (*dirHandle, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, openError(d.fd, name, d.child(name), err)
	}
	p := d.child(name)
	return &dirHandle{f: os.NewFile(uintptr(fd), p), fd: fd, path: p}, nil
}

// readDir returns the directory's entries (unsorted). It reads the
// directory once.
func (d *dirHandle) readDir() ([]fs.DirEntry, error) {
	return d.f.ReadDir(-1)
}

// readlink returns the target of the symbolic link name in d.
func (d *dirHandle) readlink(name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(d.fd, name, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: d.child(name), Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// mkdir creates the directory name in d (mode 0777 before the umask); an
// existing entry is not an error.
func (d *dirHandle) mkdir(name string) error {
	if err := unix.Mkdirat(d.fd, name, 0o777); err != nil && !errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "mkdir", Path: d.child(name), Err: err}
	}
	return nil
}

// createTemp creates a new, empty temporary file next to base in d and
// returns it with its name: mode 0600 when private (its mode is set
// later), else 0666 minus the umask.
func (d *dirHandle) createTemp(base string, private bool) (*os.File, string, error) {
	perm := uint32(0o666)
	if private {
		perm = 0o600
	}
	if len(base) > 200 {
		base = base[:200]
	}
	for range 100 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		name := "." + base + ".cordon-" + hex.EncodeToString(b[:]) + ".tmp"
		fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, "", &fs.PathError{Op: "create", Path: d.child(name), Err: err}
		}
		return os.NewFile(uintptr(fd), d.child(name)), name, nil
	}
	return nil, "", &fs.PathError{Op: "create", Path: d.child("." + base + ".cordon-*.tmp"), Err: fs.ErrExist}
}

// rename renames old to new within d, replacing new.
func (d *dirHandle) rename(old, new string) error {
	if err := unix.Renameat(d.fd, old, d.fd, new); err != nil {
		return &os.LinkError{Op: "rename", Old: d.child(old), New: d.child(new), Err: err}
	}
	return nil
}

// renameNoReplace renames old to new within d, failing with fs.ErrExist
// if new exists.
func (d *dirHandle) renameNoReplace(old, new string) error {
	err := renameNoReplace(d.fd, old, new)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "create", Path: d.child(new), Err: fs.ErrExist}
	}
	return &os.LinkError{Op: "rename", Old: d.child(old), New: d.child(new), Err: err}
}

// linkRename is the portable no-replace rename: link, then unlink.
func linkRename(dirfd int, old, new string) error {
	if err := unix.Linkat(dirfd, old, dirfd, new, 0); err != nil {
		return err
	}
	_ = unix.Unlinkat(dirfd, old, 0)
	return nil
}

// unlink removes the file name in d.
func (d *dirHandle) unlink(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: d.child(name), Err: err}
	}
	return nil
}

// sync flushes the directory (the rename) to disk.
func (d *dirHandle) sync() error {
	if err := unix.Fsync(d.fd); err != nil && !errors.Is(err, unix.EINVAL) {
		return &fs.PathError{Op: "fsync", Path: d.path, Err: err}
	}
	return nil
}

// fchown sets f's owner.
func fchown(f *os.File, uid, gid int) error {
	return unix.Fchown(int(f.Fd()), uid, gid)
}

// fchmod sets f's mode, special bits included.
func fchmod(f *os.File, m fs.FileMode) error {
	if err := unix.Fchmod(int(f.Fd()), permBits(m)); err != nil {
		return &fs.PathError{Op: "chmod", Path: f.Name(), Err: err}
	}
	return nil
}

// isNotExist reports whether err says the file does not exist.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOENT)
}

// readChild reads the regular file name in d into buf (reset), at most
// max+1 bytes, without following a link, using the raw descriptor (no
// os.File, no poller registration): the hot path of Grep. It returns the
// file's stat; ok is false when the entry is not a regular file.
func (d *dirHandle) readChild(name string, buf []byte, max int64) (data []byte, st statInfo, ok bool, err error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf, st, false, openError(d.fd, name, d.child(name), err)
	}
	defer unix.Close(fd)
	var raw unix.Stat_t
	if err := unix.Fstat(fd, &raw); err != nil {
		return buf, st, false, &fs.PathError{Op: "fstat", Path: d.child(name), Err: err}
	}
	st = fromStat(&raw)
	if !st.mode.IsRegular() || st.size > max {
		return buf, st, st.mode.IsRegular(), nil
	}
	buf = buf[:0]
	if int64(cap(buf)) < st.size+1 {
		buf = make([]byte, 0, st.size+1)
	}
	for int64(len(buf)) <= max {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):min(cap(buf), int(max)+1)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return buf, st, true, &fs.PathError{Op: "read", Path: d.child(name), Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	return buf, st, true, nil
}
