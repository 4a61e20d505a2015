package policyderive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive/internal/scan"
)

// ErrInvalid is wrapped by *InputError.
var ErrInvalid = errors.New("invalid derivation input")

// InputError reports an unusable argument of Derive.
type InputError struct {
	// What is "root", "cwd", "grants[2]", "system[1]".
	What  string
	Value string
	// Problem says what is wrong.
	Problem string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("%v: %s %q: %s", ErrInvalid, e.What, e.Value, e.Problem)
}

// Unwrap returns ErrInvalid.
func (e *InputError) Unwrap() error { return ErrInvalid }

// Options configure a Deriver. The zero value is usable.
type Options struct {
	// MaxEntries bounds each mask search (directory entries examined); 0
	// means 1,000,000.
	MaxEntries int
	// Timeout bounds each mask search; 0 means 10s.
	Timeout time.Duration
	// NoCache disables the mask search cache and the directory listing
	// cache: every derivation reads the trees again. The search of the
	// System trees for private files always uses the one process-wide
	// cache (see privateSystem): those trees are the host's.
	NoCache bool
	// Logger receives debug records; nil means slog.Default().
	Logger *slog.Logger
}

// Deriver derives profiles with a mask search cache, so that deriving
// again when nothing changed costs little. It is safe for concurrent use.
// Close releases the cache (and its inotify watches).
type Deriver struct {
	opts  Options
	log   *slog.Logger
	cache *scan.Cache
	lists *listCache // nil when uncached
}

// NewDeriver returns a Deriver.
func NewDeriver(opts Options) *Deriver {
	d := &Deriver{opts: opts, log: cmp.Or(opts.Logger, slog.Default())}
	if !opts.NoCache {
		d.cache = scan.NewCache(scan.Options{Logger: opts.Logger})
		d.lists = &listCache{}
	}
	return d
}

// Close releases the cache.
func (d *Deriver) Close() error {
	if d.cache == nil {
		return nil
	}
	return d.cache.Close()
}

// Derive derives the profile of one command with an uncached mask
// search (the System trees' private files excepted: see Options.NoCache):
// see Deriver.Derive.
func Derive(p *policy.Policy, root, home, cwd string, grants []policy.Grant) (*Profile, error) {
	d := &Deriver{opts: Options{NoCache: true}, log: slog.Default()}
	return d.Derive(context.Background(), p, root, home, cwd, grants)
}

// Derive turns the policy into the OS profile of one command run in cwd
// (absolute; the root when "") with the approved grants. It compiles the
// policy (policy.NewChecker), resolves every path, searches the granted
// trees for deny and protect patterns and reads the directories Landlock
// must split. See the package documentation for the mapping rules.
func (d *Deriver) Derive(ctx context.Context, p *policy.Policy, root, home, cwd string, grants []policy.Grant) (*Profile, error) {
	if p == nil {
		return nil, &InputError{What: "policy", Value: "<nil>", Problem: "no policy"}
	}
	c, err := policy.NewChecker(p, root, home)
	if err != nil {
		return nil, err
	}
	return d.DeriveCompiled(ctx, c, cwd, grants)
}

// DeriveCompiled is Derive of a policy already compiled (c holds the
// policy, the resolved root and home): an executor derives every command
// from the checker its request carries and compiles nothing per command.
func (d *Deriver) DeriveCompiled(ctx context.Context, c *policy.Checker, cwd string, grants []policy.Grant) (*Profile, error) {
	if c == nil {
		return nil, &InputError{What: "checker", Value: "<nil>", Problem: "no compiled policy"}
	}
	dv := &derivation{ctx: ctx, d: d, c: c, p: c.Policy(), root: c.Root(), home: c.Home(), rules: c.Rules()}
	return dv.run(cwd, grants)
}

