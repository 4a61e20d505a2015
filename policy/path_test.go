package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree builds a workspace root, a home and an outside directory under one
// resolved temporary directory.
type tree struct {
	top, root, home, out string
}

func newTree(t *testing.T) tree {
	t.Helper()
	top, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	tr := tree{top: top, root: filepath.Join(top, "root"), home: filepath.Join(top, "home"), out: filepath.Join(top, "out")}
	for _, d := range []string{tr.root, tr.home, tr.out} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	return tr
}

func (tr tree) file(t *testing.T, p string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	return p
}

func mustChecker(t *testing.T, p *Policy, tr tree) *Checker {
	t.Helper()
	c, err := NewChecker(p, tr.root, tr.home)
	require.NoError(t, err)
	return c
}

func decidePath(t *testing.T, c *Checker, path string, op Op) *Verdict {
	t.Helper()
	v, err := c.DecidePath(path, op)
	require.NoError(t, err, path)
	return v
}

func TestModePresets(t *testing.T) {
	tr := newTree(t)
	tests := []struct {
		mode                           Mode
		writeIn, readOut, writeOut, sh Decision
		allowShell                     bool
		network                        Network
	}{
		{Readonly, Deny, Deny, Deny, Deny, false, NetworkNone},
		{Coding, Allow, Ask, Deny, Ask, true, NetworkNone},
		{Trusted, Allow, Allow, Ask, Allow, true, NetworkFull},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			p := tt.mode.Policy()
			assert.Equal(t, tt.allowShell, p.AllowShell)
			assert.Equal(t, tt.sh, p.ShellDefault)
			assert.Equal(t, tt.network, p.Network)
			c := mustChecker(t, p, tr)
			assert.Equal(t, Allow, decidePath(t, c, "a.txt", Read).Decision, "reads inside are always allowed")
			assert.Equal(t, tt.writeIn, decidePath(t, c, "a.txt", Write).Decision)
			assert.Equal(t, tt.readOut, decidePath(t, c, filepath.Join(tr.out, "f"), Read).Decision)
			assert.Equal(t, tt.writeOut, decidePath(t, c, filepath.Join(tr.out, "f"), Write).Decision)
		})
	}
}

func TestDecisionText(t *testing.T) {
	for _, d := range []Decision{Allow, Ask, Deny} {
		b, err := d.MarshalText()
		require.NoError(t, err)
		var back Decision
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, d, back)
	}
	var d Decision
	err := d.UnmarshalText([]byte("maybe"))
	var te *TextError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, TextError{Kind: "decision", Value: "maybe", Valid: []string{"allow", "ask", "deny"}}, *te, "the error names the bad value")
	assert.Equal(t, `invalid decision "maybe" (valid: allow, ask, deny)`, err.Error(), "and lists the valid ones")
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.Equal(t, Deny, Strictest(Allow, Deny, Ask))
	assert.Equal(t, Ask, Strictest(Allow, Ask))
	assert.Equal(t, Allow, Strictest())
	assert.True(t, Deny.Stricter(Ask))
	for _, s := range []string{"coding", "readonly", "trusted"} {
		var m Mode
		require.NoError(t, m.UnmarshalText([]byte(s)))
		assert.Equal(t, s, m.String())
	}
	var m Mode
	require.ErrorAs(t, m.UnmarshalText([]byte("yolo")), &te)
	assert.Equal(t, TextError{Kind: "mode", Value: "yolo", Valid: []string{"readonly", "coding", "trusted"}}, *te)
	var o Op
	require.ErrorAs(t, o.UnmarshalText([]byte("exec")), &te)
	assert.Equal(t, TextError{Kind: "op", Value: "exec", Valid: []string{"read", "write"}}, *te)
	var n Network
	require.ErrorAs(t, n.UnmarshalText([]byte("proxy")), &te)
	assert.Equal(t, TextError{Kind: "network", Value: "proxy", Valid: []string{"none", "full", "allowlist"}}, *te)
}

