package policyderive

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
)

// Unix sockets in the grants: found, and masked unless the policy names
// them.

// maxSocketEntries bounds the walk of /run for sockets.
const maxSocketEntries = 20000

// runDir is where the host's daemon sockets live; tests point it elsewhere
// so golden files do not depend on the host's running daemons.
var runDir = "/run"

// sockets hides the Unix sockets under /run when a read grant exposes
// /run: a read-only mount does not stop connect(2), and /run holds the
// sockets of system daemons (the Docker socket among them).
func (dv *derivation) sockets() {
	run, err := filepath.EvalSymlinks(runDir)
	if err != nil || !dv.inRegion(run, policy.Read) || dv.inRegion(run, policy.Write) {
		return
	}
	n := 0
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if n++; n > maxSocketEntries {
				return
			}
			p := abspath.Join(dir, e.Name())
			switch {
			case e.Type()&fs.ModeSocket != 0:
				if !dv.permitted(p, policy.Write) {
					dv.addMask(Mask{Path: p, Kind: Hide, Exists: true, Reason: "socket"})
				}
			case e.IsDir():
				walk(p)
			}
		}
	}
	walk(run)
	if n > maxSocketEntries {
		// Never silently: sockets past the bound stay reachable.
		dv.notes = append(dv.notes, Element{Class: Looser, Subject: "sockets under " + run, Control: policy.ControlNetUnix,
			Detail: fmt.Sprintf("%s holds more than %d entries; the Unix sockets past them are not hidden and can be connected to", run, maxSocketEntries),
			Reason: "the search for daemon sockets is bounded",
			Remedy: "grant narrower read trees than /run, or opt into best effort"})
	}
}

// socket hides the Unix socket p, found in a searched tree, unless the
// policy names it: a path rule allowing writes whose pattern is p itself,
// or an approved write grant of p. A grant of a directory holding sockets
// (the root included) grants its files, not the daemons listening there.
func (dv *derivation) socket(p string) {
	if !dv.inRegion(p, policy.Read) && !dv.inRegion(p, policy.Write) {
		return
	}
	if dv.socketNamed(p) {
		dv.named = append(dv.named, p)
		return
	}
	dv.addMask(Mask{Path: p, Kind: Hide, Exists: true, Reason: "socket"})
}

// socketNamed reports whether a path rule or an approved grant names the
// socket p by its own path.
func (dv *derivation) socketNamed(p string) bool {
	for _, g := range dv.grants {
		if g.Path == p && g.Op == policy.Write {
			return true
		}
	}
	return dv.ruleNames(p, policy.Write)
}

// ruleNames reports whether the path rule deciding op on p allows it and
// names p itself (a literal pattern of that path).
func (dv *derivation) ruleNames(p string, op policy.Op) bool {
	rel, inside := dv.c.Inside(p)
	i := firstRule(dv.rules, p, rel, inside, op)
	if i < 0 || dv.rules[i].Action != policy.Allow || !dv.rules[i].Pattern.Literal() {
		return false
	}
	lp, ok := dv.literalPath(dv.rules[i].Pattern)
	return ok && lp == p
}
