//go:build unix

package main

import (
	"os"
	"syscall"
)

// resizeSignals are the signals that say the terminal changed size.
var resizeSignals = []os.Signal{syscall.SIGWINCH}
