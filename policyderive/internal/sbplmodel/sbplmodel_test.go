package sbplmodel

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const header = "(version 1)\n(deny default)\n"

type check struct {
	op, path string
	want     Action
}

func TestEval(t *testing.T) {
	tests := []struct {
		name    string
		profile string
		params  map[string]string
		checks  []check
	}{
		{
			name:    "subpath covers itself and below, not a sibling with the same prefix",
			profile: header + `(allow file-read* (subpath "/a/b"))`,
			checks: []check{
				{"file-read-data", "/a/b", Allow}, {"file-read-data", "/a/b/c/d", Allow},
				{"file-read-data", "/a/bc", Deny}, {"file-read-data", "/a", Deny}, {"file-read-data", "/", Deny},
				{"file-write-data", "/a/b/c", Deny},
			},
		},
		{
			name:    "subpath of / is everything",
			profile: header + `(allow file-read-data (subpath "/"))`,
			checks:  []check{{"file-read-data", "/", Allow}, {"file-read-data", "/x/y", Allow}, {"file-read-metadata", "/x", Deny}},
		},
		{
			name:    "literal is exact, prefix is not bounded by /",
			profile: header + `(allow file-read* (literal "/a/b")) (allow file-write* (prefix "/p/q"))`,
			checks: []check{
				{"file-read-data", "/a/b", Allow}, {"file-read-data", "/a/b/c", Deny}, {"file-read-data", "/a", Deny},
				{"file-write-data", "/p/q", Allow}, {"file-write-data", "/p/qr/s", Allow}, {"file-write-data", "/p", Deny},
			},
		},
		{
			name: "last match wins",
			profile: header + `(allow file-read* (subpath "/ws"))
(deny file-read* (subpath "/ws/secret"))
(allow file-read* (literal "/ws/secret/ok"))`,
			checks: []check{
				{"file-read-data", "/ws/x", Allow}, {"file-read-data", "/ws/secret", Deny},
				{"file-read-data", "/ws/secret/k", Deny}, {"file-read-data", "/ws/secret/ok", Allow},
			},
		},
		{
			name:    "allow default with denies",
			profile: "(version 1)\n(allow default)\n(deny file-write* (subpath \"/etc\"))\n(deny default)\n(allow default)",
			checks: []check{
				{"file-write-data", "/etc/passwd", Deny}, {"file-write-data", "/tmp/x", Allow}, {"mach-lookup", "", Allow},
			},
		},
		{
			name: "regex with require-not: hooks at any depth except one",
			profile: header + `(allow file-write* (subpath "/ws"))
(deny file-write* (require-all (regex #"/\.git/hooks(/|$)") (require-not (literal "/ws/.git/hooks/ok"))))`,
			checks: []check{
				{"file-write-data", "/ws/.git/hooks", Deny}, {"file-write-data", "/ws/.git/hooks/pre-commit", Deny},
				{"file-write-create", "/ws/a/b/.git/hooks/x", Deny}, {"file-write-data", "/ws/.git/hooksx", Allow},
				{"file-write-data", "/ws/.git/hook", Allow}, {"file-write-data", "/ws/xgit/hooks", Allow},
				{"file-write-data", "/ws/.git/hooks/ok", Allow}, {"file-write-data", "/elsewhere/.git/hooks", Deny},
			},
		},
		{
			name:    "regex anchors and unanchored search",
			profile: header + `(allow file-read* (regex #"^/dev/fd/[0-9]+$")) (allow file-write* (regex #"\.env"))`,
			checks: []check{
				{"file-read-data", "/dev/fd/3", Allow}, {"file-read-data", "/dev/fd/3x", Deny}, {"file-read-data", "/x/dev/fd/3", Deny},
				{"file-write-data", "/a/.env/b", Allow}, {"file-write-data", "/a/xenv", Deny},
			},
		},
		{
			name: "require-any and several filters in one rule",
			profile: header + `(allow file-read* (literal "/a") (literal "/b"))
(allow file-write* (require-any (subpath "/c") (subpath "/d")))
(deny file-write* (require-all (subpath "/c") (subpath "/c/x")))`,
			checks: []check{
				{"file-read-data", "/a", Allow}, {"file-read-data", "/b", Allow}, {"file-read-data", "/ab", Deny},
				{"file-write-data", "/d/y", Allow}, {"file-write-data", "/c/y", Allow}, {"file-write-data", "/c/x/y", Deny},
			},
		},
		{
			name:    "parameters",
			profile: header + `(allow file-read* process-exec (subpath (param "ROOT"))) (deny file-read* (regex (param "RE")))`,
			params:  map[string]string{"ROOT": "/Users/me/ws", "RE": `/\.env$`},
			checks: []check{
				{"file-read-data", "/Users/me/ws/a", Allow}, {"process-exec", "/Users/me/ws/bin/x", Allow},
				{"file-read-data", "/Users/me/ws/.env", Deny}, {"process-exec", "/Users/me/ws/.env", Allow},
				{"file-read-data", "/Users/me/wsx", Deny},
			},
		},
		{
			name:    "operation wildcards",
			profile: header + `(allow file-read*) (allow process-exec) (allow network*) (allow process-info* (target same-sandbox)) (allow file*)  (deny file-write*)`,
			checks: []check{
				{"file-read-data", "/x", Allow}, {"file-read-metadata", "/x", Allow}, {"file-read-xattr", "/x", Allow},
				{"file-write-data", "/x", Deny}, {"file-ioctl", "/x", Allow}, {"process-exec", "/bin/sh", Allow},
				{"process-exec-interpreter", "/bin/sh", Deny}, {"network-outbound", "", Allow}, {"network-bind", "", Allow},
				{"mach-lookup", "", Deny}, {"sysctl-read", "", Deny},
			},
		},
		{
			name: "quotes, backslashes and escapes in strings",
			profile: header + `(allow file-read* (literal "/q\"uote/back\\slash"))
(allow file-read* (literal "/tab\there/nl\nx"))
(allow file-write* (regex #"^/r\"x\\y$"))`,
			checks: []check{
				{"file-read-data", `/q"uote/back\slash`, Allow}, {"file-read-data", `/q"uote/back\\slash`, Deny},
				{"file-read-data", "/tab\there/nl\nx", Allow},
				{"file-write-data", `/r"x\y`, Allow}, {"file-write-data", `/r"x\\y`, Deny},
			},
		},
		{
			name: "non-UTF-8 bytes, raw and escaped; regexes count bytes",
			profile: header + "(allow file-read* (literal \"/n/\xff\xfe\"))\n" +
				`(allow file-read* (subpath "/e/\xff\x80"))
(allow file-write* (regex #"^/one/.$"))
(allow file-write* (regex #"^/two/[^/][^/]$"))`,
			checks: []check{
				{"file-read-data", "/n/\xff\xfe", Allow}, {"file-read-data", "/n/\xff", Deny},
				{"file-read-data", "/e/\xff\x80/z", Allow}, {"file-read-data", "/e/\xff\x81", Deny},
				{"file-write-data", "/one/\xff", Allow}, {"file-write-data", "/one/a", Allow},
				{"file-write-data", "/one/é", Deny}, {"file-write-data", "/two/é", Allow}, {"file-write-data", "/two/\xc3", Deny},
			},
		},
		{
			name:    "comments and layout",
			profile: "; a profile\n(version 1) ; trailing\n(deny default)\n\n\t(allow\n  file-read*\n  ; between\n  (subpath \"/a\"))",
			checks:  []check{{"file-read-data", "/a/b", Allow}, {"file-read-data", "/b", Deny}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.profile, tt.params)
			require.NoError(t, err)
			for _, c := range tt.checks {
				v, err := p.Eval(Query{Op: c.op, Path: c.path})
				require.NoError(t, err)
				assert.Equal(t, c.want, v.Action, "%s %q (rule %v)", c.op, c.path, v.Rule)
			}
		})
	}
}

