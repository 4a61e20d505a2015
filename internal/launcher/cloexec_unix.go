//go:build unix && !linux

package launcher

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// markCloexec sets FD_CLOEXEC on every descriptor >= 3 listed in /dev/fd.
func markCloexec() error {
	d, err := os.Open("/dev/fd")
	if err != nil {
		return err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	self := int(d.Fd())
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd < 3 || fd == self {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return os.NewSyscallError("fcntl", err)
		}
	}
	return nil
}
