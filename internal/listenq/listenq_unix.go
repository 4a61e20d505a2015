//go:build unix

package listenq

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// Queued reports whether l has connections waiting to be accepted, or
// cannot tell: a listening socket is readable when its queue is not
// empty.
func Queued(l net.Listener) bool {
	sc, ok := l.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	ready := true
	if err := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		ready = err != nil || n > 0
	}); err != nil {
		return true
	}
	return ready
}
