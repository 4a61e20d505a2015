package backend

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// Placeholder mount points: the Registry keeps track of those a
// mount-based sandbox makes its tool create on the host: the read-only
// placeholder for .git in a fresh workspace, say, for which bubblewrap or
// the container runtime makes an empty directory to mount on. A Registry
// counts the sandboxes using each one, so that the last to end removes it
// — and only if this process created it: removing a mount point while
// another sandbox still uses it would detach that sandbox's mount.
//
// While a mount point exists, a derivation sees it as an empty directory
// and would mask and pin paths inside it (creating more mount points
// there, which the protected-path guard would then take for planted
// .git/hooks). Over gives such a profile the placeholder itself instead,
// so concurrent and successive sandboxes share one mount point and see
// the same thing.

// Registry counts the users of placeholder mount points. The zero value
// is not usable: call New. Lock it around Over and Acquire (with the
// start that uses the result); Release and InUse lock it themselves.
type Registry struct {
	sync.Mutex
	m map[string]*entry
}

type entry struct {
	users   int
	created bool
	mask    policyderive.Mask
}

// New returns an empty registry.
func New() *Registry { return &Registry{m: map[string]*entry{}} }

// Default is the process-wide registry every backend uses: a placeholder
// one backend's sandbox created may be used by another's (bwrap and
// docker on one workspace), and only one count can say when the last
// user is gone.
var Default = New()

// InUse reports whether a sandbox of this process uses p.
func (r *Registry) InUse(p string) bool {
	r.Lock()
	defer r.Unlock()
	e := r.m[p]
	return e != nil && e.users > 0
}

// Over returns pr with every live mount point created by this process
// that pr masks or pins inside (because it was derived while the mount
// point existed) replaced by the placeholder mask it stands for. The
// caller holds r.
func (r *Registry) Over(pr *policyderive.Profile) *policyderive.Profile {
	var hits []policyderive.Mask
	for p, e := range r.m {
		if !e.created || e.users == 0 || !writableBelow(pr, p) {
			continue
		}
		// pr was derived while p existed: it masks or pins something at
		// or in p other than the placeholder itself.
		stale := slices.ContainsFunc(pr.Masks, func(m policyderive.Mask) bool {
			return abspath.Within(m.Path, p) && (m.Path != p || m.Exists)
		}) || slices.ContainsFunc(pr.Pinned, func(d string) bool { return abspath.Within(d, p) })
		if stale {
			hits = append(hits, e.mask)
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
		q.Masks = slices.DeleteFunc(q.Masks, func(m policyderive.Mask) bool { return abspath.Within(m.Path, h.Path) })
		q.Pinned = slices.DeleteFunc(q.Pinned, func(d string) bool { return abspath.Within(d, h.Path) })
		q.Read = slices.DeleteFunc(q.Read, func(a policyderive.Access) bool { return abspath.Below(a.Path, h.Path) })
		q.Write = slices.DeleteFunc(q.Write, func(a policyderive.Access) bool { return abspath.Below(a.Path, h.Path) })
		q.Masks = append(q.Masks, h)
	}
	slices.SortFunc(q.Masks, func(a, b policyderive.Mask) int { return strings.Compare(a.Path, b.Path) })
	return &q
}

// writableBelow reports whether p lies strictly inside a write grant of pr.
func writableBelow(pr *policyderive.Profile, p string) bool {
	return slices.ContainsFunc(pr.Write, func(a policyderive.Access) bool {
		return a.Exists && a.Dir && a.Special == policyderive.SpecialNone && abspath.Below(p, a.Path)
	})
}

// Acquire registers the placeholders of one sandbox. A path that does not
// exist yet is marked as created by this process (the sandbox tool is
// about to create it). The caller holds r.
func (r *Registry) Acquire(masks []policyderive.Mask) {
	for _, m := range masks {
		e := r.m[m.Path]
		if e == nil {
			e = &entry{mask: m}
			if _, err := os.Lstat(m.Path); errors.Is(err, fs.ErrNotExist) {
				e.created = true
			}
			r.m[m.Path] = e
		}
		e.users++
	}
}

// Release ends one sandbox's use of its placeholders and removes those no
// sandbox uses any more that this process created (Remove: an empty
// directory only, never through a symbolic link). It returns the paths it
// could not remove, with the reason.
func (r *Registry) Release(masks []policyderive.Mask) []string {
	if len(masks) == 0 {
		return nil
	}
	r.Lock()
	defer r.Unlock()
	var left []string
	// Deepest first, so a placeholder inside another goes before it.
	for i := len(masks) - 1; i >= 0; i-- {
		p := masks[i].Path
		e := r.m[p]
		if e == nil {
			continue
		}
		if e.users--; e.users > 0 {
			continue
		}
		delete(r.m, p)
		if !e.created {
			continue
		}
		if err := Remove(p); err != nil {
			left = append(left, p+": "+err.Error())
		}
	}
	return left
}
