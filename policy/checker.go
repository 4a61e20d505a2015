package policy

import "errors"

// API SKELETON: the bodies below are placeholders to be replaced by the real
// implementation; the exported names and signatures are the contract other
// packages code against.

// Checker is a Policy compiled against a workspace root and a home
// directory. It is safe for concurrent use.
type Checker struct {
	p    *Policy
	root string
	home string
}

// NewChecker validates p and compiles it for the given root and home. The
// root is resolved once (symlinks followed). An empty home means "unknown":
// "~" patterns then match nothing and "~" paths are errors; it never means "/".
func NewChecker(p *Policy, root, home string) (*Checker, error) {
	return nil, errors.New("policy: NewChecker not implemented yet")
}

// Policy returns the policy the checker was compiled from. Callers must not
// modify it.
func (c *Checker) Policy() *Policy { return c.p }

// Root returns the resolved workspace root.
func (c *Checker) Root() string { return c.root }

// Home returns the resolved home directory, or "" when unknown.
func (c *Checker) Home() string { return c.home }

// Rules returns the effective ordered path rules: denied_paths (every op),
// then the protected paths (write), then path_rules.
func (c *Checker) Rules() []Rule { return nil }

// Resolve turns path into an absolute, symlink-resolved path: "~" expanded,
// relative paths made absolute against base (the root when base is ""),
// every existing component's symlinks followed and a missing tail appended
// lexically.
func (c *Checker) Resolve(base, path string) (string, error) {
	return "", errors.New("policy: Resolve not implemented yet")
}

// DecidePath judges op on path, relative paths being relative to the root.
func (c *Checker) DecidePath(path string, op Op) (*Verdict, error) {
	return c.DecidePathAt("", path, op)
}

// DecidePathAt judges op on path, relative paths being relative to base
// (an absolute directory; the root when "").
func (c *Checker) DecidePathAt(base, path string, op Op) (*Verdict, error) {
	return nil, errors.New("policy: DecidePathAt not implemented yet")
}

// DecideResolved judges op on an already resolved absolute path without
// touching the file system.
func (c *Checker) DecideResolved(abs string, op Op) *Verdict { return nil }

// DecideCommand judges a shell command run in cwd (absolute; the root when
// ""): the strictest of every segment's command-rule verdict and every path
// claim's verdict. The cwd is itself a read claim.
func (c *Checker) DecideCommand(cmd, cwd string) (*CommandVerdict, error) {
	return nil, errors.New("policy: DecideCommand not implemented yet")
}

// Rule is one compiled, effective path rule.
type Rule struct {
	// Source names the rule as it appears in the policy:
	// `denied_paths[0]`, `protect[3]`, `path_rules[2]`.
	Source  string
	Pattern *Pattern
	Action  Decision
	// Ops is empty for every op.
	Ops []Op
}

// Pattern is a compiled path pattern.
type Pattern struct {
	raw string
}

// String returns the pattern as written.
func (p *Pattern) String() string { return p.raw }

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
