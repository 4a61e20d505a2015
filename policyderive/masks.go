package policyderive

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
)

// Masks and pins: what a mask is made of (literal, consider,
// placeholder), pruning masks and grants, and the directories pinned
// around masks.

// literal handles a literal path of a non-permitting rule: a mask when it
// exists, a placeholder when it does not.
func (dv *derivation) literal(path string, r policy.Rule) {
	fi, err := os.Lstat(path)
	if err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return
		}
		dv.consider(path, !fi.IsDir(), r)
		return
	}
	if !nonPermitting(r, policy.Write) {
		return
	}
	dv.placeholder(path, r)
}

// consider masks an existing path when it lies in a grant whose op the
// policy does not permit there.
func (dv *derivation) consider(path string, file bool, r policy.Rule) {
	needRead := dv.inRegion(path, policy.Read) && !dv.permitted(path, policy.Read)
	needWrite := dv.inRegion(path, policy.Write) && !dv.permitted(path, policy.Write)
	if !needRead && !needWrite {
		return
	}
	kind, op := ReadOnly, policy.Write
	if needRead {
		kind, op = Hide, policy.Read
	}
	v := dv.c.DecideResolved(path, op)
	dv.addMask(Mask{Path: path, Kind: kind, Dir: !file, Exists: true, Rule: v.Rule, Reason: reasonOf(v.Rule, kind)})
}

func reasonOf(rule string, kind MaskKind) string {
	switch {
	case strings.HasPrefix(rule, "protect"):
		return "protected"
	case kind == Hide:
		return "denied"
	}
	return "not writable"
}

// placeholder covers the missing path target, which a write-denying rule
// names, with a read-only empty directory at its first missing component
// when that component could be created in a write grant.
func (dv *derivation) placeholder(target string, r policy.Rule) {
	if dv.permitted(target, policy.Write) {
		return
	}
	first := target
	for {
		par := abspath.Parent(first)
		fi, err := os.Lstat(par)
		if err == nil {
			if !fi.IsDir() {
				return // something that is not a directory is in the way
			}
			break
		}
		if par == first {
			return
		}
		first = par
	}
	if !dv.inRegion(abspath.Parent(first), policy.Write) || !dv.inRegion(first, policy.Write) {
		return
	}
	if filepath.Base(first) == ".git" && r.List == "protect" {
		// A new repository (git init, git clone): the guard sanitizes
		// a git directory the command creates (its hooks removed, its
		// config kept to safe keys) before anything else runs it, as
		// it does in every other directory.
		return
	}
	kind := ReadOnly
	if !dv.permitted(target, policy.Read) && dv.inRegion(first, policy.Read) {
		kind = Hide
	}
	v := dv.c.DecideResolved(target, policy.Write)
	dv.addMask(Mask{Path: first, Kind: kind, Dir: true, Exists: false, Rule: v.Rule, Reason: reasonOf(v.Rule, kind), For: target})
}

// addMask records m, keeping the stricter kind when a path is masked
// twice.
func (dv *derivation) addMask(m Mask) {
	if old := dv.masks[m.Path]; old != nil {
		if m.Kind == Hide && old.Kind != Hide {
			old.Kind, old.Rule, old.Reason = Hide, m.Rule, m.Reason
		}
		if !m.Exists && old.For != "" && old.For != m.For && !strings.Contains(old.For, m.For) {
			old.For += ", " + m.For
		}
		return
	}
	dv.masks[m.Path] = &m
}

// pruneMasks drops masks another mask already covers (a hidden tree
// covers everything below it, a read-only one covers read-only masks)
// unless a grant between them opens the tree again, and returns the rest
// sorted by path.
func (dv *derivation) pruneMasks() []Mask {
	all := make([]Mask, 0, len(dv.masks))
	for _, m := range dv.masks {
		all = append(all, *m)
	}
	slices.SortFunc(all, func(a, b Mask) int { return strings.Compare(a.Path, b.Path) })
	grants := slices.Concat(dv.read, dv.write)
	var out []Mask
	// kept indexes out by path: only a mask's ancestors can cover it, so
	// each mask looks up its ancestors (its depth) rather than every mask
	// kept (thousands in a node_modules of certificates).
	kept := map[string]int{}
	for _, m := range all {
		covered := false
		for p := abspath.Parent(m.Path); !covered; p = abspath.Parent(p) {
			if i, ok := kept[p]; ok && p != m.Path {
				a := out[i]
				// A placeholder is covered by any mask: nothing can be
				// created below one.
				if !(a.Kind != Hide && m.Kind == Hide && m.Exists) {
					reopened := false
					for _, g := range grants {
						if abspath.Below(g.Path, a.Path) && abspath.Within(m.Path, g.Path) {
							reopened = true
							break
						}
					}
					covered = !reopened
				}
			}
			if p == "/" {
				break
			}
		}
		if !covered {
			kept[m.Path] = len(out)
			out = append(out, m)
		}
	}
	return out
}

