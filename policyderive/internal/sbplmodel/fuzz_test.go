package sbplmodel

import (
	"errors"
	"strings"
	"testing"
)

// fuzzOps are the operations FuzzParse queries: file operations the
// rendered profiles grant or deny, and one without a path.
var fuzzOps = []string{"file-read-data", "file-write-create", "process-exec", "network-outbound"}

// FuzzParse checks that any text either parses or fails with a
// *ParseError wrapping one of the package's sentinels, and that a parsed
// profile answers every well-formed query and rejects, with a
// *QueryError, a path that is relative or contains NUL (rejected by
// design: no system call takes one).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		header + `(allow file-read* (subpath "/a"))`,
		header + `(deny file-write* (require-all (regex #"/\.git/hooks(/|$)") (require-not (literal "/a"))))`,
		header + `(allow file-read* (literal "/q\"\\\x41"))`,
		header + `(allow network-outbound (remote tcp "localhost:80")) (allow signal (target self))`,
		header + `(allow file-read* (subpath (param "P")))`,
	} {
		f.Add(s, "/a/b")
	}
	f.Fuzz(func(t *testing.T, text, path string) {
		p, err := Parse(text, map[string]string{"P": "/p"})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrParam) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		wellFormed := path == "" || (path[0] == '/' && !strings.Contains(path, "\x00"))
		for _, op := range fuzzOps {
			_, err := p.Eval(Query{Op: op, Path: path})
			if wellFormed {
				if err != nil {
					t.Fatalf("%s %q: %v", op, path, err)
				}
				continue
			}
			var qe *QueryError
			if !errors.As(err, &qe) || !errors.Is(err, ErrQuery) {
				t.Fatalf("%s %q: want a *QueryError, got %v", op, path, err)
			}
		}
	})
}

// FuzzCompileRegex checks that the subset check and Go's compiler agree:
// whatever the check accepts compiles and matches without panicking, and
// whatever it rejects wraps ErrUnsupported.
func FuzzCompileRegex(f *testing.F) {
	for _, s := range []string{`^/a/[^/]+$`, `/[.][Ee][Nn][Vv](/|$)`, `a{2,3}`, `[[:alpha:]]x`, `\.\$`, `(ab|c)*d`} {
		f.Add(s, "/a/b")
	}
	f.Fuzz(func(t *testing.T, re, s string) {
		r, err := CompileRegex(re)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("%q: error wraps no sentinel: %v", re, err)
			}
			return
		}
		r.Match(s)
	})
}
