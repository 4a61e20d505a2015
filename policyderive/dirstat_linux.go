//go:build linux

package policyderive

import (
	"io/fs"
	"syscall"
)

func dirStateOf(fi fs.FileInfo) dirState {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirState{mtime: fi.ModTime().UnixNano()}
	}
	return dirState{dev: uint64(st.Dev), ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}
