//go:build unix

package protectguard

import (
	"maps"

	"github.com/cordon-sandbox/cordon/internal/abspath"
)

// inherited returns st, the fresh walk of a guard whose baseline is
// being taken, with every region that a running peer also guards
// replaced by that peer's baseline (see Cache): a command still running
// under the peer may have changed those regions since, and that must not
// become this guard's baseline. st itself (the guard's last walk) is
// left as it is.
func (g *Guard) inherited(st *state) *state {
	if g.peers == nil {
		return st
	}
	var out *state
	for _, p := range g.peers(g) {
		if p.running.Load() == 0 {
			continue
		}
		p.mu.Lock()
		base := p.base
		ptrees := p.trees
		active := p.active
		p.mu.Unlock()
		if base == nil || active == 0 {
			continue
		}
		for _, region := range overlaps(g.trees, ptrees) {
			if out == nil {
				out = &state{entries: maps.Clone(st.entries), gitDirs: maps.Clone(st.gitDirs), pointers: maps.Clone(st.pointers)}
			}
			under := func(k string) bool { return abspath.Within(k, region) }
			// Repairs of the taken entries walk from this guard's own
			// tree, never from the peer's: a peer's tree nested in this
			// one could have been swapped for a symbolic link by this
			// guard's command.
			own := region
			for _, t := range g.trees {
				if abspath.Within(region, t) {
					own = t
				}
			}
			maps.DeleteFunc(out.entries, func(k string, _ *entry) bool { return under(k) })
			maps.DeleteFunc(out.gitDirs, func(k string, _ bool) bool { return under(k) })
			for k, v := range base.entries {
				if under(k) {
					e := *v
					e.tree = own
					out.entries[k] = &e
				}
			}
			for k, v := range base.gitDirs {
				if under(k) {
					out.gitDirs[k] = v
				}
			}
			for k, v := range base.pointers {
				if under(k) {
					out.pointers[k] = v
				}
			}
			for k := range out.pointers {
				if under(k) {
					if _, ok := base.pointers[k]; !ok {
						delete(out.pointers, k)
					}
				}
			}
			g.log.Debug("protectguard: baseline of a region taken over from a running guard", "region", region)
		}
	}
	if out == nil {
		return st
	}
	return out
}

// overlaps returns the regions two sets of merged trees share: the
// deeper of each pair where one holds the other.
func overlaps(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			switch {
			case abspath.Within(x, y):
				out = append(out, x)
			case abspath.Within(y, x):
				out = append(out, y)
			}
		}
	}
	return out
}