// pruneGrants drops grants nested in another grant of the same list when
// no mask lies between them, and grants of paths that do not exist are
// kept (renderers skip them) so that the profile says what was asked.
func (dv *derivation) pruneGrants(list []Access, masks []Mask) []Access {
	var out []Access
	for _, a := range list {
		redundant := false
		for _, b := range list {
			// A grant below "/" is kept: containers cannot bind "/".
			if b.Path == a.Path || b.Path == "/" || !abspath.Below(a.Path, b.Path) || b.Special != a.Special {
				continue
			}
			between := false
			for _, m := range masks {
				if abspath.Below(m.Path, b.Path) && abspath.Within(a.Path, m.Path) {
					between = true
					break
				}
			}
			if !between {
				redundant = true
				break
			}
		}
		if !redundant || a.Source == "root" {
			out = append(out, a)
		}
	}
	return out
}

// pins returns the directories between a writable grant and a mask:
// mount backends bind each onto itself so that it cannot be renamed or
// removed (which would move the mask away from the path it guards).
func pins(pr *Profile) []string {
	// What starts at each path: 1 a read grant, 2 a write grant, 3 a mask
	// (a mask overrides a grant at the same path, as boundary does).
	kind := map[string]int{}
	for _, a := range pr.Read {
		if a.Exists {
			kind[a.Path] = max(kind[a.Path], 1)
		}
	}
	for _, a := range pr.Write {
		if a.Exists {
			kind[a.Path] = max(kind[a.Path], 2)
		}
	}
	for _, m := range pr.Masks {
		kind[m.Path] = 3
	}
	set := map[string]bool{}
	for _, m := range pr.Masks {
		for d := abspath.Parent(m.Path); ; d = abspath.Parent(d) {
			if k, ok := kind[d]; ok && d != m.Path {
				if k == 2 {
					for q := abspath.Parent(m.Path); q != d; q = abspath.Parent(q) {
						set[q] = true
					}
				}
				break
			}
			if d == "/" {
				break
			}
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// boundary returns the deepest grant or mask strictly above p, and
// whether the region it starts is writable (a write grant, not masked).
func boundary(pr *Profile, p string) (top string, writable bool) {
	best := -1
	consider := func(q string, w bool) {
		if !abspath.Below(p, q) {
			return
		}
		if d := abspath.Depth(q); d > best || (d == best && !w) {
			best, top, writable = d, q, w
		}
	}
	for _, a := range pr.Read {
		if a.Exists {
			consider(a.Path, false)
		}
	}
	for _, a := range pr.Write {
		if a.Exists {
			consider(a.Path, true)
		}
	}
	// A write grant and a read grant at the same path: writable.
	for _, a := range pr.Write {
		if a.Exists && a.Path == top {
			writable = true
		}
	}
	for _, m := range pr.Masks {
		if abspath.Below(p, m.Path) && abspath.Depth(m.Path) >= best {
			best, top, writable = abspath.Depth(m.Path), m.Path, false
		}
	}
	return top, writable
}

// listings reads the directories between each grant and the masks below
// it, which a Landlock rendering grants child by child.
func listings(pr *Profile, lc *listCache) []Listing {
	set := map[string]bool{}
	for _, m := range pr.Masks {
		for _, a := range slices.Concat(pr.Read, pr.Write) {
			if !a.Exists || !a.Dir || !abspath.Below(m.Path, a.Path) {
				continue
			}
			if m.Kind != Hide && !slices.ContainsFunc(pr.Write, func(w Access) bool { return w.Path == a.Path }) {
				continue // a read-only mask does not restrict a read grant
			}
			for d := abspath.Parent(m.Path); abspath.Within(d, a.Path); d = abspath.Parent(d) {
				set[d] = true
				if d == "/" {
					break
				}
			}
		}
	}
	dirs := make([]string, 0, len(set))
	for d := range set {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	out := make([]Listing, 0, len(dirs))
	for _, d := range dirs {
		out = append(out, lc.list(d))
	}
	return out
}
