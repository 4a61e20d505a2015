package policyderive

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
)

// filterExpr is a parsed SBPL filter expression, for evaluating the
// regions the SBPL renderer emits.
type filterExpr struct {
	op   string // "subpath", "literal", "regex", "require-all", "require-any", "require-not", "param", "string"
	val  string
	args []*filterExpr
	re   *regexp.Regexp // compiled on first use
}

// parseFilter parses the filter subset region emits.
func parseFilter(s string) (*filterExpr, string, error) {
	s = strings.TrimLeft(s, " ")
	switch {
	case strings.HasPrefix(s, `#"`):
		end := strings.IndexByte(s[2:], '"')
		if end < 0 {
			return nil, "", fmt.Errorf("unterminated regex in %q", s)
		}
		return &filterExpr{op: "regex-lit", val: s[2 : 2+end]}, s[3+end:], nil
	case strings.HasPrefix(s, `"`):
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return nil, "", fmt.Errorf("unterminated string in %q", s)
		}
		return &filterExpr{op: "string", val: s[1 : 1+end]}, s[2+end:], nil
	case !strings.HasPrefix(s, "("):
		i := strings.IndexAny(s, " )")
		if i <= 0 {
			return nil, "", fmt.Errorf("unexpected %q", s)
		}
		return &filterExpr{op: "symbol", val: s[:i]}, s[i:], nil
	default:
		s = s[1:]
		i := strings.IndexAny(s, " )")
		if i < 0 {
			return nil, "", fmt.Errorf("bad expression %q", s)
		}
		e := &filterExpr{op: s[:i]}
		s = s[i:]
		for {
			s = strings.TrimLeft(s, " ")
			if strings.HasPrefix(s, ")") {
				return e, s[1:], nil
			}
			a, rest, err := parseFilter(s)
			if err != nil {
				return nil, "", err
			}
			e.args = append(e.args, a)
			s = rest
		}
	}
}

func (e *filterExpr) value(params map[string]string) string {
	if e.op == "param" {
		return params[e.args[0].val]
	}
	return e.val
}

func (e *filterExpr) eval(t interface{ Fatalf(string, ...any) }, abs string, params map[string]string) bool {
	switch e.op {
	case "subpath":
		return abspath.Within(abs, e.args[0].value(params))
	case "literal":
		return abs == e.args[0].value(params)
	case "regex":
		if e.re == nil {
			e.re = regexp.MustCompile(e.args[0].val)
		}
		return e.re.MatchString(abs)
	case "require-all":
		for _, a := range e.args {
			if !a.eval(t, abs, params) {
				return false
			}
		}
		return true
	case "require-any":
		for _, a := range e.args {
			if a.eval(t, abs, params) {
				return true
			}
		}
		return false
	case "require-not":
		return !e.args[0].eval(t, abs, params)
	}
	t.Fatalf("unknown filter %q", e.op)
	return false
}

