package docker

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cordon-sandbox/cordon/policyderive"
)

// mountPoints counts, process-wide, the containers using each placeholder
// mount point that the container runtime creates on the host (the
// read-only placeholder for .git in a fresh workspace, say: the runtime
// makes an empty directory in the workspace to mount it on), so that the
// last one to be removed removes it — and only if this process created
// it: removing a mount point while another container still uses it would
// detach that container's mount.
//
// While a mount point exists, a derivation sees it as an empty directory
// and would mask and pin paths inside it. overMountPoints gives such a
// profile the placeholder itself instead, so the mounts (and with them
// the container) stay the same from one command to the next.
var mountPoints = &mountRegistry{m: map[string]*mountPoint{}}

type mountRegistry struct {
	sync.Mutex
	m map[string]*mountPoint
}

type mountPoint struct {
	users   int
	created bool
	mask    policyderive.Mask
}

// inUse reports whether a container of this process uses p.
func (r *mountRegistry) inUse(p string) bool {
	r.Lock()
	defer r.Unlock()
	mp := r.m[p]
	return mp != nil && mp.users > 0
}

// overMountPoints returns pr with every live mount point created by this
// process that pr masks or pins inside (because it derived while the
// mount point existed) replaced by the placeholder mask it stands for.
// The caller holds the registry.
func (r *mountRegistry) overMountPoints(pr *policyderive.Profile) *policyderive.Profile {
	var hits []policyderive.Mask
	for p, mp := range r.m {
		if !mp.created || mp.users == 0 || !writableBelow(pr, p) {
			continue
		}
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

// writableBelow reports whether p lies strictly inside a write grant of pr.
func writableBelow(pr *policyderive.Profile, p string) bool {
	return slices.ContainsFunc(pr.Write, func(a policyderive.Access) bool {
		return a.Exists && a.Dir && a.Special == policyderive.SpecialNone && below(p, a.Path)
	})
}

// acquire registers the placeholders of one container. A path that does
// not exist yet is marked as created by this process (the runtime is
// about to create it). The caller holds the registry.
func (r *mountRegistry) acquire(masks []policyderive.Mask) {
	for _, m := range masks {
		mp := r.m[m.Path]
		if mp == nil {
			mp = &mountPoint{mask: m}
			if _, err := os.Lstat(m.Path); errors.Is(err, fs.ErrNotExist) {
				mp.created = true
			}
			r.m[m.Path] = mp
		}
		mp.users++
	}
}

// release ends one container's use of its placeholders and removes those
// no container uses any more that this process created. Removal is
// rmdir: a directory something was put into since stays. It returns the
// paths it could not remove.
func (r *mountRegistry) release(masks []policyderive.Mask) []string {
	if len(masks) == 0 {
		return nil
	}
	r.Lock()
	defer r.Unlock()
	var left []string
	// Deepest first, so a placeholder inside another goes before it.
	for i := len(masks) - 1; i >= 0; i-- {
		p := masks[i].Path
		mp := r.m[p]
		if mp == nil {
			continue
		}
		if mp.users--; mp.users > 0 {
			continue
		}
		delete(r.m, p)
		if !mp.created {
			continue
		}
		if err := removeMountPoint(p); err != nil {
			left = append(left, p+": "+err.Error())
		}
	}
	return left
}
