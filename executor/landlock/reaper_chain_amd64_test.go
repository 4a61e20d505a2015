//go:build linux

package landlock_test

import (
	"syscall"
	"unsafe"
)

// canChain reports that chain is the real attacker here.
const canChain = true

// chain hops from pid to pid — fork, the parent exits at once — until
// deadline (seconds since the epoch), writing msg to the file at p every
// 1024 generations. Only raw system calls run in a forked child of a Go
// program, hence nosplit and no allocation.
//
//go:nosplit
func chain(p *byte, msg []byte, deadline uintptr) {
	for n := uintptr(1); ; n++ {
		pid, _, e := syscall.RawSyscall(syscall.SYS_FORK, 0, 0, 0)
		if e != 0 {
			continue
		}
		if pid != 0 {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
		if n&255 == 0 {
			if now, _, _ := syscall.RawSyscall(syscall.SYS_TIME, 0, 0, 0); now > deadline {
				syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
			}
		}
		if n&1023 == 0 {
			fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, ^uintptr(99) /* AT_FDCWD, -100 */, uintptr(unsafe.Pointer(p)), syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC, 0o755, 0, 0)
			if e == 0 {
				syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg)))
				syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
			}
		}
	}
}