func TestEvalRuleReported(t *testing.T) {
	p, err := Parse(header+"(allow file-read* (subpath \"/a\"))\n(deny file-read* (literal \"/a/x\"))", nil)
	require.NoError(t, err)
	v, err := p.Eval(Query{Op: "file-read-data", Path: "/a/x"})
	require.NoError(t, err)
	require.NotNil(t, v.Rule)
	assert.Equal(t, 4, v.Rule.Line)
	assert.Equal(t, `(deny file-read* (literal "/a/x"))`, v.Rule.String())
	v, err = p.Eval(Query{Op: "file-read-data", Path: "/b"})
	require.NoError(t, err)
	assert.Nil(t, v.Rule, "the default decided")
	assert.Equal(t, Deny, v.Action)
}

func TestEvalTargetsAndAddresses(t *testing.T) {
	p, err := Parse(header+`(allow signal (target same-sandbox))
(allow process-info-pidinfo (target self))
(allow network-outbound (remote tcp "localhost:8080"))
(allow network-outbound (remote ip "*:53"))
(deny network-outbound (subpath "/"))
(allow network-outbound (literal "/private/var/run/mDNSResponder"))
(allow network-bind (local udp "*:*"))`, nil)
	require.NoError(t, err)
	for _, c := range []struct {
		q    Query
		want Action
	}{
		{Query{Op: "signal", Target: "self"}, Allow},
		{Query{Op: "signal", Target: "children"}, Allow},
		{Query{Op: "signal", Target: "same-sandbox"}, Allow},
		{Query{Op: "signal", Target: "others"}, Deny},
		{Query{Op: "signal"}, Deny},
		{Query{Op: "process-info-pidinfo", Target: "self"}, Allow},
		{Query{Op: "process-info-pidinfo", Target: "children"}, Deny},
		{Query{Op: "network-outbound", Remote: "127.0.0.1:8080", Proto: "tcp"}, Allow},
		{Query{Op: "network-outbound", Remote: "[::1]:8080", Proto: "tcp"}, Allow},
		{Query{Op: "network-outbound", Remote: "127.0.0.1:8080", Proto: "udp"}, Deny},
		{Query{Op: "network-outbound", Remote: "10.0.0.1:8080", Proto: "tcp"}, Deny},
		{Query{Op: "network-outbound", Remote: "10.0.0.1:53", Proto: "udp"}, Allow},
		{Query{Op: "network-outbound", Path: "/var/run/docker.sock"}, Deny},
		{Query{Op: "network-outbound", Path: "/private/var/run/mDNSResponder"}, Allow},
		{Query{Op: "network-bind", Local: "0.0.0.0:9", Proto: "udp"}, Allow},
		{Query{Op: "network-bind", Local: "0.0.0.0:9", Proto: "tcp"}, Deny},
	} {
		v, err := p.Eval(c.q)
		require.NoError(t, err)
		assert.Equal(t, c.want, v.Action, "%+v", c.q)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		profile string
		params  map[string]string
		want    error
	}{
		{"", nil, ErrUnsupported},
		{"(deny default)", nil, ErrUnsupported},
		{"(version 2)\n(deny default)", nil, ErrUnsupported},
		{"(version 1)", nil, ErrUnsupported},
		{header + `(import "bsd.sb")`, nil, ErrUnsupported},
		{header + `(define x 1)`, nil, ErrUnsupported},
		{header + `(allow file-reed* (subpath "/a"))`, nil, ErrUnsupported},
		{header + `(allow file-r* (subpath "/a"))`, nil, ErrUnsupported},
		{header + `(allow file-read-* (subpath "/a"))`, nil, ErrUnsupported},
		{header + `(allow * (subpath "/a"))`, nil, ErrUnsupported},
		{header + `(allow (subpath "/a"))`, nil, ErrUnsupported},
		{header + `(allow default file-read*)`, nil, ErrUnsupported},
		{header + `(allow default (subpath "/a"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (vnode-type REGULAR-FILE))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath "/a") (with report))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath (string-append "/a" "/b")))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath (param "HOME")))`, nil, ErrParam},
		{header + `(allow file-read* (subpath (param "HOME")))`, map[string]string{"HOME": "rel/ative"}, ErrUnsupported},
		{header + `(allow file-read* (subpath "a/b"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath "/a/b/"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath "/a/../b"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath "/a//b"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath ""))`, nil, ErrUnsupported},
		{header + `(allow file-read* (literal #"/a"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath "/a" "/b"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath /a))`, nil, ErrUnsupported},
		{header + `(allow file-read* (require-not (literal "/a") (literal "/b")))`, nil, ErrUnsupported},
		{header + `(allow file-read* (require-all))`, nil, ErrUnsupported},
		{header + `(allow file-read* (regex "\\.env"))`, nil, ErrUnsupported},
		{header + `(allow signal (target pgrp))`, nil, ErrUnsupported},
		{header + `(allow network-outbound (remote ip "example.com:80"))`, nil, ErrUnsupported},
		{header + `(allow network-outbound (remote ip "*:0"))`, nil, ErrUnsupported},
		{header + `(allow network-outbound (remote ip "*:080"))`, nil, ErrUnsupported},
		{header + `(allow network-outbound (remote unix-socket "*:80"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (literal "/a\qb"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (literal "/a\x4"))`, nil, ErrSyntax},
		{header + `(allow file-read* (literal "/a\x00b"))`, nil, ErrUnsupported},
		{header + `(allow file-read* (subpath (param "P")))`, map[string]string{"P": "/a\x00"}, ErrUnsupported},
		{header + `(allow file-read* (literal "/a`, nil, ErrSyntax},
		{header + `(allow file-read* (regex #"/a`, nil, ErrSyntax},
		{header + `(allow file-read* (literal "/a")`, nil, ErrSyntax},
		{header + `(allow file-read*))`, nil, ErrSyntax},
		{header + `#| block |#`, nil, ErrUnsupported},
		{header + `(allow file-read* '(literal "/a"))`, nil, ErrUnsupported},
		{header + `(allow file-read* #t)`, nil, ErrUnsupported},
		{header + `allow`, nil, ErrUnsupported},
	}
	for _, tt := range tests {
		_, err := Parse(tt.profile, tt.params)
		var pe *ParseError
		if assert.ErrorAs(t, err, &pe, "%q", tt.profile) {
			assert.ErrorIs(t, err, tt.want, "%q: %v", tt.profile, err)
			assert.Positive(t, pe.Line)
		}
	}
}