// derivation is the state of one Derive call.
type derivation struct {
	ctx   context.Context
	d     *Deriver
	c     *policy.Checker
	p     *policy.Policy
	root  string
	home  string
	rules []policy.Rule

	grants []policy.Grant
	stats  map[string][2]bool // exists, dir
	system []string           // resolved system paths, sorted, nested ones dropped
	// systemNamed holds every System entry, resolved (privateSystem).
	systemNamed map[string]bool
	links       []Link

	read, write []Access // kept grants
	masks       map[string]*Mask
	scope       []string
	unsearched  []Unsearched
	notes       []Element
	named       []string // sockets found that the policy names (Profile.Sockets)
}

func (dv *derivation) run(cwd string, grants []policy.Grant) (*Profile, error) {
	if cwd == "" {
		cwd = dv.root
	}
	if !filepath.IsAbs(cwd) {
		return nil, &InputError{What: "cwd", Value: cwd, Problem: "not absolute"}
	}
	rcwd, err := dv.c.Resolve(dv.root, cwd)
	if err != nil {
		return nil, &InputError{What: "cwd", Value: cwd, Problem: err.Error()}
	}
	for i, g := range grants {
		if !g.Op.Valid() {
			return nil, &InputError{What: fmt.Sprintf("grants[%d]", i), Value: g.Path, Problem: fmt.Sprintf("invalid op %d", uint8(g.Op))}
		}
		if g.Path == "" || strings.IndexByte(g.Path, 0) >= 0 {
			return nil, &InputError{What: fmt.Sprintf("grants[%d]", i), Value: g.Path, Problem: "empty or contains NUL"}
		}
		if !filepath.IsAbs(g.Path) || filepath.Clean(g.Path) != g.Path {
			return nil, &InputError{What: fmt.Sprintf("grants[%d]", i), Value: g.Path, Problem: "not a clean absolute path (a grant names the resolved path that was approved)"}
		}
		rp, err := dv.c.Resolve(dv.root, g.Path)
		if err != nil {
			return nil, &InputError{What: fmt.Sprintf("grants[%d]", i), Value: g.Path, Problem: err.Error()}
		}
		if rp != g.Path {
			// A symbolic link appeared on the way since the path was
			// judged and approved: granting its target would grant
			// something nobody approved.
			return nil, &InputError{What: fmt.Sprintf("grants[%d]", i), Value: g.Path, Problem: "now resolves to " + rp + " through a symbolic link; the approved path is granted only as itself"}
		}
		dv.grants = append(dv.grants, policy.Grant{Path: rp, Op: g.Op})
	}
	slices.SortFunc(dv.grants, func(a, b policy.Grant) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Op, b.Op))
	})
	dv.grants = slices.Compact(dv.grants)
	if err := dv.resolveSystem(); err != nil {
		return nil, err
	}

	dv.candidates()
	dv.masks = map[string]*Mask{}
	if err := dv.findMasks(); err != nil {
		return nil, err
	}
	if err := dv.privateSystem(); err != nil {
		return nil, err
	}
	if err := dv.hardLinks(); err != nil {
		return nil, err
	}
	dv.defaultShift()
	dv.sockets()
	masks := dv.pruneMasks()
	read, write := dv.pruneGrants(dv.read, masks), dv.pruneGrants(dv.write, masks)

	pr := &Profile{
		Root:       dv.root,
		Home:       dv.home,
		Cwd:        rcwd,
		Network:    dv.p.Network,
		PrivateTmp: true,
		Read:       read,
		Write:      write,
		Links:      dv.links,
		Masks:      masks,
		Defaults: Defaults{
			ReadInside:   policy.Allow,
			WriteInside:  dv.p.Write,
			ReadOutside:  dv.p.ReadOutside,
			WriteOutside: dv.p.WriteOutside,
		},
		Rules:      dv.profileRules(),
		System:     dv.system,
		Scope:      dv.scope,
		Unsearched: dv.unsearched,
		Notes:      dv.notes,
		Grants:     dv.grants,
		Sockets:    dv.named,
	}
	for _, a := range read {
		if a.Special != SpecialDevice {
			pr.Exec = append(pr.Exec, a)
		}
	}
	pr.Pinned = pins(pr)
	pr.Dirs = listings(pr, dv.d.lists)
	return pr, nil
}

