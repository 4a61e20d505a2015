//go:build linux

package policyderive

import (
	"io/fs"
	"syscall"
)

// inodesListed: directory listings carry inode numbers, so the other
// names of a hard-linked file can be searched for.
const inodesListed = true

// fileID returns the file's identity and link count.
func fileID(fi fs.FileInfo) (FileID, uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, 0, false
	}
	return FileID{Dev: uint64(st.Dev), Ino: st.Ino}, uint64(st.Nlink), true
}
