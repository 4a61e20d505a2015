//go:build linux

package landlock

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"unsafe"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/internal/seccompbpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

const supported = true

// detect probes the kernel's Landlock ABI and errata and whether seccomp
// filters can be installed.
func detect() features {
	f := features{arch: runtime.GOARCH, errata: -1}
	if v, err := ll.LandlockGetABIVersion(); err == nil && v > 0 {
		f.abi = v
		if e, err := ll.LandlockGetErrata(); err == nil {
			f.errata = e
		}
	}
	f.mounts, f.mountsWhy = detectMounts()
	f.cgroup, f.cgroupWhy = cgroupBase()
	if err := netallow.Check(); err != nil {
		f.netnsWhy = err.Error()
		if f.mounts == mountsUserNS {
			if err := trialChildNet(); err != nil {
				f.childNetWhy = err.Error()
			}
		}
	}
	if !seccompbpf.Supported(runtime.GOARCH) {
		f.seccompWhy = "no system call table for " + runtime.GOARCH
		return f
	}
	action := uint32(unix.SECCOMP_RET_ERRNO)
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); e != 0 {
		f.seccompWhy = fmt.Sprintf("seccomp(SECCOMP_GET_ACTION_AVAIL): %v", e)
		return f
	}
	f.seccomp = true
	return f
}

// landlockFileRights are the rights a rule on a non-directory may carry.
const landlockFileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev

// procAccess is what the /proc rule grants: reading and listing.
const procAccess = ll.AccessFSReadFile | ll.AccessFSReadDir

// newRuleset builds the plan's Landlock ruleset and seccomp filter in this
// (unrestricted) process, for the sandbox helper to apply to itself (see
// Init): no_new_privs, no capabilities, the filter, then
// landlock_restrict_self, and then the exec of the command.
func newRuleset(pl *plan, log *slog.Logger) (*ruleset, error) {
	ins, err := seccompbpf.Build(pl.filter.spec(), runtime.GOARCH)
	if err != nil {
		return nil, err
	}
	var prog []unix.SockFilter
	for _, i := range ins {
		prog = append(prog, unix.SockFilter{Code: i.Code, Jt: i.Jt, Jf: i.Jf, K: i.K})
	}
	out := &ruleset{filter: encodeFilter(prog), mounts: pl.mounts}
	if pl.mounts != mountsNone {
		out.writable, out.masks = existingRegions(pl.mountTops, pl.mountMasks)
		out.plan, out.maskReach = pl, map[string]bool{}
		for _, m := range out.masks {
			for a := m; !out.maskReach[a]; a = abspath.Parent(a) {
				out.maskReach[a] = true
				if a == "/" {
					break
				}
			}
		}
	}
	rs := pl.ruleset
	if rs.ABI == 0 {
		return out, nil
	}
	var netRules []landlock.Rule
	for _, nr := range rs.Net {
		if nr.Access&ll.AccessNetBindTCP != 0 {
			netRules = append(netRules, landlock.BindTCP(nr.Port))
		}
		if nr.Access&ll.AccessNetConnectTCP != 0 {
			netRules = append(netRules, landlock.ConnectTCP(nr.Port))
		}
	}
	fd, flags, err := rs.Config().NewRulesetFD(netRules...)
	if err != nil {
		return nil, fmt.Errorf("creating the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		// The plan counted on a Landlock layer: never run without one.
		return nil, fmt.Errorf("creating the Landlock ruleset: no ruleset for ABI %d", rs.ABI)
	}
	for _, r := range rs.FS {
		if r.PerProcess {
			continue
		}
		if err := addPathRule(fd, r.Path, r.Access, log); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	if pl.procRule {
		if err := addPathRule(fd, "/proc", procAccess&rs.HandledFS, log); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	out.file = os.NewFile(uintptr(fd), "landlock-ruleset")
	out.flags = flags
	return out, nil
}

// addPathRule grants access beneath path. The path is opened without
// following any symbolic link (openat2 RESOLVE_NO_SYMLINKS): the
// derivation resolved every path, so a link found now appeared since, and
// granting through it would grant its target. Such a path, and a missing
// one, is skipped: it grants nothing.
func addPathRule(rulesetFD int, path string, access landlock.AccessFSSet, log *slog.Logger) error {
	if access == 0 {
		return nil
	}
	pfd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		return nil
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV):
		log.Warn("landlock: not granting a path that is now reached through a symbolic link", "path", path)
		return nil
	case err != nil:
		return fmt.Errorf("opening %q for a Landlock rule: %w", path, err)
	}
	defer unix.Close(pfd)
	attr := ll.PathBeneathAttr{AllowedAccess: uint64(access), ParentFd: pfd}
	err = ll.LandlockAddPathBeneathRule(rulesetFD, &attr, 0)
	if errors.Is(err, unix.EINVAL) && access&^landlockFileRights != 0 {
		// A directory became a file since the derivation: grant only
		// what a file can carry.
		if access &= landlockFileRights; access == 0 {
			return nil
		}
		attr.AllowedAccess = uint64(access)
		err = ll.LandlockAddPathBeneathRule(rulesetFD, &attr, 0)
	}
	if err != nil {
		return fmt.Errorf("populating the Landlock ruleset for %q with access %v: %w", path, access, err)
	}
	return nil
}

// restrictThread runs in the sandbox helper before it executes the
// command, on its locked thread: it drops every
// capability, sets no_new_privs, installs the seccomp filter and enforces
// the Landlock ruleset, each for the calling thread only.
func restrictThread(rulesetFD int, flags uint32, prog []unix.SockFilter) error {
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if len(prog) > 0 {
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		// Flags 0: no SECCOMP_FILTER_FLAG_TSYNC, this thread only.
		_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
		runtime.KeepAlive(prog)
		if e != 0 {
			return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", e)
		}
	}
	if rulesetFD >= 0 {
		// No LANDLOCK_RESTRICT_SELF_TSYNC: this thread only.
		if err := ll.LandlockRestrictSelf(rulesetFD, flags); err != nil {
			return fmt.Errorf("landlock_restrict_self: %w", err)
		}
	}
	return nil
}

// dropCapabilities empties the calling thread's bounding set (when it may:
// CAP_SETPCAP), ambient, inheritable, permitted and effective sets. With
// the bounding set empty, even uid 0 gains no capability at execve.
func dropCapabilities() error {
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the last capability
		}
		if errors.Is(err, unix.EPERM) {
			break // no CAP_SETPCAP: an unprivileged host holds none anyway
		}
		if err != nil {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// fileID returns the device and inode of path, not following a final
// symbolic link.
func fileID(path string) (dev, ino uint64, ok bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return 0, 0, false
	}
	return st.Dev, st.Ino, true
}