// resolveSystem resolves the policy's System paths. Paths under /dev and
// /proc are kept as written (/proc/self names the opener; devices are
// provided by the backends); symbolic links are recorded in links and
// their targets granted.
func (dv *derivation) resolveSystem() error {
	seen := map[string]bool{}
	for i, s := range dv.p.SystemPaths() {
		if !filepath.IsAbs(s) || strings.IndexByte(s, 0) >= 0 {
			return &InputError{What: fmt.Sprintf("system[%d]", i), Value: s, Problem: "not an absolute path"}
		}
		s = filepath.Clean(s)
		if abspath.Within(s, "/dev") || abspath.Within(s, "/proc") {
			if !seen[s] {
				seen[s] = true
				dv.system = append(dv.system, s)
			}
			continue
		}
		fi, err := os.Lstat(s)
		if err != nil {
			continue // a missing system path grants nothing
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err1 := os.Readlink(s)
			r, err2 := filepath.EvalSymlinks(s)
			if err1 != nil || err2 != nil {
				continue
			}
			dv.links = append(dv.links, Link{Path: s, Target: target, Resolved: r})
			s = r
		} else {
			if dv.stats == nil {
				dv.stats = map[string][2]bool{}
			}
			dv.stats[s] = [2]bool{true, fi.IsDir()}
		}
		if !seen[s] {
			seen[s] = true
			dv.system = append(dv.system, s)
		}
	}
	// Drop System paths nested in another (/usr/bin, the target of /bin,
	// inside /usr).
	dv.system = abspath.Tops(dv.system)
	slices.SortFunc(dv.links, func(a, b Link) int { return strings.Compare(a.Path, b.Path) })
	return nil
}

// stat reports whether p exists and is a directory, once per path. A
// symbolic link (a grant path is resolved, so only a link that could not
// be resolved) counts as missing: it is never followed, except for the
// pseudo-files under /dev and /proc when follow is set.
func (dv *derivation) stat(p string, follow bool) (exists, dir bool) {
	if st, ok := dv.stats[p]; ok {
		return st[0], st[1]
	}
	fi, err := os.Lstat(p)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if follow {
			fi, err = os.Stat(p)
		} else {
			err = fs.ErrNotExist
		}
	}
	exists, dir = err == nil, err == nil && fi.IsDir()
	if dv.stats == nil {
		dv.stats = map[string][2]bool{}
	}
	dv.stats[p] = [2]bool{exists, dir}
	return exists, dir
}

// inSystem reports whether abs lies in a System tree.
func (dv *derivation) inSystem(abs string) bool {
	for _, s := range dv.system {
		if abspath.Within(abs, s) {
			return true
		}
	}
	return false
}

// granted reports whether an approved grant covers op on abs.
func (dv *derivation) granted(abs string, op policy.Op) bool {
	for _, g := range dv.grants {
		if abspath.Within(abs, g.Path) && (op == policy.Read || g.Op == policy.Write) {
			return true
		}
	}
	return false
}

// permitted reports whether the policy permits op on the resolved path
// abs at the OS level: allowed, or asked and granted for this command, or
// (for reads) in a System tree where no rule decides.
func (dv *derivation) permitted(abs string, op policy.Op) bool {
	v := dv.c.DecideResolved(abs, op)
	switch v.Decision {
	case policy.Allow:
		return true
	case policy.Ask:
		if dv.granted(abs, op) {
			return true
		}
	}
	return op == policy.Read && dv.inSystem(abs) && firstRule(dv.rules, abs, v.Rel, v.Inside, op) < 0
}

// firstRule returns the index of the first rule matching the path for op,
// or -1.
func firstRule(rules []policy.Rule, abs, rel string, inside bool, op policy.Op) int {
	for i, r := range rules {
		if appliesTo(r, op) && r.Pattern.Match(abs, rel, inside) {
			return i
		}
	}
	return -1
}