func TestPathRuleOrder(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, &Policy{
		Write:       Allow,
		DeniedPaths: []string{".env*"},
		PathRules: []PathRule{
			{Pattern: "secrets/", Action: Deny},
			{Pattern: "secrets/public", Action: Allow},
			{Pattern: "docs", Action: Ask, Ops: []Op{Write}},
			{Pattern: ".env.example", Action: Allow},
		},
	}, tr)
	tests := []struct {
		path string
		op   Op
		want Decision
		rule string
	}{
		{"secrets/key", Read, Deny, `path_rules[0] "secrets/"`},
		{"secrets/public/x", Read, Deny, `path_rules[0] "secrets/"`}, // first match wins
		{"docs/a.md", Write, Ask, `path_rules[2] "docs"`},
		{"docs/a.md", Read, Allow, "default: read inside root"}, // rule ops exclude read
		{".env.example", Read, Deny, `denied_paths[0] ".env*"`}, // denied_paths beat everything
		{"src/main.go", Write, Allow, "default: write inside root"},
	}
	for _, tt := range tests {
		v := decidePath(t, c, tt.path, tt.op)
		assert.Equal(t, tt.want, v.Decision, tt.path)
		assert.Equal(t, tt.rule, v.Rule, tt.path)
		assert.NotEmpty(t, v.Reason)
		assert.True(t, v.Inside)
	}
}

func TestShorthandOrder(t *testing.T) {
	tr := newTree(t)
	mode := Coding
	spec := &Spec{
		Mode:      &mode,
		Readable:  []string{tr.out},
		Writable:  []string{filepath.Join(tr.out, "cache")},
		PathRules: []PathRule{{Pattern: filepath.Join(tr.out, "cache", "private"), Action: Deny}},
	}
	p, err := spec.Build()
	require.NoError(t, err)
	require.Len(t, p.PathRules, 3)
	c := mustChecker(t, p, tr)
	assert.Equal(t, Deny, decidePath(t, c, filepath.Join(tr.out, "cache", "private", "x"), Read).Decision, "explicit path_rules beat writable")
	assert.Equal(t, Allow, decidePath(t, c, filepath.Join(tr.out, "cache", "y"), Write).Decision, "writable grants write")
	assert.Equal(t, Allow, decidePath(t, c, filepath.Join(tr.out, "z"), Read).Decision, "readable grants read")
	assert.Equal(t, Deny, decidePath(t, c, filepath.Join(tr.out, "z"), Write).Decision, "readable grants no write")
}

func TestSpecErrors(t *testing.T) {
	ro := Readonly
	tests := []struct {
		name string
		spec Spec
		want error
	}{
		{"policy+mode", Spec{Mode: &ro, Policy: &PolicySpec{}}, ErrPolicyWithShorthands},
		{"policy+readable", Spec{Readable: []string{"/x"}, Policy: &PolicySpec{}}, ErrPolicyWithShorthands},
		{"readonly+command_rules", Spec{Mode: &ro, CommandRules: []CommandRule{{Pattern: "ls", Action: Allow}}}, ErrReadonlyCommands},
		{"bad glob", Spec{DeniedPaths: []string{"ok", "a["}}, ErrMalformedPattern},
		{"relative system", Spec{System: SystemPaths{"usr"}}, ErrNotAbsolute},
		{"empty pattern", Spec{PathRules: []PathRule{{Pattern: "", Action: Deny}}}, ErrEmptyPattern},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.spec.Build()
			require.ErrorIs(t, err, tt.want)
		})
	}
	_, err := (&Spec{DeniedPaths: []string{"ok", "x", "a["}}).Build()
	var pe *PatternError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "denied_paths", pe.List)
	assert.Equal(t, 2, pe.Index)
	assert.Equal(t, "a[", pe.Pattern)
}

