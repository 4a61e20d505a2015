//go:build linux

package landlock

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
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
	// writable are the top writable regions, bound onto themselves.
	writable []string
	// masks are paths inside them bound onto themselves after them (and
	// remounted read-only: they are in readonly too). A mask that is gone
	// is skipped.
	masks []string
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
		p, err = spawner(rs, "", h, nil)(executor.Shell, []string{"sh", "-c", ":"}, &os.ProcAttr{Files: files, Sys: &syscall.SysProcAttr{Setsid: true}})
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
	mp, err := newMountPlan(rs.writable, rs.masks)
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

// mountRegions returns what a command's mount namespace binds, as few
// mounts as the policy allows rather than one per Landlock rule: the top
// writable regions — the profile's write grants, and the ruleset's
// writable rules they hold — and the masks inside them that Landlock
// does not let the command write, which are bound onto themselves and
// remounted read-only (chmod, chown, utimes and extended attributes of
// them fail with EROFS, as everywhere outside the regions). A directory
// Landlock splits (Profile.Dirs) whose every entry is such a mask is one
// mask instead of one per entry (a fixtures directory of certificates).
//
// Landlock cannot deny one file inside a granted directory, so the
// ruleset grants every sibling of a denied file a rule of its own; binding
// each of those writable (the earlier plan) cost one mount per sibling —
// 30,000 mounts for a 100,000-file tree with a secret in every tenth
// directory. What the regions add over that plan is the metadata of the
// split directories themselves (the policy's write grant covers them:
// only their masked entries are denied) and of entries created in them
// after the profile was derived (their content stays out of reach: no
// Landlock rule names them).
func mountRegions(pr *policyderive.Profile, rs *policyderive.LandlockRuleset) (tops, masks []string) {
	writableRule := map[string]bool{}
	var cand []string
	for _, r := range rs.FS {
		// Device files (/dev/null) are filtered by existingRegions: a
		// write to a device node works on a read-only mount. A
		// directory below /dev (a root in /dev/shm) is a region.
		if r.PerProcess || r.Access&writeRights == 0 || abspath.Within(r.Path, "/proc") {
			continue
		}
		writableRule[r.Path] = true
		cand = append(cand, r.Path)
	}
	for _, a := range pr.Write {
		if a.Exists && !abspath.Within(a.Path, "/proc") {
			cand = append(cand, a.Path)
		}
	}
	tops = abspath.Tops(cand)
	topSet := map[string]bool{}
	for _, t := range tops {
		topSet[t] = true
	}
	// inside reports whether p lies strictly inside a top and outside
	// every writable rule.
	inside := func(p string) bool {
		for a := p; ; a = abspath.Parent(a) {
			if writableRule[a] {
				return false
			}
			if topSet[a] {
				return a != p
			}
			if a == "/" {
				return false
			}
		}
	}
	set := map[string]bool{}
	for _, m := range pr.Masks {
		if m.Exists && inside(m.Path) {
			set[m.Path] = true
		}
	}
	// Deepest split directories first, so a coalesced directory can make
	// its parent coalesce too.
	dirs := slices.Clone(pr.Dirs)
	slices.SortFunc(dirs, func(a, b policyderive.Listing) int {
		return cmp.Compare(strings.Count(b.Path, "/"), strings.Count(a.Path, "/"))
	})
	for _, d := range dirs {
		if len(d.Entries) == 0 || !inside(d.Path) {
			continue
		}
		all := true
		for _, e := range d.Entries {
			if !set[abspath.Join(d.Path, e.Name)] {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		for _, e := range d.Entries {
			delete(set, abspath.Join(d.Path, e.Name))
		}
		set[d.Path] = true
	}
	for m := range set {
		masks = append(masks, m)
	}
	return tops, abspath.Tops(masks)
}

// existingRegions keeps the tops and masks that exist now as directories
// or regular files: a missing grant grants nothing, and a mask that is a
// symbolic link or a special file cannot be bound onto itself (a bind
// follows the link; chmod of a link is not possible).
func existingRegions(tops, masks []string) (wr, mk []string) {
	ok := func(p string) bool {
		fi, err := os.Lstat(p)
		return err == nil && (fi.IsDir() || fi.Mode().IsRegular())
	}
	for _, t := range tops {
		if ok(t) {
			wr = append(wr, t)
		}
	}
	for _, m := range masks {
		if ok(m) {
			mk = append(mk, m)
		}
	}
	return wr, mk
}

// newMountPlan returns the mount plan for the top writable regions and
// the masks inside them, with the mounts this process sees now (read
// before every command: mounts come and go).
func newMountPlan(top, masks []string) (*mountPlan, error) {
	mounts, err := mountinfo.GetMounts(nil)
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	flags := map[string]uintptr{}
	var order []string
	for _, m := range mounts {
		p := m.Mountpoint
		// A mount inside a region stays writable, unless it lies inside
		// a mask too.
		if m.FSType == "autofs" || (abspath.WithinAny(p, top) && !abspath.WithinAny(p, masks)) {
			continue
		}
		if _, ok := flags[p]; !ok {
			order = append(order, p)
		}
		flags[p] = mountFlags(m.Options) // the last mount at a path is the visible one
	}
	pl := &mountPlan{writable: top, masks: masks}
	// The masks first (a mount inside a mask is remounted after it), each
	// with the flags of the mount that holds it.
	for _, m := range masks {
		pl.readonly = append(pl.readonly, m)
		pl.flags = append(pl.flags, flagsAt(m, flags))
	}
	for _, p := range order {
		pl.readonly = append(pl.readonly, p)
		pl.flags = append(pl.flags, flags[p])
	}
	return pl, nil
}

// flagsAt returns the flags of the mount holding p: the deepest mount
// point at or above it.
func flagsAt(p string, flags map[string]uintptr) uintptr {
	for a := p; ; a = abspath.Parent(a) {
		if f, ok := flags[a]; ok {
			return f
		}
		if a == "/" {
			return 0
		}
	}
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
	for _, m := range pl.masks {
		if err := unix.Mount(m, m, "", unix.MS_BIND|unix.MS_REC, ""); err != nil && err != unix.ENOENT {
			return fmt.Errorf("binding the mask %s: %w", m, err)
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
