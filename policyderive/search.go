package policyderive

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive/internal/scan"
)

// The mask search: which trees are searched for deny and protect
// patterns (searchScope), and the search itself (findMasks).

// findMasks locates the paths inside grants that the policy does not
// permit: literal rules directly, bare-name and glob rules by the mask
// search over the scope.
func (dv *derivation) findMasks() error {
	var pats []scan.Pattern
	var patRules []int
	for i, r := range dv.rules {
		if !nonPermitting(r, policy.Read) && !nonPermitting(r, policy.Write) {
			continue
		}
		pt := r.Pattern
		if pt.Literal() && pt.Kind() != policy.PatternName {
			path, ok := dv.literalPath(pt)
			if !ok {
				continue
			}
			dv.literal(path, r)
			continue
		}
		if pt.Kind() == policy.PatternRelative {
			if path, ok := dv.rootInstance(pt); ok {
				dv.literal(path, r)
			}
		}
		sp := scan.Pattern{
			Key:           fmt.Sprintf("%d %q %q", pt.Kind(), pt.String(), pt.Base()),
			Match:         pt.Match,
			MayMatchBelow: pt.MayMatchBelow,
		}
		if pt.Kind() == policy.PatternName {
			sp.Name = pt.MatchName
		}
		pats = append(pats, sp)
		patRules = append(patRules, i)
	}
	dv.scope = dv.searchScope(pats, patRules)
	// Unix sockets in the searched trees: connect(2) is not a file
	// access that a mount or a write grant stops, so every socket found
	// is hidden unless the policy names it (socketNamed).
	socketPat := len(pats)
	pats = append(pats, scan.Pattern{Key: "unix sockets", Match: func(string, string, bool) bool { return false }, Socket: true})
	patRules = append(patRules, -1)
	req := &scan.Request{
		Root:     dv.root,
		Roots:    dv.scope[1:],
		Patterns: pats,
		Limits:   scan.Limits{MaxEntries: dv.d.opts.MaxEntries, Timeout: dv.d.opts.Timeout},
	}
	var res *scan.Result
	var err error
	if dv.d.cache != nil {
		res, err = dv.d.cache.Search(dv.ctx, req)
	} else {
		res, err = scan.Search(dv.ctx, req)
	}
	if dv.searchLimited(err, "mask search", "no bare-name or glob pattern is masked", "narrow the grants") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("searching for masks: %w", err)
	}
	for _, m := range res.Matches {
		if m.Type == scan.TypeSymlink {
			continue // the link's target is judged at its own path
		}
		if m.Patterns[0] == socketPat { // matches are sorted by path, so named is too
			dv.socket(m.Path)
			continue
		}
		rule := dv.rules[patRules[m.Patterns[0]]]
		dv.consider(m.Path, m.Type != scan.TypeDir, rule)
		if m.Type == scan.TypeSocket && m.Patterns[len(m.Patterns)-1] == socketPat {
			dv.socket(m.Path)
		}
	}
	for _, u := range res.Unreadable {
		var kind MaskKind
		need := false
		for i, sp := range pats {
			if i == socketPat {
				continue
			}
			r := dv.rules[patRules[i]]
			if sp.MayMatchBelow != nil && !dv.mayMatchBelow(r.Pattern, u.Path) {
				continue
			}
			if nonPermitting(r, policy.Read) && dv.inRegion(u.Path, policy.Read) {
				need, kind = true, Hide
				break
			}
			if nonPermitting(r, policy.Write) && dv.inRegion(u.Path, policy.Write) {
				need, kind = true, ReadOnly
			}
		}
		why := "a denied or protected path"
		if (!need || kind != Hide) && (dv.inRegion(u.Path, policy.Read) || dv.inRegion(u.Path, policy.Write)) {
			// A Unix socket the search could not see may lie below, and
			// a read-only mount does not stop connect(2): only hiding
			// the directory does (a command of the deriving user may
			// know a name below a directory it cannot list).
			need, kind, why = true, Hide, "a Unix socket or a denied or protected path"
		}
		if !need {
			continue
		}
		dv.addMask(Mask{Path: u.Path, Kind: kind, Dir: true, Exists: true, Reason: "unreadable directory"})
		dv.notes = append(dv.notes, Element{
			Class: Stricter, Subject: "mask " + u.Path, Control: opControl(policy.Read),
			Detail: fmt.Sprintf("%s is masked (%s) as a whole", u.Path, kind),
			Reason: fmt.Sprintf("it could not be listed (%v), so %s may lie below it", u.Err, why),
		})
	}
	return nil
}