func TestMalformedPatterns(t *testing.T) {
	for _, s := range []string{"[", "a[", `a\`, "x/[b"} {
		_, err := CompilePattern(s, "/home/u")
		assert.ErrorIs(t, err, ErrMalformedPattern, s)
	}
	_, err := CompilePattern("", "/home/u")
	assert.ErrorIs(t, err, ErrEmptyPattern)
	_, err = CompilePattern("a\x00b", "/home/u")
	assert.ErrorIs(t, err, ErrNUL)
	_, err = CompilePattern("../x", "/home/u")
	assert.ErrorIs(t, err, ErrPatternEscapesRoot)
}

func TestBareNameAnyDepth(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, &Policy{Write: Allow, ReadOutside: Allow, DeniedPaths: []string{".env*"}}, tr)
	for _, p := range []string{".env", "a/b/.env.local", "a/.env/inner", filepath.Join(tr.out, ".env"), filepath.Join(tr.out, "x", ".env.prod", "y")} {
		assert.Equal(t, Deny, decidePath(t, c, p, Read).Decision, p)
	}
	for _, p := range []string{"env", "a/b/x.env", filepath.Join(tr.out, "dotenv")} {
		assert.Equal(t, Allow, decidePath(t, c, p, Read).Decision, p)
	}
	// Non-UTF-8 names are matched as bytes.
	assert.Equal(t, Deny, decidePath(t, c, "a/.env\xff\xfe", Read).Decision)
	assert.Equal(t, Allow, decidePath(t, c, "a/\xff.txt", Read).Decision)
}

func TestGlobSemantics(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, &Policy{Write: Allow, PathRules: []PathRule{
		{Pattern: "src/*.go", Action: Deny},
		{Pattern: "gen/**/out", Action: Deny},
		{Pattern: "log?.txt", Action: Deny},
		{Pattern: "[ab]x", Action: Deny},
	}}, tr)
	tests := []struct {
		path string
		want Decision
	}{
		{"src/a.go", Deny},
		{"src/sub/a.go", Allow}, // * does not cross /
		{"gen/out", Deny},
		{"gen/a/b/out/file", Deny},
		{"log1.txt", Deny},
		{"log12.txt", Allow},
		{"ax", Deny},
		{"cx", Allow},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, decidePath(t, c, tt.path, Write).Decision, tt.path)
	}
}

func TestAbsolutePatternThroughSymlink(t *testing.T) {
	tr := newTree(t)
	real := filepath.Join(tr.out, "real")
	tr.file(t, filepath.Join(real, "secret"))
	link := filepath.Join(tr.out, "link")
	require.NoError(t, os.Symlink(real, link))
	c := mustChecker(t, &Policy{ReadOutside: Allow, PathRules: []PathRule{{Pattern: link + "/secret", Action: Deny}}}, tr)
	assert.Equal(t, Deny, decidePath(t, c, filepath.Join(real, "secret"), Read).Decision, "the pattern's prefix is resolved")
	assert.Equal(t, Deny, decidePath(t, c, filepath.Join(link, "secret"), Read).Decision)
	assert.Equal(t, Allow, decidePath(t, c, filepath.Join(real, "other"), Read).Decision)
}

func TestSymlinkInsideRootJudgedByTarget(t *testing.T) {
	tr := newTree(t)
	secret := tr.file(t, filepath.Join(tr.home, ".ssh", "id_rsa"))
	require.NoError(t, os.Symlink(secret, filepath.Join(tr.root, "key")))
	require.NoError(t, os.Symlink(tr.home, filepath.Join(tr.root, "h")))
	c := mustChecker(t, Coding.Policy(), tr)
	for _, p := range []string{"key", "h/.ssh/id_rsa", "./h/.ssh/../.ssh/id_rsa"} {
		v := decidePath(t, c, p, Read)
		assert.Equal(t, Ask, v.Decision, p)
		assert.False(t, v.Inside, p)
		assert.Equal(t, secret, v.Path, p)
	}
}

func TestDotDotEscapes(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, Coding.Policy(), tr)
	v := decidePath(t, c, "../out/x", Write)
	assert.False(t, v.Inside)
	assert.Equal(t, filepath.Join(tr.out, "x"), v.Path)
	assert.Equal(t, Deny, v.Decision)
	// A missing directory followed by ".." is resolved lexically and stays inside.
	v = decidePath(t, c, "missing/../a", Write)
	assert.True(t, v.Inside)
	assert.Equal(t, "a", v.Rel)
	// A link followed by ".." is resolved physically, like the kernel does.
	require.NoError(t, os.MkdirAll(filepath.Join(tr.out, "deep", "er"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(tr.out, "deep", "er"), filepath.Join(tr.root, "l")))
	v = decidePath(t, c, "l/../x", Write)
	assert.Equal(t, filepath.Join(tr.out, "deep", "x"), v.Path)
	assert.False(t, v.Inside)
}

func TestRootClassification(t *testing.T) {
	tr := newTree(t)
	link := filepath.Join(tr.top, "rootlink")
	require.NoError(t, os.Symlink(tr.root, link))
	c, err := NewChecker(Coding.Policy(), link, tr.home)
	require.NoError(t, err)
	assert.Equal(t, tr.root, c.Root(), "the root is resolved once")
	v := decidePath(t, c, ".", Read)
	assert.Equal(t, ".", v.Rel)
	assert.True(t, v.Inside)
	v = decidePath(t, c, tr.root+"x/y", Read) // a sibling sharing the prefix is outside
	assert.False(t, v.Inside)
	v, err = c.DecidePathAt(filepath.Join(tr.root, "sub"), "f", Write)
	require.NoError(t, err)
	assert.Equal(t, "sub/f", v.Rel)
}

func TestHome(t *testing.T) {
	tr := newTree(t)
	p := &Policy{ReadOutside: Allow, DeniedPaths: []string{"~/.ssh"}}
	c := mustChecker(t, p, tr)
	assert.Equal(t, Deny, decidePath(t, c, "~/.ssh/id_rsa", Read).Decision)
	assert.Equal(t, Deny, decidePath(t, c, filepath.Join(tr.home, ".ssh"), Read).Decision)
	assert.Equal(t, Allow, decidePath(t, c, "~/notes", Read).Decision)

	// An unknown home never becomes "/": the pattern matches nothing and
	// "~" paths are errors.
	c, err := NewChecker(p, tr.root, "")
	require.NoError(t, err)
	assert.Equal(t, Allow, decidePath(t, c, "/.ssh/x", Read).Decision)
	_, err = c.DecidePath("~/.ssh/id_rsa", Read)
	assert.ErrorIs(t, err, ErrNoHome)
	_, err = c.DecidePath("~bob/x", Read)
	assert.ErrorIs(t, err, ErrTildeUser)
}

func TestNULRejected(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, Coding.Policy(), tr)
	_, err := c.DecidePath("a\x00b", Read)
	var pe *PathError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, ErrNUL)
	_, err = (&Spec{DeniedPaths: []string{"a\x00"}}).Build()
	assert.ErrorIs(t, err, ErrNUL)
}

func TestProtectAnyDepth(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, Trusted.Policy(), tr)
	deep := "a/b/c/d/e"
	for _, p := range []string{".git/hooks/pre-commit", ".git/config", deep + "/.git/hooks/post-checkout", deep + "/.git/config", ".gitmodules", ".vscode/settings.json", ".envrc", "x/.mcp.json", filepath.Join(tr.home, ".bashrc"), filepath.Join(tr.home, ".gitconfig")} {
		v := decidePath(t, c, p, Write)
		assert.Equal(t, Deny, v.Decision, p)
		assert.True(t, strings.HasPrefix(v.Rule, "protect["), v.Rule)
		assert.Equal(t, Allow, decidePath(t, c, p, Read).Decision, "protect only denies writes: %s", p)
	}
	for _, p := range []string{".git/objects/ab/cd", ".git/index", ".git/refs/heads/main", deep + "/.git/HEAD", "src/config"} {
		assert.Equal(t, Allow, decidePath(t, c, p, Write).Decision, p)
	}
	p := Trusted.Policy()
	p.Protect = Protect{Disabled: true}
	c = mustChecker(t, p, tr)
	assert.Equal(t, Allow, decidePath(t, c, ".git/hooks/x", Write).Decision)
	p.Protect = Protect{Disabled: true, Extra: []string{"Makefile"}}
	c = mustChecker(t, p, tr)
	assert.Equal(t, Deny, decidePath(t, c, "sub/Makefile", Write).Decision)
}

func TestDecideResolvedTouchesNothing(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, Coding.Policy(), tr)
	v := c.DecideResolved(filepath.Join(tr.root, "does", "not", "exist"), Write)
	assert.Equal(t, Allow, v.Decision)
	assert.Equal(t, "does/not/exist", v.Rel)
}

func TestShellDisabledNormalised(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, &Policy{AllowShell: false, ShellDefault: Allow}, tr)
	assert.Equal(t, Deny, c.Policy().ShellDefault)
}

func TestPatternAccessors(t *testing.T) {
	tr := newTree(t)
	tests := []struct {
		pat     string
		kind    PatternKind
		base    string
		literal bool
	}{
		{"/a/b/*.go", PatternAbsolute, "/a/b", false},
		{"/a/b/", PatternAbsolute, "/a/b", true},
		{"~/x", PatternAbsolute, tr.home + "/x", true},
		{"src/gen/**", PatternRelative, "src/gen", false},
		{"**/.git/hooks", PatternRelative, "", false},
		{".env*", PatternName, "", false},
		{"secrets", PatternName, "", true},
	}
	for _, tt := range tests {
		p, err := CompilePattern(tt.pat, tr.home)
		require.NoError(t, err, tt.pat)
		assert.Equal(t, tt.kind, p.Kind(), tt.pat)
		assert.Equal(t, tt.base, p.Base(), tt.pat)
		assert.Equal(t, tt.literal, p.Literal(), tt.pat)
	}
	p, _ := CompilePattern("/a/b/*.go", "")
	assert.True(t, p.MayMatchBelow("/a", "", false))
	assert.True(t, p.MayMatchBelow("/a/b/c", "", false))
	assert.False(t, p.MayMatchBelow("/z", "", false))
	n, _ := CompilePattern(".env*", "")
	assert.True(t, n.MatchName(".env.local"))
	assert.False(t, n.MatchName("x.env"))
	r, _ := CompilePattern("src/gen", "")
	assert.False(t, r.MayMatchBelow("/x", "", false), "relative patterns never match outside")
	assert.True(t, r.MayMatchBelow(tr.root+"/src", "src", true))
	assert.False(t, r.MayMatchBelow(tr.root+"/doc", "doc", true))
}

func TestDeniedErrorIsPermission(t *testing.T) {
	err := error(&DeniedError{Op: "read", Path: "/x", Rule: "r", Decision: Deny})
	assert.True(t, errors.Is(err, fs.ErrPermission))
}

// A "*" that matches the empty string must still match the path itself
// and its subtree (doublestar fails on glob+"/**" there).
func TestGlobEmptyStarSubtree(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, &Policy{Write: Allow, PathRules: []PathRule{{Pattern: "**/.env*", Action: Deny}, {Pattern: "src/x*", Action: Deny}}}, tr)
	for _, p := range []string{"a/.env", ".env", "a/.env/b", "src/x", "src/x/y", "src/xa"} {
		assert.Equal(t, Deny, decidePath(t, c, p, Read).Decision, p)
	}
	assert.Equal(t, Allow, decidePath(t, c, "src/y", Read).Decision)
}

func TestSystemSecretsDenied(t *testing.T) {
	tr := newTree(t)
	c := mustChecker(t, Trusted.Policy(), tr)
	v := decidePath(t, c, SystemSecrets()[0], Read)
	assert.Equal(t, Deny, v.Decision)
	assert.True(t, strings.HasPrefix(v.Rule, "system_secrets[0]"), v.Rule)
	assert.Equal(t, Allow, decidePath(t, c, "/etc/hostname", Read).Decision, "the rest of /etc stays readable in trusted mode")
}