func appliesTo(r policy.Rule, op policy.Op) bool {
	return len(r.Ops) == 0 || slices.Contains(r.Ops, op)
}

// candidates collects the grants of the profile: every tree the policy
// permits at its top, before masks.
func (dv *derivation) candidates() {
	type cand struct {
		path    string
		source  string
		special Special
		check   bool // judged by permitted; false for the writable pseudo-devices
	}
	var rd, wr []cand
	rd = append(rd, cand{path: dv.root, source: "root", check: true})
	for _, s := range dv.system {
		sp := SpecialNone
		switch {
		case abspath.Within(s, "/dev"):
			sp = SpecialDevice
			if s == "/dev/null" || s == "/dev/zero" || s == "/dev/full" {
				wr = append(wr, cand{path: s, source: "device", special: sp})
			}
		case abspath.Within(s, "/proc"):
			sp = SpecialProc
		}
		rd = append(rd, cand{path: s, source: "system", special: sp, check: true})
	}
	if dv.p.ReadOutside == policy.Allow {
		rd = append(rd, cand{path: "/", source: "default: read outside root", check: true})
	}
	if dv.p.Write == policy.Allow {
		wr = append(wr, cand{path: dv.root, source: "root", check: true})
	}
	if dv.p.WriteOutside == policy.Allow {
		wr = append(wr, cand{path: "/", source: "default: write outside root", check: true})
	}
	for _, r := range dv.rules {
		if r.Action != policy.Allow || !r.Pattern.Literal() || r.Pattern.Kind() == policy.PatternName {
			continue
		}
		path, ok := dv.literalPath(r.Pattern)
		if !ok {
			continue
		}
		src := fmt.Sprintf("%s %q", r.Source, r.Pattern.String())
		if appliesTo(r, policy.Read) || appliesTo(r, policy.Write) {
			rd = append(rd, cand{path: path, source: src, check: true})
		}
		if appliesTo(r, policy.Write) {
			wr = append(wr, cand{path: path, source: src, check: true})
		}
	}
	for _, g := range dv.grants {
		rd = append(rd, cand{path: g.Path, source: "grant", check: true})
		if g.Op == policy.Write {
			wr = append(wr, cand{path: g.Path, source: "grant", check: true})
		}
	}
	keep := func(cs []cand, op policy.Op) []Access {
		var out []Access
		seen := map[string]bool{}
		for _, c := range cs {
			if seen[c.path] {
				continue
			}
			if c.check && (!dv.permitted(c.path, op) || !dv.permitted(c.path, policy.Read)) {
				if c.source != "root" && c.source != "system" {
					// A write grant is readable too: a write-only tree
					// cannot be expressed, so it is not granted.
					bad := op
					if dv.permitted(c.path, op) {
						bad = policy.Read
					}
					v := dv.c.DecideResolved(c.path, bad)
					dv.notes = append(dv.notes, Element{
						Class: Stricter, Subject: fmt.Sprintf("%s %s", op, c.path), Control: opControl(op), Rule: v.Rule,
						Detail: fmt.Sprintf("%s of %s (%s) is not granted", op, c.path, c.source),
						Reason: fmt.Sprintf("the policy does not permit it at the top (%s by %s); paths below it that it permits stay closed", v.Decision, v.Rule),
					})
				}
				continue
			}
			seen[c.path] = true
			a := Access{Path: c.path, Source: c.source, Special: c.special}
			a.Exists, a.Dir = dv.stat(c.path, c.special != SpecialNone)
			out = append(out, a)
		}
		slices.SortFunc(out, func(a, b Access) int { return strings.Compare(a.Path, b.Path) })
		return out
	}
	dv.read = keep(rd, policy.Read)
	dv.write = keep(wr, policy.Write)
}

func opControl(op policy.Op) policy.Control {
	if op == policy.Write {
		return policy.ControlFSWrite
	}
	return policy.ControlFSRead
}

