package toolcache

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// birth returns the birth time of path where statx reports one, else "".
func birth(path string) string {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_BTIME, &st) != nil || st.Mask&unix.STATX_BTIME == 0 || st.Btime.Sec == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%09d", st.Btime.Sec, st.Btime.Nsec)
}
