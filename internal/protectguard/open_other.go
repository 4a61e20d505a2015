//go:build unix && !linux && !darwin

package protectguard

// openNoLinks opens the absolute path with flags, failing when any
// component of it is a symbolic link, one component at a time.
func openNoLinks(path string, flags int) (int, error) { return openWalk(path, flags) }