// literalPath returns the absolute path a literal absolute or relative
// pattern matches (with its subtree).
func (dv *derivation) literalPath(p *policy.Pattern) (string, bool) {
	switch p.Kind() {
	case policy.PatternAbsolute:
		b := p.Base()
		return b, b != ""
	case policy.PatternRelative:
		return abspath.Join(dv.root, p.Base()), true
	}
	return "", false
}

// inRegion reports whether abs lies in a kept grant that gives op (a
// write grant gives read too).
func (dv *derivation) inRegion(abs string, op policy.Op) bool {
	for _, a := range dv.write {
		if abspath.Within(abs, a.Path) {
			return true
		}
	}
	if op == policy.Read {
		for _, a := range dv.read {
			if abspath.Within(abs, a.Path) {
				return true
			}
		}
	}
	return false
}

// nonPermitting reports whether rule r can forbid op: a deny, or an ask
// (granted asks are sorted out per path by permitted).
func nonPermitting(r policy.Rule, op policy.Op) bool {
	return r.Action != policy.Allow && appliesTo(r, op)
}

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

// defaultShift masks the root when a grant containing it (the outside
// default, an allow rule) gives an op the root's own default does not.
func (dv *derivation) defaultShift() {
	for _, op := range []policy.Op{policy.Read, policy.Write} {
		list := dv.read
		if op == policy.Write {
			list = dv.write
		}
		for _, a := range list {
			if !abspath.Below(dv.root, a.Path) || dv.permitted(dv.root, op) {
				continue
			}
			kind := ReadOnly
			if op == policy.Read {
				kind = Hide
			}
			v := dv.c.DecideResolved(dv.root, op)
			dv.addMask(Mask{Path: dv.root, Kind: kind, Dir: true, Exists: true, Rule: v.Rule, Reason: reasonOf(v.Rule, kind)})
			break
		}
	}
}

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

// profileRules converts the effective rules for pattern-capable
// backends.
func (dv *derivation) profileRules() []Rule {
	out := make([]Rule, 0, len(dv.rules))
	for _, r := range dv.rules {
		pt := r.Pattern
		pr := Rule{
			Source:  r.Source,
			List:    r.List,
			Pattern: pt.String(),
			Literal: pt.Literal(),
			Action:  r.Action,
			Read:    appliesTo(r, policy.Read),
			Write:   appliesTo(r, policy.Write),
		}
		written := strings.TrimRight(pt.String(), "/")
		switch pt.Kind() {
		case policy.PatternAbsolute:
			pr.Form = "absolute"
			if pt.Never() || pt.Base() == "" {
				pr.Never = true
				break
			}
			if pt.Literal() {
				pr.Path = pt.Base()
				break
			}
			pr.Base = pt.Base()
			pr.Glob = globTail(path.Clean(strings.TrimPrefix(written, "~")))
		case policy.PatternRelative:
			pr.Form = "relative"
			if pt.Literal() {
				pr.Path = abspath.Join(dv.root, pt.Base())
				break
			}
			pr.Base = abspath.Join(dv.root, pt.Base())
			pr.Glob = globTail(path.Clean(written))
		default:
			pr.Form = "name"
			pr.Glob = written
			for seg := range strings.SplitSeq(dv.root, "/") {
				if seg != "" && pt.MatchName(seg) {
					pr.RootSegment = true
				}
			}
		}
		out = append(out, pr)
	}
	return out
}

// globTail returns the segments of a written pattern from its first
// glob segment on.
func globTail(written string) string {
	segs := strings.Split(strings.TrimPrefix(written, "/"), "/")
	for i, s := range segs {
		if hasGlobMeta(s) {
			return strings.Join(segs[i:], "/")
		}
	}
	return ""
}

// hasGlobMeta reports whether s contains a glob metacharacter.
func hasGlobMeta(s string) bool { return strings.ContainsAny(s, `*?[{\`) }
