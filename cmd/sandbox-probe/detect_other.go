//go:build !linux && !darwin

package main

// hostChecks reports the Linux facilities as not applicable.
func hostChecks(rep *DetectReport) {
	rep.Checks = append(rep.Checks, linuxOnly("landlock"), linuxOnly("user_namespaces"), linuxOnly("apparmor_userns"), linuxOnly("cgroup"))
}

// hostLandlockABI returns 0: Landlock is Linux-only.
func hostLandlockABI() int { return 0 }
