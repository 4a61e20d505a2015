//go:build unix

package workspace

import "syscall"

// openNonblock keeps an open from blocking on a FIFO and from following a
// last-component link.
const openNonblock = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
