//go:build unix

package policy

import (
	"io/fs"
	"syscall"
)

// linkInfo returns the identity and link count of a regular file.
func linkInfo(fi fs.FileInfo) (fileKey, uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return fileKey{}, 0, false
	}
	return fileKey{uint64(st.Dev), uint64(st.Ino)}, uint64(st.Nlink), true
}