// searchLimited reports whether err is a search's *scan.LimitError, and
// then notes what goes unmasked as a looser element: a partial search
// would be unsound, so none is used.
func (dv *derivation) searchLimited(err error, subject, unmasked, narrow string) bool {
	var lerr *scan.LimitError
	if !errors.As(err, &lerr) {
		return false
	}
	dv.notes = append(dv.notes, Element{
		Class: Looser, Subject: subject, Control: policy.ControlFSRead,
		Detail: fmt.Sprintf("%s: the search of %s exceeded its %s limit", unmasked, strings.Join(lerr.Roots, ", "), lerr.Limit),
		Reason: "a partial search would be unsound, so none is used",
		Remedy: narrow + ", raise Options.MaxEntries or Timeout, or opt into best effort",
	})
	return true
}

func (dv *derivation) mayMatchBelow(p *policy.Pattern, dir string) bool {
	rel, inside := "", abspath.Within(dir, dv.root)
	if inside {
		rel = relTo(dv.root, dir)
	}
	return p.MayMatchBelow(dir, rel, inside)
}

// relTo returns p relative to dir ("." for dir itself); p within dir.
func relTo(dir, p string) string {
	if p == dir {
		return "."
	}
	if dir == "/" {
		return p[1:]
	}
	return p[len(dir)+1:]
}

// rootInstance returns, for a relative pattern of the form "**/x/y" with
// a literal remainder, the path root/x/y: the instance at the root that a
// placeholder must cover when it does not exist yet.
func (dv *derivation) rootInstance(p *policy.Pattern) (string, bool) {
	s := strings.TrimRight(p.String(), "/")
	if !strings.HasPrefix(s, "**/") {
		return "", false
	}
	for strings.HasPrefix(s, "**/") {
		s = s[3:]
	}
	if s == "" || hasGlobMeta(s) {
		return "", false
	}
	return abspath.Join(dv.root, s), true
}

// searchScope returns the trees the mask search covers, the root first:
// the root, every explicit grant (allow rules, approved grants), the home
// directory when a grant contains it, and the literal base of absolute
// glob rules that lie in a grant. It records in dv.unsearched the rules
// that cannot be applied to the rest of a grant.
func (dv *derivation) searchScope(pats []scan.Pattern, patRules []int) []string {
	scope := []string{dv.root}
	add := func(p string) {
		for _, s := range scope {
			if abspath.Within(p, s) {
				return
			}
		}
		scope = append(scope, p)
	}
	explicit := func(a Access) bool {
		return a.Source != "root" && a.Source != "system" && a.Source != "device" && !strings.HasPrefix(a.Source, "default:")
	}
	all := slices.Concat(dv.read, dv.write)
	for _, a := range all {
		if explicit(a) && a.Exists {
			add(a.Path)
		}
	}
	if dv.home != "" {
		for _, a := range all {
			if a.Special == SpecialNone && !dv.inSystem(dv.home) && abspath.Within(dv.home, a.Path) {
				add(dv.home)
				break
			}
		}
	}
	for _, i := range patRules {
		pt := dv.rules[i].Pattern
		if pt.Kind() == policy.PatternAbsolute && pt.Base() != "" && pt.Base() != "/" && dv.inRegion(pt.Base(), policy.Read) {
			add(pt.Base())
		}
	}
	// Rules that cannot be searched everywhere they could match.
	for _, i := range patRules {
		r := dv.rules[i]
		pt := r.Pattern
		if pt.Kind() == policy.PatternRelative {
			continue // inside the root only, and the root is searched
		}
		for _, op := range []policy.Op{policy.Read, policy.Write} {
			if !nonPermitting(r, op) {
				continue
			}
			list := dv.write
			if op == policy.Read {
				list = all
			}
			seen := map[string]bool{}
			for _, a := range list {
				if seen[a.Path] || a.Special != SpecialNone || a.Source == "system" || !a.Exists {
					continue
				}
				seen[a.Path] = true
				inScope := false
				for _, s := range scope {
					if abspath.Within(a.Path, s) {
						inScope = true
						break
					}
				}
				if inScope {
					continue
				}
				if pt.Kind() == policy.PatternAbsolute {
					b := pt.Base()
					if b == "" || (!abspath.Within(b, a.Path) && !abspath.Within(a.Path, b)) {
						continue // cannot match in this grant
					}
					if abspath.WithinAny(b, scope) {
						continue
					}
				}
				dv.unsearched = append(dv.unsearched, Unsearched{Rule: r.Source, Pattern: pt.String(), Op: op, Grant: a.Path})
			}
		}
	}
	return scope
}
