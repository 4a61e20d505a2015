//go:build !unix

package toolcache

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
)

func setGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}

// safeMkdir makes dir unless it exists, and refuses a symbolic link.
func safeMkdir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return ErrUnsafeDir
	}
	return nil
}

func rootID(root string) (string, error) { return root, nil }
