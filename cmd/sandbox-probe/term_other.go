//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

// termios reports false: colour and progress are for Unix terminals.
func termios(fd int) bool { return false }
