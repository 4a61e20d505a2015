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
	"strconv"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

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
	// Scans is the mask search's cache (NewScanCache), which the caller
	// owns and closes; several Derivers may share one. Nil: every
	// derivation searches the trees and reads the directories it lists
	// again. The search of the System trees for private files always uses
	// the one process-wide cache (see privateSystem): those trees are the
	// host's, the same for every caller.
	Scans *ScanCache
	// Logger receives debug records; nil means slog.Default().
	Logger *slog.Logger
}

// ScanCache is the mask search's cache: the matches found in each
// searched tree, kept current by inotify watches (a stat of every listed
// directory where watches run out), so that deriving again when nothing
// changed costs little. It holds kernel resources: its owner closes it.
// Derivers get it through Options.Scans, so that derivation itself stays
// a function of the policy, the grants and the host's tree.
type ScanCache struct{ c *scan.Cache }

// NewScanCache returns an empty cache; logger (nil: slog.Default())
// receives its debug records.
func NewScanCache(logger *slog.Logger) *ScanCache {
	return &ScanCache{c: scan.NewCache(scan.Options{Logger: logger})}
}

// Close releases the cache's watches. A Deriver using it must not derive
// after.
func (s *ScanCache) Close() error { return s.c.Close() }

// Deriver derives profiles, with the mask search cache of Options.Scans,
// if any, and a cache of the directory listings it made. It is safe for
// concurrent use and holds no kernel resources of its own.
type Deriver struct {
	opts  Options
	log   *slog.Logger
	cache *scan.Cache // nil when uncached
	lists *listCache  // nil when uncached
}

// NewDeriver returns a Deriver.
func NewDeriver(opts Options) *Deriver {
	d := &Deriver{opts: opts, log: cmp.Or(opts.Logger, slog.Default())}
	if opts.Scans != nil {
		d.cache = opts.Scans.c
		d.lists = &listCache{}
	}
	return d
}

// Derive derives the profile of one command with an uncached mask
// search (the System trees' private files excepted: see Options.Scans):
// see Deriver.Derive.
func Derive(p *policy.Policy, root, home, cwd string, grants []policy.Grant) (*Profile, error) {
	d := &Deriver{log: slog.Default()}
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
	dv.procRules()
}

// procRules notes the read-denying rules that match under /proc, which
// no backend enforces where /proc is granted (the System entry
// /proc/self): the mount backends give commands a /proc of their own,
// whole, and Landlock grants it as a whole (see the proc-info gap); a
// path there names processes, not a file a mask can cover. Every kind of
// pattern counts — a literal /proc/self/environ, a glob /proc/*/environ,
// a bare name environ — because the rules are judged against the names
// /proc really has (procNames). The note is looser and inherent: strict
// mode runs, and the backends' Assess report the gap (so sandbox
// auto-allow stays off for such a policy).
func (dv *derivation) procRules() {
	if !slices.ContainsFunc(dv.read, func(a Access) bool { return a.Special == SpecialProc }) {
		return
	}
	dv.notes = append(dv.notes, procNotes(dv.c)...)
}

// procNotes returns the proc-rule notes of c (procRules). They depend on
// c's rules, root and home only, so they are kept process-wide by those
// (a workspace's checker lives for its session; a one-shot derivation of
// the same policy pays once per process). Only a rule that can match
// under /proc is judged: a bare name, or an absolute pattern whose first
// segment is /proc or a wildcard.
func procNotes(c *policy.Checker) []Element {
	var key strings.Builder
	key.WriteString(c.Root() + "\x00" + c.Home())
	relevant := false
	for _, r := range c.Rules() {
		if r.Action == policy.Allow || !r.AppliesTo(policy.Read) {
			continue
		}
		pat := r.Pattern.String()
		first, _, _ := strings.Cut(strings.TrimPrefix(pat, "/"), "/")
		switch {
		case r.Pattern.Kind() == policy.PatternName,
			r.Pattern.Kind() == policy.PatternAbsolute && strings.HasPrefix(pat, "/") && (first == "proc" || hasGlobMeta(first)):
			relevant = true
		}
		fmt.Fprintf(&key, "\x00%s\x01%s\x01%d", r.Source, pat, r.Action)
	}
	if !relevant {
		return nil
	}
	if n, ok := procNoteCache.Get(key.String()); ok {
		return n
	}
	var notes []Element
	seen := map[string]bool{}
	for _, p := range procNames() {
		v := c.DecideResolved(p, policy.Read)
		if v.Decision == policy.Allow || strings.HasPrefix(v.Rule, "default:") || seen[v.Rule] {
			continue
		}
		seen[v.Rule] = true
		source, _, _ := strings.Cut(v.Rule, " ")
		notes = append(notes, Element{
			Class: Looser, Subject: "proc " + v.Rule, Control: policy.ControlFSRead, Rule: source, Inherent: true, Feature: FeatureProcRule,
			Detail: fmt.Sprintf("reads under /proc that %s %s are not denied (%s, for one)", v.Rule, v.Decision, p),
			Reason: "/proc is granted whole (the sandbox's own /proc under the mount backends, the host's under Landlock); a path in it names processes, not a file a mask can cover",
			Remedy: "keep the secret out of the environment and command lines; the command gate still asks or denies commands that name the path",
		})
	}
	procNoteCache.Add(key.String(), notes)
	return notes
}

// procNoteCache holds procNotes' results by rules, root and home.
var procNoteCache, _ = lru.New[string, []Element](64) // errs only for a size ≤ 0

// procNames are the paths /proc offers a command, as the rules are judged
// against them: /proc's own entries but the numbered process directories,
// and each entry of a process directory, named through /proc/self and
// through this process's number (a literal /proc/self rule resolves to
// the deriving process). Listed once per process: the names are the
// kernel's.
var procNames = sync.OnceValue(func() []string {
	var out []string
	add := func(dir string, skipNumbers bool) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if skipNumbers && strings.Trim(e.Name(), "0123456789") == "" {
				continue
			}
			out = append(out, dir+"/"+e.Name())
		}
	}
	add("/proc", true)
	add("/proc/self", false)
	add("/proc/"+strconv.Itoa(os.Getpid()), false)
	return append(out, "/proc", "/proc/self", "/proc/1")
})

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
