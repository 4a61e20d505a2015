//go:build !linux && !darwin

package policyderive

import "io/fs"

// dirStateOf has only the modification time here: a listing is then
// re-read whenever its directory's time is recent (see listCache).
func dirStateOf(fi fs.FileInfo) dirState {
	return dirState{mtime: fi.ModTime().UnixNano()}
}
