package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// hostChecks fills the Linux facts: kernel, distribution, Landlock, user
// namespaces, the AppArmor restriction, cgroups.
func hostChecks(rep *DetectReport) {
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		rep.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	rep.Distro = osRelease()
	rep.Checks = append(rep.Checks, landlockCheck(), usernsCheck(rep.UID), apparmorCheck(rep.UID), cgroupCheck())
}

// osRelease returns PRETTY_NAME from /etc/os-release.
func osRelease() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			if s, err := strconv.Unquote(v); err == nil {
				return s
			}
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// readSysctl reads /proc/sys/<path>; ok is false when it does not exist.
func readSysctl(path string) (string, bool) {
	b, err := os.ReadFile(filepath.Join("/proc/sys", path))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// landlockCheck asks the kernel for its Landlock ABI.
func landlockCheck() Check {
	c := Check{Name: "landlock", Details: map[string]string{}}
	if b, err := os.ReadFile("/sys/kernel/security/lsm"); err == nil {
		c.Details["lsm"] = strings.TrimSpace(string(b))
	}
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		c.Status = statusUnavailable
		c.Details["errno"] = errno.Error()
		switch errno {
		case unix.ENOSYS:
			c.Summary = "not in this kernel"
			c.Reason = "the kernel has no Landlock system calls (Linux ≥ 5.13 built with CONFIG_SECURITY_LANDLOCK is needed)"
			c.Fix = "upgrade to a kernel with Landlock (Linux 6.12 or later for strict mode), or use the bwrap or docker backend"
		case unix.EOPNOTSUPP:
			c.Summary = "disabled"
			c.Reason = "Landlock is built in but not enabled at boot"
			c.Fix = "add landlock to the lsm= boot parameter (for example lsm=landlock,lockdown,yama,integrity,apparmor,bpf) and reboot"
		default:
			c.Summary = "unknown"
			c.Reason = "landlock_create_ruleset: " + errno.Error()
		}
		return c
	}
	c.Details["abi"] = strconv.Itoa(int(abi))
	c.Summary = fmt.Sprintf("ABI %d", abi)
	c.Status = statusOK
	if abi < 6 {
		c.Status = statusWarn
		c.Reason = fmt.Sprintf("ABI %d lacks the signal and abstract-socket scopes (ABI 6, Linux 6.12): the landlock backend refuses coding-mode profiles in strict mode", abi)
		c.Fix = "upgrade the kernel to 6.12 or later, or use the bwrap backend"
	}
	return c
}

// usernsCheck reads the sysctls that govern user namespaces and creates
// one (with a mount namespace, which is what bwrap needs) to be sure.
func usernsCheck(uid int) Check {
	c := Check{Name: "user_namespaces", Details: map[string]string{}}
	for _, name := range []string{"user/max_user_namespaces", "kernel/unprivileged_userns_clone", "kernel/apparmor_restrict_unprivileged_userns"} {
		if v, ok := readSysctl(name); ok {
			c.Details[strings.ReplaceAll(name, "/", ".")] = v
		}
	}
	err := tryUserns(uid)
	if err != nil {
		c.Details["trial"] = err.Error()
	} else {
		c.Details["trial"] = "ok"
	}
	unpriv, why, fix := unprivilegedUserns(c.Details)
	switch {
	case err != nil:
		c.Status = statusUnavailable
		c.Summary = "cannot be created"
		c.Reason = "creating a user and mount namespace failed: " + err.Error()
		if why != "" {
			c.Reason += " (" + why + ")"
		}
		c.Fix = fix
		if c.Fix == "" {
			c.Fix = "inside a container, run it with --security-opt seccomp=unconfined --security-opt apparmor=unconfined (or --privileged); otherwise use the landlock backend"
		}
	case uid == 0 && !unpriv:
		c.Status = statusOK
		c.Summary = "work (as root); unprivileged users cannot create them"
		c.Reason = why
		c.Fix = fix
	case uid == 0:
		c.Status, c.Summary = statusOK, "work (as root and for unprivileged users)"
	default:
		c.Status, c.Summary = statusOK, "work (unprivileged)"
	}
	return c
}

