//go:build linux

package landlock

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// A command started as root gets a mount namespace of its own in which
// every mount outside its writable grants is read-only: Landlock does not
// mediate chmod, chown, utimes or extended attributes, and root could
// otherwise change the mode of any file on the host (chmod 4777 of a
// root-owned binary). No user namespace is needed: root may unshare
// CLONE_NEWNS. The child (cordon_spawn, or the helper) makes every
// mount private to the namespace, binds each writable grant onto itself
// (recursively, so it and the mounts below it keep their flags) and then
// remounts every other mount point read-only with MS_BIND, which changes
// that mount's flags in the new namespace only, never the file system's.
// The mounts' own nosuid, nodev, noexec and atime flags are kept. /proc
// is remounted too: proc refuses chmod of /proc/PID and /proc/sys
// entries, but root may chmod its generic entries (/proc/version,
// /proc/sysrq-trigger), and Landlock grants no writes there anyway.
// autofs mount points are skipped, as touching them would mount.

// mountPlan is what the child does in its mount namespace.
type mountPlan struct {
	// writable are the top writable grants, bound onto themselves.
	writable []string
	// readonly are the mount points remounted read-only, with their
	// per-mount flags (MS_NOSUID, ...) in flags.
	readonly []string
	flags    []uintptr
}

// detectMounts says how commands get their mount namespace here, once
// per process: as root (CAP_SYS_ADMIN) by unshare alone; otherwise in a
// user namespace, when a trial command started that way (the same start
// path as every command, the mounts of this host) succeeds — user
// namespaces may be disabled (a sysctl), or allowed without capabilities
// (Ubuntu 24.04's AppArmor policy).
var detectMounts = sync.OnceValues(func() (mountMode, string) {
	if canMountNS() {
		return mountsRoot, ""
	}
	if err := trialMounts(); err != nil {
		return mountsNone, fmt.Sprintf("no CAP_SYS_ADMIN (not root), and a user namespace for the mounts does not work here: %v", err)
	}
	return mountsUserNS, ""
})

// canMountNS reports whether this process may make a mount namespace
// without a user namespace: CAP_SYS_ADMIN in the initial one (root).
func canMountNS() bool {
	if os.Geteuid() != 0 {
		return false
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_SYS_ADMIN) != 0
}

// trialMounts starts `sh -c :` in a user and mount namespace with the
// mount plan of a command whose only writable grant is the temporary
// directory, and reports whether it ran.
func trialMounts() error { return trial(nil) }

// trialChildNet starts `sh -c :` the way a command under the network
// allow-list starts where this process cannot make network namespaces:
// its child unshares one with its user and mount namespaces and hands a
// listener over. It reports whether that worked.
func trialChildNet() error {
	got := false
	h, err := newNetHandoff(func(l net.Listener) error { got = true; return l.Close() })
	if err != nil {
		return err
	}
	defer h.close()
	if err := trial(h); err != nil {
		return err
	}
	if !got {
		return errors.New("the trial command's child handed over no listener")
	}
	return nil
}

// trial starts `sh -c :` in a user and mount namespace (and with h a
// network namespace whose listener comes over h) and waits for it.
func trial(h *netHandoff) error {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return err
	}
	rs := &ruleset{filter: "-", mounts: mountsUserNS, writable: []string{tmp}}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	files := []*os.File{null, null, null}
	var p *os.Process
	if canSpawn {
		p, err = spawner(rs, "", h)(executor.Shell, []string{"sh", "-c", ":"}, &os.ProcAttr{Files: files, Sys: &syscall.SysProcAttr{Setsid: true}})
	} else {
		p, err = startHelperTrial(rs, files, h)
	}
	if err != nil {
		return err
	}
	st, err := p.Wait()
	if err != nil {
		return err
	}
	if !st.Success() {
		return fmt.Errorf("the trial command exited with %v", st)
	}
	return nil
}

// startHelperTrial is trialMounts (h nil) or trialChildNet through the
// sandbox helper (no cgo).
func startHelperTrial(rs *ruleset, files []*os.File, h *netHandoff) (*os.Process, error) {
	mp, err := newMountPlan(rs.writable)
	if err != nil {
		return nil, err
	}
	ef, err := envFile(nil)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	sr, sw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer sr.Close()
	netFD := -1
	if h != nil {
		netFD = len(files)
		files = append(files, h.child)
	}
	args := helperArgs(-1, 0, "-", encodeMounts(mp), "-", netFD, len(files), len(files)+1, executor.Shell, []string{"sh", "-c", ":"})
	attr := &os.ProcAttr{Env: []string{}, Files: append(files, ef, sw), Sys: &syscall.SysProcAttr{Setsid: true}}
	p, err := userNSStart(rs, h)("/proc/self/exe", args, attr)
	sw.Close()
	if err != nil {
		return nil, err
	}
	if err := readStatus(sr); err != nil {
		p.Wait()
		return nil, err
	}
	return p, nil
}

