package policy

import (
	"errors"
	"path"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// PatternKind is the form of a path pattern.
type PatternKind uint8

const (
	// PatternAbsolute starts with "/" or "~" and matches absolute paths and
	// their subtrees.
	PatternAbsolute PatternKind = iota + 1
	// PatternRelative contains "/" but does not start with it; it matches
	// root-relative paths and their subtrees, never outside the root.
	PatternRelative
	// PatternName contains no "/"; it matches any segment of a path.
	PatternName
)

// String returns "absolute", "relative" or "name".
func (k PatternKind) String() string {
	switch k {
	case PatternAbsolute:
		return "absolute"
	case PatternRelative:
		return "relative"
	case PatternName:
		return "name"
	}
	return "PatternKind(" + strconv.Itoa(int(k)) + ")"
}

// Errors wrapped by *PatternError.
var (
	// ErrEmptyPattern reports an empty pattern.
	ErrEmptyPattern = errors.New("empty pattern")
	// ErrMalformedPattern reports a glob that does not parse ("[", "a[",
	// a lone trailing "\").
	ErrMalformedPattern = errors.New("malformed glob")
	// ErrPatternEscapesRoot reports a root-relative pattern with "..".
	ErrPatternEscapesRoot = errors.New("root-relative pattern leaves the root")
)

// PatternError reports a pattern that cannot be compiled. List and Index
// name where it appears in a policy ("denied_paths", 2); Index is -1 for a
// pattern compiled on its own.
type PatternError struct {
	List    string
	Index   int
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	where := "pattern"
	if e.List != "" {
		where = e.List + "[" + strconv.Itoa(e.Index) + "]"
	}
	return where + " " + quote(e.Pattern) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *PatternError) Unwrap() error { return e.Err }

// Pattern is a compiled path pattern (see PathRule for the forms). It is
// immutable and safe for concurrent use.
type Pattern struct {
	raw  string
	kind PatternKind
	// alts are the forms matched: for absolute patterns the expanded
	// pattern and, when its literal prefix resolves elsewhere through
	// symlinks, the resolved form; for the others the pattern itself.
	alts    []matcher
	base    string
	literal bool
	// never is set for a "~" pattern when the home is unknown.
	never bool
}

// matcher matches one glob against a string; fast paths avoid the general
// glob engine for the common shapes.
type matcher struct {
	glob string
	// tree is glob + "/**", matching the subtree.
	tree string
	kind matchKind
	arg  string
	// base is the literal directory prefix of a path glob.
	base string
	// lits are the literal segments after the base that any match must
	// contain; they reject most paths before the glob engine runs.
	lits []string
}

type matchKind uint8

const (
	matchGlob   matchKind = iota
	matchEqual            // no metacharacters
	matchPrefix           // "abc*"
	matchSuffix           // "*abc"
	matchAny              // "*"
)

func newMatcher(glob string) matcher {
	m := newSegmentMatcher(glob)
	m.tree = glob + "/**"
	if m.kind == matchGlob {
		for _, seg := range strings.Split(glob, "/") {
			if seg != "" && !hasMeta(seg) {
				m.lits = append(m.lits, seg)
			}
		}
	}
	return m
}

// mayMatch is a cheap necessary condition for matchTree: s lies under the
// literal base and contains every literal segment.
func (m *matcher) mayMatch(s string) bool {
	if m.base != "" && m.base != "/" && s != m.base && !(strings.HasPrefix(s, m.base) && s[len(m.base)] == '/') {
		return false
	}
	for _, lit := range m.lits {
		i := strings.Index(s, lit)
		if i < 0 {
			return false
		}
	}
	return true
}

func newSegmentMatcher(glob string) matcher {
	if !hasMeta(glob) {
		return matcher{glob: glob, kind: matchEqual, arg: glob}
	}
	if glob == "*" {
		return matcher{glob: glob, kind: matchAny}
	}
	if strings.Count(glob, "*") == 1 && !strings.ContainsAny(glob, "?[{\\/") {
		if strings.HasSuffix(glob, "*") {
			return matcher{glob: glob, kind: matchPrefix, arg: glob[:len(glob)-1]}
		}
		if strings.HasPrefix(glob, "*") {
			return matcher{glob: glob, kind: matchSuffix, arg: glob[1:]}
		}
	}
	return matcher{glob: glob, kind: matchGlob}
}

// match matches one segment-free string (a name, or a whole path for
// absolute and relative globs).
func (m matcher) match(s string) bool {
	switch m.kind {
	case matchEqual:
		return s == m.arg
	case matchAny:
		return !strings.Contains(s, "/")
	case matchPrefix:
		return strings.HasPrefix(s, m.arg) && !strings.Contains(s[len(m.arg):], "/")
	case matchSuffix:
		return strings.HasSuffix(s, m.arg) && !strings.Contains(s[:len(s)-len(m.arg)], "/")
	}
	return doublestar.MatchUnvalidated(m.glob, s)
}

// matchTree matches s or any ancestor of s against a path glob, so a
// pattern covers its subtree.
func (m *matcher) matchTree(s string) bool {
	if m.kind == matchEqual {
		if m.arg == "/" {
			return true
		}
		return s == m.arg || (strings.HasPrefix(s, m.arg) && s[len(m.arg)] == '/')
	}
	return m.mayMatch(s) && (doublestar.MatchUnvalidated(m.glob, s) || doublestar.MatchUnvalidated(m.tree, s))
}

// hasMeta reports whether s contains glob metacharacters.
func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[{\\") }

// CompilePattern compiles a path pattern. home expands a leading "~"; when
// home is "" such a pattern compiles but matches nothing. The literal
// prefix of an absolute pattern is resolved through symlinks on the real
// file system, so "/etc/x" also matches where /etc is a link.
func CompilePattern(s, home string) (*Pattern, error) {
	return compilePattern(s, home, true)
}

func compilePattern(s, home string, resolve bool) (*Pattern, error) {
	perr := func(err error) error { return &PatternError{Index: -1, Pattern: s, Err: err} }
	if strings.IndexByte(s, 0) >= 0 {
		return nil, perr(ErrNUL)
	}
	trimmed := s
	for len(trimmed) > 1 && strings.HasSuffix(trimmed, "/") {
		trimmed = trimmed[:len(trimmed)-1]
	}
	if trimmed == "" {
		return nil, perr(ErrEmptyPattern)
	}
	if !doublestar.ValidatePattern(trimmed) {
		return nil, perr(ErrMalformedPattern)
	}
	p := &Pattern{raw: s}
	switch {
	case trimmed[0] == '/' || trimmed[0] == '~':
		p.kind = PatternAbsolute
		if trimmed[0] == '~' {
			if trimmed != "~" && !strings.HasPrefix(trimmed, "~/") {
				return nil, perr(ErrTildeUser)
			}
			if home == "" {
				p.never = true
				p.literal = !hasMeta(trimmed)
				return p, nil
			}
			trimmed = home + trimmed[1:]
		}
		clean := path.Clean(trimmed)
		base, rest := splitLiteral(clean)
		p.base = base
		p.literal = rest == ""
		m := newMatcher(clean)
		m.base = base
		p.alts = append(p.alts, m)
		if resolve {
			if resolved, err := realpath(base); err == nil && resolved != base {
				p.base = resolved
				m := newMatcher(path.Join(resolved, rest))
				m.base = resolved
				p.alts = append(p.alts, m)
			}
		}
	case strings.Contains(trimmed, "/"):
		p.kind = PatternRelative
		clean := path.Clean(trimmed)
		if clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, perr(ErrPatternEscapesRoot)
		}
		if clean == "." {
			return nil, perr(ErrEmptyPattern)
		}
		base, rest := splitLiteral("/" + clean)
		p.base = strings.TrimPrefix(base, "/")
		p.literal = rest == ""
		m := newMatcher(clean)
		m.base = p.base
		p.alts = []matcher{m}
	default:
		p.kind = PatternName
		if trimmed == "." || trimmed == ".." {
			return nil, perr(ErrEmptyPattern)
		}
		p.literal = !hasMeta(trimmed)
		p.alts = []matcher{newMatcher(trimmed)}
	}
	return p, nil
}

// splitLiteral splits a clean absolute glob into its literal directory
// prefix (segments before the first one with metacharacters) and the rest.
func splitLiteral(clean string) (base, rest string) {
	segs := strings.Split(clean[1:], "/")
	for i, seg := range segs {
		if hasMeta(seg) {
			return "/" + strings.Join(segs[:i], "/"), strings.Join(segs[i:], "/")
		}
	}
	return clean, ""
}

// String returns the pattern as written.
func (p *Pattern) String() string { return p.raw }

// Kind returns the pattern's form.
func (p *Pattern) Kind() PatternKind { return p.kind }

// Base returns the literal directory prefix: for an absolute pattern the
// resolved absolute directory before the first glob segment (the whole
// path for a literal pattern); for a relative pattern the root-relative
// prefix ("" when the first segment is a glob); "" for names and for "~"
// patterns with an unknown home.
func (p *Pattern) Base() string { return p.base }

// Literal reports whether the pattern has no glob metacharacters, so it
// matches exactly Base (or the name) and its subtree.
func (p *Pattern) Literal() bool { return p.literal }

// Never reports whether the pattern can match nothing ("~" patterns with an
// unknown home).
func (p *Pattern) Never() bool { return p.never }

// Match reports whether the pattern matches a path: abs is the resolved
// absolute path; rel and inside come from classifying it against the root
// (rel is "." for the root itself and ignored when inside is false).
func (p *Pattern) Match(abs, rel string, inside bool) bool {
	t := newTarget(abs, rel, inside)
	return p.matchTarget(&t)
}

// target is a path prepared once for matching against many patterns.
type target struct {
	abs, rel string
	inside   bool
	// segs are the segments bare names are matched against: the
	// root-relative path's inside the root, the absolute path's outside.
	segs []string
}

func newTarget(abs, rel string, inside bool) target {
	t := target{abs: abs, rel: rel, inside: inside}
	s := abs[1:]
	if inside {
		s = rel
		if rel == "." {
			s = ""
		}
	}
	if s != "" {
		t.segs = strings.Split(s, "/")
	}
	return t
}

func (p *Pattern) matchTarget(t *target) bool {
	if p.never {
		return false
	}
	switch p.kind {
	case PatternAbsolute:
		for i := range p.alts {
			if p.alts[i].matchTree(t.abs) {
				return true
			}
		}
	case PatternRelative:
		if t.inside && t.rel != "." {
			return p.alts[0].matchTree(t.rel)
		}
	case PatternName:
		m := &p.alts[0]
		for _, seg := range t.segs {
			if m.match(seg) {
				return true
			}
		}
	}
	return false
}

// MatchName reports whether a single path segment matches a bare-name
// pattern. It is false for the other forms.
func (p *Pattern) MatchName(segment string) bool {
	return p.kind == PatternName && !p.never && p.alts[0].match(segment)
}

// MayMatchBelow reports whether the directory (abs, rel, inside as for
// Match) or anything below it can match. It is false only when nothing at
// or below the directory can; walks use it to prune.
func (p *Pattern) MayMatchBelow(abs, rel string, inside bool) bool {
	if p.never {
		return false
	}
	switch p.kind {
	case PatternName:
		return true
	case PatternAbsolute:
		if p.Match(abs, rel, inside) {
			return true
		}
		for _, m := range p.alts {
			if related(abs, m.base) {
				return true
			}
		}
		return false
	case PatternRelative:
		if !inside {
			return false
		}
		if rel == "." || p.base == "" {
			return true
		}
		return p.Match(abs, rel, inside) || relatedRel(rel, p.base)
	}
	return false
}

// related reports whether absolute paths a and b are equal or one contains
// the other.
func related(a, b string) bool {
	if a == "/" || b == "/" || a == b {
		return true
	}
	return strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

func relatedRel(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

func quote(s string) string { return strconv.Quote(s) }
