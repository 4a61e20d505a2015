package policy

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// compiled counts NewChecker calls (CheckersCompiled).
var compiled atomic.Uint64

// CheckersCompiled returns how many times NewChecker has been called in
// this process. It is a diagnostic: a workspace compiles its policy once,
// and an executor given a compiled request (executor.Request.Checker)
// compiles none per command, which tests check with it.
func CheckersCompiled() uint64 { return compiled.Load() }

// Checker is a Policy compiled against a workspace root and a home
// directory. It is immutable and safe for concurrent use.
type Checker struct {
	p     *Policy
	root  string
	home  string
	rules []Rule
	// byOp holds the indexes into rules that apply to each op, in order.
	byOp [3][]int
	// hostAllow and hostDeny are network.allow and network.deny compiled.
	hostAllow, hostDeny []hostRule
}

// NewChecker validates p and compiles it for the given root and home. The
// root must be absolute; it is resolved once (symlinks followed). An empty
// home means "unknown": "~" patterns then match nothing and "~" paths are
// errors; it never means "/". The checker keeps a normalised copy of p.
func NewChecker(p *Policy, root, home string) (*Checker, error) {
	compiled.Add(1)
	if p == nil {
		p = &Policy{}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(root, "/") {
		return nil, &PathError{Path: root, Err: ErrRelativeBase}
	}
	rroot, err := resolvePath("/", "", root)
	if err != nil {
		return nil, err
	}
	rhome := ""
	if home != "" {
		if !strings.HasPrefix(home, "/") {
			return nil, &PathError{Path: home, Err: ErrRelativeBase}
		}
		if rhome, err = resolvePath("/", "", home); err != nil {
			return nil, err
		}
	}
	c := &Checker{p: p.Clone(), root: rroot, home: rhome}
	if !c.p.AllowShell {
		c.p.ShellDefault = Deny
	}
	add := func(list string, i int, pat string, action Decision, ops []Op) error {
		cp, err := CompilePattern(pat, rhome)
		if err != nil {
			var pe *PatternError
			if asPatternError(err, &pe) {
				pe.List, pe.Index = list, i
			}
			return err
		}
		c.rules = append(c.rules, Rule{Source: c.p.source(list, i), List: list, Pattern: cp, Action: action, Ops: ops})
		return nil
	}
	if c.hostAllow, c.hostDeny, err = compileHostRules(c.p.Hosts); err != nil {
		return nil, err
	}
	for i, pat := range c.p.DeniedPaths {
		if err := add("denied_paths", i, pat, Deny, nil); err != nil {
			return nil, err
		}
	}
	for i, pat := range c.p.SecretPaths() {
		if err := add("system_secrets", i, pat, Deny, nil); err != nil {
			return nil, err
		}
	}
	for i, pat := range c.p.Protect.Patterns() {
		if err := add("protect", i, pat, Deny, []Op{Write}); err != nil {
			return nil, err
		}
	}
	for i, r := range c.p.PathRules {
		if err := add("path_rules", i, r.Pattern, r.Action, r.Ops); err != nil {
			return nil, err
		}
	}
	for i, r := range c.rules {
		for _, op := range []Op{Read, Write} {
			if (PathRule{Ops: r.Ops}).AppliesTo(op) {
				c.byOp[op] = append(c.byOp[op], i)
			}
		}
	}
	return c, nil
}

// Policy returns the normalised policy the checker was compiled from.
// Callers must not modify it.
func (c *Checker) Policy() *Policy { return c.p }

// Root returns the resolved workspace root.
func (c *Checker) Root() string { return c.root }

// Home returns the resolved home directory, or "" when unknown.
func (c *Checker) Home() string { return c.home }

// Rules returns the effective ordered path rules: denied_paths (every op),
// then the system secrets (every op, see SystemSecrets), then the protected
// paths (write), then path_rules. Callers must not
// modify the result.
func (c *Checker) Rules() []Rule { return c.rules }

// Inside classifies a resolved absolute path: its root-relative POSIX path
// ("." for the root) and whether it lies inside the root.
func (c *Checker) Inside(abs string) (rel string, inside bool) { return relativeTo(c.root, abs) }

// Resolve turns path into an absolute, symlink-resolved path: "~" expanded,
// relative paths made absolute against base (the root when base is ""),
// every existing component's symlinks followed and a missing tail appended
// lexically.
func (c *Checker) Resolve(base, path string) (string, error) {
	if base == "" {
		base = c.root
	}
	return resolvePath(base, c.home, path)
}

// DecidePath judges op on path, relative paths being relative to the root.
func (c *Checker) DecidePath(path string, op Op) (*Verdict, error) {
	return c.DecidePathAt("", path, op)
}

// DecidePathAt judges op on path, relative paths being relative to base
// (an absolute directory; the root when "").
func (c *Checker) DecidePathAt(base, path string, op Op) (*Verdict, error) {
	if !op.Valid() {
		return nil, fmt.Errorf("policy: invalid op %d", uint8(op))
	}
	abs, err := c.Resolve(base, path)
	if err != nil {
		return nil, err
	}
	return c.DecideResolved(abs, op), nil
}

// DecideResolved judges op on an already resolved, clean absolute path
// without touching the file system.
func (c *Checker) DecideResolved(abs string, op Op) *Verdict {
	rel, inside := relativeTo(c.root, abs)
	v := &Verdict{Op: op, Path: abs, Inside: inside}
	if inside {
		v.Rel = rel
	}
	if op != Read && op != Write {
		v.Decision, v.Rule, v.Reason = Deny, "invalid op", "the operation is not read or write"
		return v
	}
	t := newTarget(abs, rel, inside)
	for _, i := range c.byOp[op] {
		r := &c.rules[i]
		if r.Pattern.matchTarget(&t) {
			v.Decision = r.Action
			v.Rule = r.Source + " " + quote(r.Pattern.String())
			v.Reason = ruleReason(r, op)
			return v
		}
	}
	where := "inside"
	switch {
	case inside && op == Read:
		v.Decision = Allow
	case inside:
		v.Decision = c.p.Write
	case op == Read:
		v.Decision, where = c.p.ReadOutside, "outside"
	default:
		v.Decision, where = c.p.WriteOutside, "outside"
	}
	v.Rule = "default: " + op.String() + " " + where + " root"
	v.Reason = defaultReason(v.Decision, op, where)
	return v
}

func ruleReason(r *Rule, op Op) string {
	switch {
	case r.List == "denied_paths":
		return fmt.Sprintf("the path matches the denied pattern %q and may not be read or written", r.Pattern.String())
	case r.List == "system_secrets":
		return fmt.Sprintf("%q holds host secrets and may not be read or written", r.Pattern.String())
	case r.List == "protect":
		return fmt.Sprintf("the path matches the protected pattern %q (files that run later outside the sandbox) and may not be written", r.Pattern.String())
	}
	switch r.Action {
	case Allow:
		return fmt.Sprintf("the rule %q allows %s here", r.Pattern.String(), verb(op))
	case Ask:
		return fmt.Sprintf("the rule %q requires approval to %s this path", r.Pattern.String(), op)
	}
	return fmt.Sprintf("the rule %q forbids %s this path", r.Pattern.String(), verb(op))
}

func defaultReason(d Decision, op Op, where string) string {
	place := "inside the workspace root"
	if where == "outside" {
		place = "outside the workspace root"
	}
	switch d {
	case Allow:
		return verb(op) + " " + place + " is allowed"
	case Ask:
		return verb(op) + " " + place + " needs the user's approval"
	}
	return verb(op) + " " + place + " is not allowed by this workspace's policy"
}

func verb(op Op) string {
	if op == Write {
		return "writing"
	}
	return "reading"
}

// Rule is one compiled, effective path rule.
type Rule struct {
	// Source names the rule as it appears in the policy:
	// `denied_paths[0]`, `protect[3]`, `path_rules[2]`.
	Source string
	// List is the list the rule comes from ("denied_paths",
	// "system_secrets", "protect", "path_rules"), whatever layer named it:
	// classify rules by List, never by Source.
	List    string
	Pattern *Pattern
	Action  Decision
	// Ops is empty for every op.
	Ops []Op
}

// AppliesTo reports whether the rule covers op.
func (r Rule) AppliesTo(op Op) bool { return PathRule{Ops: r.Ops}.AppliesTo(op) }

// Verdict is the judgement of one op on one path.
type Verdict struct {
	Decision Decision `json:"decision"`
	Op       Op       `json:"op"`
	// Rule names what decided: `denied_paths[0] ".env*"`,
	// `path_rules[2] "secrets/"`, `default: read outside root`.
	Rule string `json:"rule"`
	// Path is the resolved absolute path.
	Path string `json:"path"`
	// Rel is the root-relative POSIX path ("." for the root), or "" outside.
	Rel    string `json:"rel,omitempty"`
	Inside bool   `json:"inside"`
	// Reason is a sentence for the user or the model.
	Reason string `json:"reason"`
}

// DecideCommand judges a shell command run in cwd (absolute; the root when
// ""): the strictest of every segment's command-rule verdict and every path
// claim's verdict. The cwd is itself a read claim. See CommandVerdict for
// the gate's rules.
func (c *Checker) DecideCommand(cmd, cwd string) (*CommandVerdict, error) {
	return c.decideCommand(cmd, cwd)
}
