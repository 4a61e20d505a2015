package policy

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fastRealpath resolves an existing path with one open(O_PATH) and a
// readlink of its /proc/self/fd entry: the kernel follows every link, so
// the result is the same as the component walk's. It reports false when
// the path does not fully exist or /proc is unavailable; the caller then
// walks component by component.
func fastRealpath(p string) (string, bool) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	var buf [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || n <= 0 || n >= len(buf) || buf[0] != '/' {
		return "", false
	}
	s := string(buf[:n])
	if strings.HasSuffix(s, " (deleted)") {
		return "", false
	}
	return s, true
}
