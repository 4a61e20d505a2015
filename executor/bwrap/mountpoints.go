//go:build linux

package bwrap

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/policyderive"
)

// mountPoints counts, process-wide, the sandboxes using each placeholder
// mount point that bwrap creates on the host (the read-only placeholder
// for .git in a fresh workspace, say), so that the last one to end
// removes it — and only if a sandbox of this process created it:
// removing a mount point while another sandbox still uses it would
// detach that sandbox's mount.
//
// While a mount point exists, a concurrent derivation sees it as an
// empty directory and would mask and pin paths inside it (creating more
// mount points there, which the protected-path guard would then take for
// planted .git/hooks). overMountPoints gives such a profile the
// placeholder itself instead, so concurrent sandboxes share one mount
// point and see the same thing.
var mountPoints = struct {
	sync.Mutex
	m map[string]*mountPoint
}{m: map[string]*mountPoint{}}

type mountPoint struct {
	users   int
	created bool
	mask    policyderive.Mask
}

// overMountPoints returns pr with every live mount point created by this
// process that pr masks or pins inside (because it derived while the
// mount point existed) replaced by the placeholder mask it stands for.
// The caller holds mountPoints.
func overMountPoints(pr *policyderive.Profile) *policyderive.Profile {
	var hits []policyderive.Mask
	for p, mp := range mountPoints.m {
		if !mp.created || mp.users == 0 || !writable(pr, p) {
			continue
		}
		// pr derived while p existed: it masks or pins something at or
		// in p other than the placeholder itself.
		stale := slices.ContainsFunc(pr.Masks, func(m policyderive.Mask) bool {
			return within(m.Path, p) && (m.Path != p || m.Exists)
		}) || slices.ContainsFunc(pr.Pinned, func(d string) bool { return within(d, p) })
		if stale {
			hits = append(hits, mp.mask)
		}
	}
	if len(hits) == 0 {
		return pr
	}
	q := *pr
	q.Masks = slices.Clone(pr.Masks)
	q.Pinned = slices.Clone(pr.Pinned)
	q.Read = slices.Clone(pr.Read)
	q.Write = slices.Clone(pr.Write)
	for _, h := range hits {
		q.Masks = slices.DeleteFunc(q.Masks, func(m policyderive.Mask) bool { return within(m.Path, h.Path) })
		q.Pinned = slices.DeleteFunc(q.Pinned, func(d string) bool { return within(d, h.Path) })
		q.Read = slices.DeleteFunc(q.Read, func(a policyderive.Access) bool { return below(a.Path, h.Path) })
		q.Write = slices.DeleteFunc(q.Write, func(a policyderive.Access) bool { return below(a.Path, h.Path) })
		q.Masks = append(q.Masks, h)
	}
	slices.SortFunc(q.Masks, func(a, b policyderive.Mask) int { return strings.Compare(a.Path, b.Path) })
	return &q
}

// writable reports whether p lies strictly inside a write grant of pr.
func writable(pr *policyderive.Profile, p string) bool {
	return slices.ContainsFunc(pr.Write, func(a policyderive.Access) bool {
		return a.Exists && a.Dir && a.Special == policyderive.SpecialNone && below(p, a.Path)
	})
}

// acquireMountPoints registers the placeholders of one start. A path that
// does not exist yet is marked as created by this process (bwrap is
// about to create it). The caller holds mountPoints.
func acquireMountPoints(masks []policyderive.Mask) {
	for _, m := range masks {
		mp := mountPoints.m[m.Path]
		if mp == nil {
			mp = &mountPoint{mask: m}
			if _, err := os.Lstat(m.Path); errors.Is(err, os.ErrNotExist) {
				mp.created = true
			}
			mountPoints.m[m.Path] = mp
		}
		mp.users++
	}
}

// releaseMountPoints ends one start's use of its placeholders and removes
// those no sandbox uses any more that this process created. Removal is
// rmdir: a directory something was put into since stays. It returns the
// paths it could not remove.
func releaseMountPoints(masks []policyderive.Mask) []string {
	if len(masks) == 0 {
		return nil
	}
	mountPoints.Lock()
	defer mountPoints.Unlock()
	var left []string
	// Deepest first, so a placeholder inside another goes before it.
	for i := len(masks) - 1; i >= 0; i-- {
		p := masks[i].Path
		mp := mountPoints.m[p]
		if mp == nil {
			continue
		}
		if mp.users--; mp.users > 0 {
			continue
		}
		delete(mountPoints.m, p)
		if !mp.created {
			continue
		}
		if err := rmdirNoFollow(p); err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, unix.ENOTEMPTY) {
			left = append(left, p+": "+err.Error())
		}
	}
	return left
}

// rmdirNoFollow removes the empty directory p without following a
// symbolic link in any component: a command that replaced a parent by a
// link cannot point the removal elsewhere.
func rmdirNoFollow(p string) error {
	dir, name := filepath.Split(p)
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		return unix.Rmdir(p) // Linux < 5.6
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Unlinkat(fd, name, unix.AT_REMOVEDIR); err != nil {
		return &os.PathError{Op: "rmdir", Path: p, Err: err}
	}
	return nil
}

// below reports whether p lies strictly below dir.
func below(p, dir string) bool { return p != dir && within(p, dir) }
