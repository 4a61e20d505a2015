package policyderive

import (
	"cmp"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/abspath"
)

// mountKind is one kind of mount operation of a mount-based rendering.
type mountKind uint8

// Mount kinds, in the order they are applied at equal depth.
const (
	mountRO       mountKind = iota // read-only bind of the host path
	mountLink                      // a symbolic link in the sandbox's own root
	mountRW                        // read-write bind of the host path
	mountPin                       // read-write bind of a directory onto itself
	mountMaskRO                    // read-only bind (protected or not writable)
	mountMaskDir                   // an empty tmpfs, read-only once every mount is in place
	mountMaskFile                  // /dev/null bound read-only over a file
)

// mountOp is one mount of a mount-based rendering (bwrap, OCI).
type mountOp struct {
	kind   mountKind
	path   string // destination (and source, for binds)
	target string // link text, for mountLink
	source string // element name for the fidelity report
	// placeholder marks the mask of a path that does not exist.
	placeholder bool
}

// mountPlan returns the mounts of a profile for a mount backend, after
// the base (a bind of "/" when it is granted, /proc, /dev, /tmp): ordered
// by depth so that a deeper mount is applied after (and shadows) every
// mount above it — writable binds over read-only ones, masks over the
// grants they cut into, grants that re-open a masked tree over the mask.
// Nonexistent grants are skipped. System paths are skipped when system
// is false (a container image provides its own). When bindRoot is false
// (containers cannot bind the host's / over their root) a grant of "/"
// is left out and everything else is bound.
func mountPlan(pr *Profile, system, bindRoot bool) (ops []mountOp, rootBind mountKind, hasRoot bool) {
	rw := map[string]bool{}
	for _, a := range pr.Write {
		if a.Exists && a.Special == SpecialNone {
			rw[a.Path] = true
		}
	}
	for _, a := range pr.Read {
		if a.Path == "/" && a.Exists {
			hasRoot, rootBind = true, mountRO
		}
	}
	if rw["/"] {
		hasRoot, rootBind = true, mountRW
	}
	covered := hasRoot && bindRoot // everything is bound already
	// writeCovers reports whether a write grant's bind already covers p:
	// a write grant above it with no mask in between.
	writeCovers := func(p string) bool {
		for w := range rw {
			if !abspath.Within(p, w) || (w == "/" && (!bindRoot || abspath.Within(p, "/tmp"))) {
				continue
			}
			if !slices.ContainsFunc(pr.Masks, func(m Mask) bool { return abspath.Within(m.Path, w) && abspath.Within(p, m.Path) }) {
				return true
			}
		}
		return false
	}
	for _, a := range pr.Read {
		if !a.Exists || a.Special != SpecialNone || a.Path == "/" || writeCovers(a.Path) {
			continue
		}
		if a.Source == "system" && (!system || covered && !abspath.Within(a.Path, "/tmp")) {
			continue
		}
		ops = append(ops, mountOp{kind: mountRO, path: a.Path, source: a.Source})
	}
	if system && !covered {
		for _, l := range pr.Links {
			if abspath.Within(l.Path, "/dev") || abspath.Within(l.Path, "/proc") {
				continue
			}
			ops = append(ops, mountOp{kind: mountLink, path: l.Path, target: l.Target, source: "system"})
		}
	}
	for _, a := range pr.Write {
		if !a.Exists || a.Special != SpecialNone || a.Path == "/" {
			continue
		}
		ops = append(ops, mountOp{kind: mountRW, path: a.Path, source: a.Source})
	}
	for _, p := range pr.Pinned {
		if p == "/tmp" || p == "/proc" || p == "/dev" {
			continue // a base mount of the sandbox: not the host's, and a mount point already
		}
		ops = append(ops, mountOp{kind: mountPin, path: p, source: "pin"})
	}
	for _, m := range pr.Masks {
		k := mountMaskRO
		switch {
		case !m.Exists || (m.Kind == Hide && m.Dir):
			k = mountMaskDir
		case m.Kind == Hide:
			k = mountMaskFile
		}
		ops = append(ops, mountOp{kind: k, path: m.Path, source: "mask", placeholder: !m.Exists})
	}
	slices.SortStableFunc(ops, func(a, b mountOp) int {
		return cmp.Or(cmp.Compare(abspath.Depth(a.path), abspath.Depth(b.path)), cmp.Compare(a.kind, b.kind), strings.Compare(a.path, b.path))
	})
	// A placeholder is needed only where its parent is a writable host
	// bind in this plan; elsewhere nothing could create the path, and the
	// mount point would be made in a read-only bind (an error) or in a
	// tmpfs (pointless).
	out := ops[:0]
	for i, op := range ops {
		if op.placeholder && !writableAt(ops[:i], abspath.Parent(op.path), hasRoot && bindRoot && rootBind == mountRW) {
			continue
		}
		out = append(out, op)
	}
	return out, rootBind, hasRoot
}

// writableAt reports whether p is covered by a writable host bind after
// ops (the base: "/" bound read-write when rootRW, /tmp a tmpfs).
func writableAt(ops []mountOp, p string, rootRW bool) bool {
	for i := len(ops) - 1; i >= 0; i-- {
		if abspath.Within(p, ops[i].path) {
			return ops[i].kind == mountRW || ops[i].kind == mountPin
		}
	}
	return rootRW && !abspath.Within(p, "/tmp") && !abspath.Within(p, "/proc") && !abspath.Within(p, "/dev")
}
