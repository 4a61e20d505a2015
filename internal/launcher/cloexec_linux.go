package launcher

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// markCloexec sets FD_CLOEXEC on every descriptor >= 3 of the process.
func markCloexec() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return os.NewSyscallError("close_range", err)
	}
	return markCloexecDir("/proc/self/fd") // Linux < 5.11
}

// markCloexecDir sets FD_CLOEXEC on every descriptor >= 3 listed in dir.
func markCloexecDir(dir string) error {
	d, err := os.Open(dir)
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
			continue // closed meanwhile, or already close-on-exec
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return os.NewSyscallError("fcntl", err)
		}
	}
	return nil
}