// TestRegexTranslation checks that the SBPL regions of generated
// patterns match what policy.Pattern.Match matches: at least in deny mode
// (also with letters in the other case), exactly in allow mode when the
// translation succeeds.
func TestRegexTranslation(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, home := base+"/wq.s", base+"/h(o)me"
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.MkdirAll(home, 0o755))
	names := []string{
		".env", ".ENV", ".env.local", "x.pem", "X.PEM", "a", "b", "ab", "ba", "c", "src", "k.key", ".git", "hooks", "config",
		"data", "date", "dat", "ünï", "é", "éx", "\xff", "\xffx", "w*[e(i)r$d", "q\"u'o", "n\nl", "x", "y", "xy", "wq.s", "h(o)me", "tmp", "**",
	}
	pats := []string{
		".env*", "*.pem", "[ab]", "[!a]x", "[^a]", "dat?", "{a,b}", "{x,y}*", `\*x`, "ünï", "é?", "[a-c]*", "**", "*", "?", "x[y-z]",
		"src/*.key", "**/.git/hooks", "a/**", "a/**/b", "{a,b}/x", "**/x?", "*/config", "a/[bc]/*", "**", "src/**/*.pem",
		"~/.ssh/id_*", "~/**/*.pem", "~/d?t/x", base + "/*/data", base + "/wq.s/a*", `w\*\[e(i)r$d`, "w*[(]i)r$d", "h(o)me", "wq.s",
		"\xff*", "*\xff", "[é]", "{é,a}",
	}
	rapid.Check(t, func(rt *rapid.T) {
		pat := rapid.SampledFrom(pats).Draw(rt, "pattern")
		if !strings.Contains(pat, "/") && !strings.HasPrefix(pat, "~") && rapid.Bool().Draw(rt, "as relative") {
			pat = "**/" + pat
		}
		allow := rapid.Bool().Draw(rt, "allow")
		p := &policy.Policy{Write: policy.Allow, AllowShell: true, Protect: policy.Protect{Disabled: true}, System: []string{}}
		if allow {
			p.PathRules = []policy.PathRule{{Pattern: pat, Action: policy.Allow}}
		} else {
			p.DeniedPaths = []string{pat}
		}
		c, err := policy.NewChecker(p, root, home)
		if err != nil {
			rt.Skipf("pattern %q: %v", pat, err)
		}
		pr, err := Derive(p, root, home, "", nil)
		require.NoError(rt, err)
		r := pr.Rules[0]
		if r.Never || r.Path != "" {
			return
		}
		s := &sbplBuilder{pr: pr, f: &Fidelity{}, keys: map[string]string{}}
		mode := reDeny
		if allow {
			mode = reAllow
		}
		filter, res := s.region(0, r, mode)
		if !res.ok {
			require.True(rt, allow, "a deny region always translates")
			return
		}
		fe, rest, err := parseFilter(filter)
		require.NoError(rt, err, filter)
		require.Empty(rt, strings.TrimSpace(rest))
		params := map[string]string{}
		for _, kv := range s.params {
			k, v, _ := strings.Cut(kv, "=")
			params[k] = v
		}
		require.NotContains(rt, strings.ReplaceAll(filter, `#"`, ""), `\`, "no backslash in the profile")
		for range 30 {
			prefix := rapid.SampledFrom([]string{root, home, base, "/", base + "/out", root + "/src", home + "/.ssh"}).Draw(rt, "prefix")
			segs := rapid.SliceOfN(rapid.SampledFrom(names), 0, 4).Draw(rt, "segs")
			abs := filepath.Clean(prefix + "/" + strings.Join(segs, "/"))
			rel, inside := c.Inside(abs)
			want := c.Rules()[0].Pattern.Match(abs, rel, inside)
			got := fe.eval(rt, abs, params)
			if allow {
				assert.Equal(rt, want, got, "allow region %s on %q", filter, abs)
			} else if want {
				assert.True(rt, got, "deny region %s misses %q", filter, abs)
				upper := strings.ToUpper(abs)
				if !strings.Contains(upper, "\xff") && res.exact {
					assert.True(rt, fe.eval(rt, upper, params), "deny region %s misses the other case %q", filter, upper)
				}
			}
		}
	})
}

func TestLiteralRegexEscaping(t *testing.T) {
	tests := []struct {
		in        string
		deny      string
		allow     string
		allowOK   bool
		denyExact bool
	}{
		{in: "/a.b", deny: "/[Aa][.][Bb]", allow: "/a[.]b", allowOK: true, denyExact: true},
		{in: "/x(1)*+?{}|$[]", deny: "/[Xx][(]1[)][*][+][?][{][}][|][$][[][]]", allow: "/x[(]1[)][*][+][?][{][}][|][$][[][]]", allowOK: true, denyExact: true},
		{in: `/q"u\o^`, deny: "/[Qq][^/][Uu][^/][Oo][^/]"},
		{in: "/n\nl", deny: "/[Nn][^ -~]+[Ll]"},
		{in: "/\xff\xfe/\xc3\xa9x", deny: "/[^ -~]+/[^ -~]+[Xx]"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			d := literalRegex(tt.in, reDeny)
			assert.Equal(t, tt.deny, d.re)
			assert.Equal(t, tt.denyExact, d.exact)
			a := literalRegex(tt.in, reAllow)
			assert.Equal(t, tt.allowOK, a.ok)
			if tt.allowOK {
				assert.Equal(t, tt.allow, a.re)
				assert.True(t, regexp.MustCompile("^"+a.re+"$").MatchString(tt.in))
			}
			assert.True(t, regexp.MustCompile("^"+d.re+"$").MatchString(tt.in))
			assert.NotContains(t, d.re, `"`)
			assert.NotContains(t, d.re, `\`)
		})
	}
}