// unprivilegedUserns judges from the sysctls whether unprivileged users
// may create user namespaces, and if not why and how to fix it.
func unprivilegedUserns(d map[string]string) (ok bool, why, fix string) {
	if v := d["user.max_user_namespaces"]; v == "0" {
		return false, "user.max_user_namespaces is 0", "sysctl -w user.max_user_namespaces=15000 (persist it in /etc/sysctl.d/)"
	}
	if v := d["kernel.unprivileged_userns_clone"]; v == "0" {
		return false, "kernel.unprivileged_userns_clone is 0", "sysctl -w kernel.unprivileged_userns_clone=1 (persist it in /etc/sysctl.d/)"
	}
	if v := d["kernel.apparmor_restrict_unprivileged_userns"]; v == "1" {
		return false, "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10 and later)",
			"give bwrap an AppArmor profile with the userns permission (see executor/bwrap's documentation), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
	}
	return true, "", ""
}

// tryUserns runs /bin/sh -c : in a new user and mount namespace, mapping
// the caller to uid 0 inside.
func tryUserns(uid int) error {
	cmd := exec.Command("/bin/sh", "-c", ":")
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	err := cmd.Run()
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// apparmorCheck reports Ubuntu's restriction of unprivileged user
// namespaces, which breaks bwrap for ordinary users.
func apparmorCheck(uid int) Check {
	c := Check{Name: "apparmor_userns", Details: map[string]string{}}
	v, ok := readSysctl("kernel/apparmor_restrict_unprivileged_userns")
	if !ok {
		c.Status, c.Summary = statusOK, "no restriction (the sysctl does not exist on this kernel)"
		return c
	}
	c.Details["kernel.apparmor_restrict_unprivileged_userns"] = v
	if v != "1" {
		c.Status, c.Summary = statusOK, "not restricted (kernel.apparmor_restrict_unprivileged_userns="+v+")"
		return c
	}
	c.Summary = "unprivileged user namespaces restricted"
	c.Fix = "give bwrap an AppArmor profile with the userns permission (see executor/bwrap's documentation), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
	if uid == 0 {
		c.Status = statusWarn
		c.Reason = "does not affect root, but bwrap fails for unprivileged users"
	} else {
		c.Status = statusUnavailable
		c.Reason = "bwrap cannot set up its user namespace unless an AppArmor profile allows it"
	}
	return c
}

// cgroupCheck reports the cgroup hierarchy mounted at /sys/fs/cgroup.
func cgroupCheck() Check {
	c := Check{Name: "cgroup", Details: map[string]string{}}
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		c.Status, c.Summary, c.Reason = statusUnavailable, "not mounted", "/sys/fs/cgroup: "+err.Error()
		c.Fix = "mount the cgroup2 file system at /sys/fs/cgroup (Docker needs cgroups for its pids and memory limits)"
		return c
	}
	switch int64(st.Type) {
	case unix.CGROUP2_SUPER_MAGIC:
		c.Status, c.Summary = statusOK, "v2 (unified)"
		c.Details["version"] = "2"
		if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil {
			c.Details["controllers"] = strings.TrimSpace(string(b))
		}
	case unix.TMPFS_MAGIC:
		var u unix.Statfs_t
		if unix.Statfs("/sys/fs/cgroup/unified", &u) == nil && int64(u.Type) == unix.CGROUP2_SUPER_MAGIC {
			c.Status, c.Summary = statusOK, "v1 with a v2 hierarchy (hybrid)"
			c.Details["version"] = "hybrid"
		} else {
			c.Status, c.Summary = statusOK, "v1 (legacy)"
			c.Details["version"] = "1"
		}
	default:
		c.Status, c.Summary = statusWarn, fmt.Sprintf("unknown file system type %#x", st.Type)
	}
	return c
}

// hostLandlockABI returns the kernel's Landlock ABI, 0 without Landlock.
func hostLandlockABI() int {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(abi)
}
