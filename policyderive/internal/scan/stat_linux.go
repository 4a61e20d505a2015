//go:build linux

package scan

import (
	"io/fs"
	"syscall"
)

func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Dev, st.Ino
	}
	return 0, 0
}

func statOf(fi fs.FileInfo) dirStat {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirStat{mtime: fi.ModTime().UnixNano()}
	}
	return dirStat{dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}
