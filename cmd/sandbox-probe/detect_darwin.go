package main

import "golang.org/x/sys/unix"

// hostChecks fills the macOS facts: the Darwin release. sandbox-exec is
// checked by sandboxExecCheck; Landlock, user namespaces and cgroups are
// Linux facilities.
func hostChecks(rep *DetectReport) {
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		rep.Kernel = "Darwin " + unix.ByteSliceToString(u.Release[:])
	}
	if v, err := unix.Sysctl("kern.osproductversion"); err == nil {
		rep.Distro = "macOS " + v
	}
	rep.Checks = append(rep.Checks, linuxOnly("landlock"), linuxOnly("user_namespaces"), linuxOnly("apparmor_userns"), linuxOnly("cgroup"))
}

// hostLandlockABI returns 0: Landlock is Linux-only.
func hostLandlockABI() int { return 0 }
