//go:build !linux

package scan

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// rootHandle is a walk root. Without openat2, each directory is checked
// with Lstat before it is opened: a directory swapped for a symlink
// between the two is a window this implementation leaves open.
type rootHandle struct{}

func openRoot(path string) (*rootHandle, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
	}
	return &rootHandle{}, nil
}

func (h *rootHandle) close() {}

// readDir lists directory n of wr without following symlinks.
func (s *search) readDir(w *worker, wr *walkRoot, n *node) ([]entry, error) {
	fi, err := os.Lstat(n.path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: n.path, Err: syscall.ENOTDIR}
	}
	if s.cache != nil {
		s.cache.noteListing(n, fi)
	}
	f, err := os.Open(n.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	entries := make([]entry, 0, len(des))
	for _, de := range des {
		e := entry{name: de.Name(), typ: modeType(de.Type())}
		if s.needMode && e.typ != TypeSymlink {
			fi, err := de.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since the listing
			}
			if err != nil {
				return nil, err
			}
			e.perm, e.typ = uint32(fi.Mode().Perm()), modeType(fi.Mode())
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func isVanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)
}