func TestParseErrorPosition(t *testing.T) {
	_, err := Parse(header+"(allow file-read*\n   (bogus \"/a\"))", nil)
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 4, pe.Line)
	assert.Equal(t, 4, pe.Col)
	assert.Equal(t, `(bogus "/a")`, pe.Form)
}

func TestCompileRegex(t *testing.T) {
	ok := []struct {
		re      string
		match   []string
		noMatch []string
	}{
		{`^/a/[^/]+$`, []string{"/a/b", "/a/\xff\xfe"}, []string{"/a/", "/a/b/c"}},
		{`/[.][Ee][Nn][Vv][^/]*(/|$)`, []string{"/x/.env", "/.ENV.local/y"}, []string{"/x/env", "/x/a.env"}},
		{`^/x/(ab|cd)+$`, []string{"/x/ab", "/x/abcdab"}, []string{"/x/", "/x/ac"}},
		{`^/d/a{2,3}$`, []string{"/d/aa", "/d/aaa"}, []string{"/d/a", "/d/aaaa"}},
		{`^/d/a{2}b{1,}$`, []string{"/d/aab", "/d/aabbb"}, []string{"/d/ab"}},
		{`^/p/[[:digit:]]?x$`, []string{"/p/x", "/p/7x"}, []string{"/p/77x"}},
		{`^/b/[]a]$`, []string{"/b/]", "/b/a"}, []string{"/b/b"}},
		{`^/b/[^]a]$`, []string{"/b/b"}, []string{"/b/]", "/b/a"}},
		{`^/dot/\.\$\(\)\[\*\+\?\{\|\^\\$`, []string{`/dot/.$()[*+?{|^\`}, nil},
		{`^/nl/.$`, []string{"/nl/\n"}, []string{"/nl/\n\n"}},
		{`a}`, []string{"/a}"}, []string{"/a"}},
		{"^/hi/\xff$", []string{"/hi/\xff"}, []string{"/hi/\xfe", "/hi/ÿ"}},
	}
	for _, c := range ok {
		re, err := CompileRegex(c.re)
		require.NoError(t, err, c.re)
		for _, s := range c.match {
			assert.True(t, re.Match(s), "%q should match %q", c.re, s)
		}
		for _, s := range c.noMatch {
			assert.False(t, re.Match(s), "%q should not match %q", c.re, s)
		}
	}
	for _, re := range []string{
		``, `\d`, `\w`, `\s`, `\b`, `\1`, `\n`, `\x41`, `\101`, `a\`, `(?i)a`, `(?:a)`, `a*?`, `a**`, `a+*`, `a?+`, `a{2}*`,
		`*a`, `+`, `a|`, `|a`, `a||b`, `()`, `(a|)`, `(a`, `a)`, `[\]]`, `[[.a.]]`, `[[=a=]]`, `[[:word:]]`, `[a`, `{2}`,
		`a{3,2}`, `a{,3}`, `a{256}`, `a{x}`, `a{2`, `^*`, `$+`, `[z-a]`,
	} {
		_, err := CompileRegex(re)
		assert.ErrorIs(t, err, ErrUnsupported, "%q", re)
	}
}

func TestParseParams(t *testing.T) {
	m, err := ParseParams([]string{"ROOT=/a/b", "X=c=d", "EMPTY="})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ROOT": "/a/b", "X": "c=d", "EMPTY": ""}, m)
	for _, bad := range [][]string{{"NOEQUALS"}, {"=v"}, {"A=1", "A=2"}} {
		_, err := ParseParams(bad)
		assert.ErrorIs(t, err, ErrParam, "%q", bad)
	}
}

func TestQueryErrors(t *testing.T) {
	p, err := Parse(header, nil)
	require.NoError(t, err)
	for _, q := range []Query{
		{Op: "file-read*", Path: "/a"},
		{Op: "file-reed-data", Path: "/a"},
		{Op: "default"},
		{Op: "file-read-data", Path: "relative"},
		{Op: "file-read-data", Path: "/a\x00b"},
	} {
		_, err := p.Eval(q)
		var qe *QueryError
		assert.ErrorAs(t, err, &qe, "%+v", q)
		assert.ErrorIs(t, err, ErrQuery)
	}
	_, err = p.Allows("file-write*", "/a")
	assert.True(t, errors.Is(err, ErrQuery))
}

// TestDerivedProfiles parses the Seatbelt profiles policyderive renders
// for its golden files, with their parameters: every construct cordon
// emits must be inside the model's subset.
func TestDerivedProfiles(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/*.golden")
	if len(files) == 0 {
		t.Skip("no policyderive golden files yet")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		// The golden files write the test's base directory as $BASE.
		golden := strings.ReplaceAll(string(b), "$BASE", "/base")
		_, rest, ok := strings.Cut(golden, "== sbpl\n")
		if !ok {
			continue
		}
		prof, rest, _ := strings.Cut(rest, "-- params\n")
		paramText, _, _ := strings.Cut(rest, "-- ")
		params, err := ParseParams(strings.Fields(paramText))
		require.NoError(t, err, f)
		p, err := Parse(prof, params)
		require.NoError(t, err, f)
		assert.Equal(t, Deny, p.Default, f)
		assert.NotEmpty(t, p.Rules, f)
		if filepath.Base(f) != "coding.golden" {
			continue
		}
		// Coding mode: writes in the root allowed, hooks and configs at
		// any depth denied, the home's secrets unreadable.
		for _, c := range []check{
			{"file-write-data", "/base/ws/src/main.go", Allow},
			{"file-write-data", "/base/ws/.git/hooks/pre-commit", Deny},
			{"file-write-create", "/base/ws/sub/repo/.git/hooks/x", Deny},
			{"file-write-data", "/base/ws/.git/config", Deny},
			{"file-write-data", "/base/ws/.git/objects/ab", Allow},
			{"file-read-data", "/base/ws/.env", Deny},
			{"file-read-data", "/base/ws/README", Allow},
			{"file-read-data", "/base/home/.ssh/id_rsa", Deny},
			{"file-write-data", "/base/elsewhere", Deny},
		} {
			ok, err := p.Allows(c.op, c.path)
			require.NoError(t, err)
			assert.Equal(t, c.want == Allow, ok, "%s %s", c.op, c.path)
		}
	}
}
