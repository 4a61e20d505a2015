//go:build darwin

package seatbelt

import (
	"golang.org/x/sys/unix"
)

// supported is true: macOS has Seatbelt and sandbox-exec.
const supported = true

// unsupported is never called on macOS.
func unsupported() error { return nil }

// hostInfo returns the macOS release and build, for Describe.
func hostInfo() map[string]string {
	info := map[string]string{}
	if v, err := unix.Sysctl("kern.osproductversion"); err == nil {
		info["macos"] = v
	}
	if v, err := unix.Sysctl("kern.osversion"); err == nil {
		info["macos_build"] = v
	}
	return info
}
