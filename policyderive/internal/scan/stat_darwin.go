//go:build darwin

package scan

import (
	"io/fs"
	"syscall"
)

func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

func statOf(fi fs.FileInfo) dirStat {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirStat{mtime: fi.ModTime().UnixNano()}
	}
	return dirStat{dev: uint64(st.Dev), ino: st.Ino, mtime: st.Mtimespec.Nano(), ctime: st.Ctimespec.Nano()}
}
