package scan

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// testPattern compiles a pattern in the three forms of policy.PathRule, with
// doublestar globs, for tests and benchmarks: "/abs" (absolute, subtree),
// "rel/path" (root-relative, subtree, inside only) and "name" (any
// segment, inside on rel, outside on abs). It stands in for
// *policy.Pattern so these tests do not depend on package policy.
func testPattern(s string) Pattern {
	s = strings.TrimSuffix(s, "/")
	key := "test " + s
	if !strings.Contains(s, "/") {
		name := func(seg string) bool { ok, _ := doublestar.Match(s, seg); return ok }
		return Pattern{
			Key:  key,
			Name: name,
			Match: func(abs, rel string, inside bool) bool {
				p := abs
				if inside {
					p = rel
				}
				for seg := range strings.SplitSeq(p, "/") {
					if seg != "" && seg != "." && name(seg) {
						return true
					}
				}
				return false
			},
		}
	}
	abs := strings.HasPrefix(s, "/")
	segs := strings.Split(strings.TrimPrefix(s, "/"), "/")
	glob := strings.Join(segs, "/")
	subtree := glob + "/**"
	path := func(a, rel string, inside bool) (string, bool) {
		if abs {
			return strings.TrimPrefix(a, "/"), true
		}
		if !inside || rel == "." {
			return "", inside
		}
		return rel, true
	}
	return Pattern{
		Key: key,
		Match: func(a, rel string, inside bool) bool {
			p, ok := path(a, rel, inside)
			if !ok || p == "" {
				return false
			}
			// The path or its subtree: glob or glob/**.
			if m, _ := doublestar.Match(glob, p); m {
				return true
			}
			m, _ := doublestar.Match(subtree, p)
			return m
		},
		MayMatchBelow: func(a, rel string, inside bool) bool {
			p, ok := path(a, rel, inside)
			if !ok {
				return false
			}
			if p == "" {
				return true
			}
			// Walk the directory's segments along the pattern's: a
			// mismatch before the pattern ends or reaches "**" means
			// nothing below can match.
			ds := strings.Split(p, "/")
			for i, d := range ds {
				if i >= len(segs) || segs[i] == "**" {
					return true
				}
				if m, _ := doublestar.Match(segs[i], d); !m {
					return false
				}
			}
			return true
		},
	}
}

func testPatterns(ss ...string) []Pattern {
	out := make([]Pattern, len(ss))
	for i, s := range ss {
		out[i] = testPattern(s)
	}
	return out
}

// defaultPatterns mirrors the default protect list plus typical denies.
var defaultPatterns = []string{
	"**/.git/hooks", "**/.git/config", ".gitmodules", ".gitconfig", ".bashrc", ".bash_profile",
	".zshrc", ".zprofile", ".profile", ".envrc", ".vscode", ".idea", ".mcp.json",
	".env*", "*.pem", "secrets/",
}
