package sbplmodel

import (
	"strings"
	"testing"
)

// FuzzParse checks that any text either parses or fails with a
// *ParseError, and that a parsed profile answers queries.
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
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			return
		}
		if len(path) > 0 && path[0] == '/' && !strings.Contains(path, "\x00") {
			if _, err := p.Eval(Query{Op: "file-read-data", Path: path}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzCompileRegex checks that the subset check and Go's compiler agree:
// whatever the check accepts compiles and matches without panicking.
func FuzzCompileRegex(f *testing.F) {
	for _, s := range []string{`^/a/[^/]+$`, `/[.][Ee][Nn][Vv](/|$)`, `a{2,3}`, `[[:alpha:]]x`, `\.\$`, `(ab|c)*d`} {
		f.Add(s, "/a/b")
	}
	f.Fuzz(func(t *testing.T, re, s string) {
		r, err := CompileRegex(re)
		if err != nil {
			return
		}
		r.Match(s)
	})
}
