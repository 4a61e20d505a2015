package policyderive

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
)

// Placeholder mount points are host state a derivation takes in besides
// the tree: a mount-based sandbox (bwrap, a container runtime) makes an
// empty directory on the host to mount a placeholder on — the read-only
// .git of a fresh workspace, say — and it exists while any sandbox of the
// process uses it. A derivation that looked at the tree then would see an
// empty directory and mask and pin paths inside it (making more mount
// points there, which the protected-path guard would take for a planted
// .git/hooks). Given the live mount points (DeriveWith), it takes each
// for the placeholder it stands for instead, so that concurrent and
// successive sandboxes share one mount point and see the same thing.

// DeriveWith is DeriveCompiled with the placeholder mount points this
// process created on the host and still uses (mounts: each the
// placeholder Mask it stands for, as Profile.Placeholders returned it).
// A mount point lying in a write grant, where the derivation masked or
// pinned anything at or inside it (it saw the mount point's empty
// directory), is derived as the placeholder instead: what is inside it
// is neither masked, pinned, granted nor listed, and the placeholder's
// mask takes their place — the profile of the tree without the mount
// point, as a derivation before the sandbox made it found it.
func (d *Deriver) DeriveWith(ctx context.Context, c *policy.Checker, cwd string, grants []policy.Grant, mounts []Mask) (*Profile, error) {
	pr, err := d.DeriveCompiled(ctx, c, cwd, grants)
	if err != nil || len(mounts) == 0 {
		return pr, err
	}
	return overMountPoints(pr, mounts), nil
}

// overMountPoints is pr with the mount points it saw as directories
// derived as the placeholders they stand for.
func overMountPoints(pr *Profile, mounts []Mask) *Profile {
	var hits []Mask
	for _, m := range mounts {
		if !writableBelow(pr, m.Path) {
			continue
		}
		// pr was derived while m.Path existed: it masks or pins
		// something at or in it other than the placeholder itself.
		stale := slices.ContainsFunc(pr.Masks, func(k Mask) bool {
			return abspath.Within(k.Path, m.Path) && (k.Path != m.Path || k.Exists)
		}) || slices.ContainsFunc(pr.Pinned, func(d string) bool { return abspath.Within(d, m.Path) })
		if stale {
			hits = append(hits, m)
		}
	}
	if len(hits) == 0 {
		return pr
	}
	q := pr.clone()
	for _, h := range hits {
		q.Masks = slices.DeleteFunc(q.Masks, func(m Mask) bool { return abspath.Within(m.Path, h.Path) })
		q.Pinned = slices.DeleteFunc(q.Pinned, func(d string) bool { return abspath.Within(d, h.Path) })
		q.Read = slices.DeleteFunc(q.Read, func(a Access) bool { return abspath.Below(a.Path, h.Path) })
		q.Write = slices.DeleteFunc(q.Write, func(a Access) bool { return abspath.Below(a.Path, h.Path) })
		q.Exec = slices.DeleteFunc(q.Exec, func(a Access) bool { return abspath.Below(a.Path, h.Path) })
		q.Masks = append(q.Masks, h)
		// The listings show the tree without the mount point.
		q.Dirs = slices.DeleteFunc(q.Dirs, func(l Listing) bool { return abspath.Within(l.Path, h.Path) })
		parent, name := filepath.Dir(h.Path), filepath.Base(h.Path)
		for i, l := range q.Dirs {
			if l.Path != parent {
				continue
			}
			es := slices.DeleteFunc(slices.Clone(l.Entries), func(e Entry) bool { return e.Name == name })
			if len(es) == 0 {
				es = nil
			}
			q.Dirs[i].Entries = es
		}
	}
	slices.SortFunc(q.Masks, func(a, b Mask) int { return strings.Compare(a.Path, b.Path) })
	return q
}

// writableBelow reports whether p lies strictly inside a write grant of pr.
func writableBelow(pr *Profile, p string) bool {
	return slices.ContainsFunc(pr.Write, func(a Access) bool {
		return a.Exists && a.Dir && a.Special == SpecialNone && abspath.Below(p, a.Path)
	})
}
