//go:build !linux

package backend

import (
	"errors"
	"io/fs"
	"os"
)

// Remove removes the directory p if it is empty. Placeholders
// are only created on the host by a local Linux engine; elsewhere this
// removes what a shared file system shows of them.
func Remove(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || !fi.IsDir() {
		return err
	}
	if ents, err := os.ReadDir(p); err != nil || len(ents) > 0 {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
