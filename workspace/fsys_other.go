//go:build !linux && !darwin

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

// errNoSafeOpen is returned by every file operation on platforms without a
// race-safe open implementation.
var errNoSafeOpen = fmt.Errorf("race-safe file access not implemented on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)

type dirHandle struct{ path string }

func openDir(abs string) (*dirHandle, error) {
	return nil, &fs.PathError{Op: "open", Path: abs, Err: errNoSafeOpen}
}
func openFile(abs string) (*os.File, error) {
	return nil, &fs.PathError{Op: "open", Path: abs, Err: errNoSafeOpen}
}
func (d *dirHandle) Close() error                           { return nil }
func (d *dirHandle) child(name string) string               { return d.path + "/" + name }
func (d *dirHandle) lstat(string) (statInfo, error)         { return statInfo{}, errNoSafeOpen }
func fstat(*os.File) (statInfo, error)                      { return statInfo{}, errNoSafeOpen }
func (d *dirHandle) openChildFile(string) (*os.File, error) { return nil, errNoSafeOpen }
func (d *dirHandle) openChildDir(string) (*dirHandle, error) {
	return nil, errNoSafeOpen
}
func (d *dirHandle) readDir() ([]fs.DirEntry, error) { return nil, errNoSafeOpen }
func (d *dirHandle) readChild(string, []byte, int64) ([]byte, statInfo, bool, error) {
	return nil, statInfo{}, false, errNoSafeOpen
}
func (d *dirHandle) readlink(string) (string, error) { return "", errNoSafeOpen }
func (d *dirHandle) mkdir(string) error              { return errNoSafeOpen }
func (d *dirHandle) createTemp(string, bool) (*os.File, string, error) {
	return nil, "", errNoSafeOpen
}
func (d *dirHandle) rename(string, string) error          { return errNoSafeOpen }
func (d *dirHandle) renameNoReplace(string, string) error { return errNoSafeOpen }
func (d *dirHandle) unlink(string) error                  { return errNoSafeOpen }
func (d *dirHandle) sync() error                          { return errNoSafeOpen }
func fchown(*os.File, int, int) error                     { return errNoSafeOpen }
func fchmod(*os.File, fs.FileMode) error                  { return errNoSafeOpen }
func isNotExist(err error) bool                           { return errors.Is(err, fs.ErrNotExist) }