// userNSStart returns a procgroup StartProcess for the sandbox helper:
// for mountsUserNS it starts the helper in a new user namespace that maps
// the caller's uid and gid to themselves, with CAP_SYS_ADMIN as an
// ambient capability so that it survives the exec of the helper (which
// makes the mount namespace, then drops every capability before the
// command); otherwise os.StartProcess.
//
// With h the helper starts in a network namespace of its own too (with
// CAP_NET_ADMIN there, to bring lo up) and hands its proxy listener over
// h, which serves it before the start returns.
func userNSStart(rs *ruleset, h *netHandoff) func(name string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	return func(name string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
		if h != nil && rs.mounts != mountsUserNS {
			return nil, fmt.Errorf("landlock: starting %s: a network namespace of the command's own needs the user-namespace mounts", name)
		}
		if rs.mounts == mountsUserNS {
			sys := *attr.Sys
			sys.Cloneflags |= syscall.CLONE_NEWUSER
			sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
			sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
			sys.GidMappingsEnableSetgroups = false
			sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
			if h != nil {
				sys.Cloneflags |= syscall.CLONE_NEWNET
				sys.AmbientCaps = append(sys.AmbientCaps, unix.CAP_NET_ADMIN)
			}
			a := *attr
			a.Sys = &sys
			attr = &a
		}
		p, err := os.StartProcess(name, argv, attr)
		if err == nil && h != nil {
			if err = h.receive(); err != nil {
				killStarted(p)
				return nil, fmt.Errorf("landlock: starting %s: %w", name, err)
			}
		}
		return p, err
	}
}

// writeRights are the Landlock rights that make a rule a writable grant.
const writeRights = ll.AccessFSWriteFile | ll.AccessFSMakeReg | ll.AccessFSMakeDir | ll.AccessFSRemoveFile | ll.AccessFSRemoveDir

// writableTops returns the top writable grants of rs, the paths a mount
// plan binds onto themselves: directories and regular files (devices work
// on read-only mounts), nested ones dropped. It runs once per ruleset: the
// ruleset's key names each rule's inode, so a path replaced since gets a
// new ruleset.
func writableTops(rs *policyderive.LandlockRuleset) []string {
	var writable []string
	for _, r := range rs.FS {
		if r.PerProcess || r.Access&writeRights == 0 || abspath.Within(r.Path, "/dev") || abspath.Within(r.Path, "/proc") {
			continue
		}
		fi, err := os.Lstat(r.Path)
		if err != nil || (!fi.IsDir() && !fi.Mode().IsRegular()) {
			continue // a missing grant grants nothing
		}
		writable = append(writable, r.Path)
	}
	return abspath.Tops(writable)
}

// newMountPlan returns the mount plan for the top writable grants and the
// mounts this process sees now (read before every command: mounts come
// and go).
func newMountPlan(top []string) (*mountPlan, error) {
	mounts, err := mountinfo.GetMounts(nil)
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	flags := map[string]uintptr{}
	var order []string
	for _, m := range mounts {
		p := m.Mountpoint
		if m.FSType == "autofs" || abspath.WithinAny(p, top) {
			continue
		}
		if _, ok := flags[p]; !ok {
			order = append(order, p)
		}
		flags[p] = mountFlags(m.Options) // the last mount at a path is the visible one
	}
	pl := &mountPlan{writable: top}
	for _, p := range order {
		pl.readonly = append(pl.readonly, p)
		pl.flags = append(pl.flags, flags[p])
	}
	return pl, nil
}

// keptFlags are the per-mount flags, by their mountinfo names, that a
// read-only bind remount must keep.
var keptFlags = map[string]uintptr{
	"nosuid": unix.MS_NOSUID, "nodev": unix.MS_NODEV, "noexec": unix.MS_NOEXEC,
	"noatime": unix.MS_NOATIME, "nodiratime": unix.MS_NODIRATIME, "relatime": unix.MS_RELATIME, "strictatime": unix.MS_STRICTATIME,
}

// mountFlags returns the flags of a mountinfo options field that a
// read-only bind remount must keep.
func mountFlags(opts string) uintptr {
	var f uintptr
	for o := range strings.SplitSeq(opts, ",") {
		f |= keptFlags[o]
	}
	return f
}

// apply makes the mount namespace of the calling thread, which must be
// locked to it and must exec next (the helper's path; cordon_spawn does
// the same in C).
func (pl *mountPlan) apply() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNS): %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	for _, w := range pl.writable {
		if err := unix.Mount(w, w, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding the writable grant %s: %w", w, err)
		}
	}
	for i, p := range pl.readonly {
		err := unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|pl.flags[i], "")
		// ENOENT, EINVAL: the mount is gone. EACCES: its path cannot
		// be walked by this user, so not by the command either.
		if err != nil && err != unix.ENOENT && err != unix.EINVAL && err != unix.EACCES {
			return fmt.Errorf("remounting %s read-only: %w", p, err)
		}
	}
	return nil
}
