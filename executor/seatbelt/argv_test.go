package seatbelt_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/cordon-sandbox/cordon/executor/seatbelt"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

const profile = "(version 1)\n(deny default)\n(allow file-read* (subpath (param \"ROOT\")))\n"

func TestArgv(t *testing.T) {
	tests := []struct {
		name    string
		params  []string
		command string
	}{
		{name: "plain", params: []string{"ROOT=/w"}, command: "echo hi"},
		{name: "equals in the value", params: []string{"ROOT=/w/a=b=c", "X_1=="}, command: "true"},
		{name: "spaces and quotes", params: []string{`ROOT=/w/my "q" 'x' dir`}, command: `printf '%s\n' "a b" 'c"d'`},
		{name: "parentheses, backslashes, semicolons", params: []string{`ROOT=/w/(p) \x ;#`}, command: "a; b && c | d"},
		{name: "non-UTF-8 and newlines", params: []string{"ROOT=/w/\xff\xfe\n\tz"}, command: "cat '\xff'\necho $(id) `date` ${HOME}"},
		{name: "command looks like options", params: []string{"ROOT=/w"}, command: "-p (allow default) -D X=y"},
		{name: "empty command", params: []string{"ROOT=/w"}, command: ""},
		{name: "unreferenced parameter", params: []string{"ROOT=/w", "UNUSED=/x"}, command: "true"},
		{name: "value looks like an option", params: []string{"ROOT=-p"}, command: "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := seatbelt.Argv(profile, tt.params, tt.command)
			require.NoError(t, err)
			want := []string{seatbelt.Program, "-p", profile}
			for _, p := range tt.params {
				want = append(want, "-D", p)
			}
			want = append(want, "/bin/sh", "-c", tt.command)
			assert.Equal(t, want, argv)
			// The command is one argument, never part of the profile.
			assert.Equal(t, tt.command, argv[len(argv)-1])
			if tt.command != "" {
				assert.NotContains(t, argv[2], tt.command)
			}
		})
	}
}

func TestArgvErrors(t *testing.T) {
	tests := []struct {
		name    string
		profile string
		params  []string
		command string
		field   string
	}{
		{name: "empty profile", profile: "", params: nil, field: "profile"},
		{name: "blank profile", profile: " \n\t", params: nil, field: "profile"},
		{name: "NUL in profile", profile: profile + "\x00", params: []string{"ROOT=/w"}, field: "profile"},
		{name: "no equals", profile: profile, params: []string{"ROOT"}, field: "params[0]"},
		{name: "empty key", profile: profile, params: []string{"ROOT=/w", "=/x"}, field: "params[1]"},
		{name: "key with a dash", profile: profile, params: []string{"ROOT=/w", "A-B=1"}, field: "params[1]"},
		{name: "key with a space", profile: profile, params: []string{"RO OT=/w"}, field: "params[0]"},
		{name: "key starting with a digit", profile: profile, params: []string{"ROOT=/w", "1A=x"}, field: "params[1]"},
		{name: "key not ASCII", profile: profile, params: []string{"ROOT=/w", "É=x"}, field: "params[1]"},
		{name: "NUL in value", profile: profile, params: []string{"ROOT=/w\x00/etc"}, field: "params[0]"},
		{name: "key given twice", profile: profile, params: []string{"ROOT=/w", "ROOT=/"}, field: "params[1]"},
		{name: "missing parameter", profile: profile, params: []string{"OTHER=/w"}, field: "profile"},
		{name: "NUL in command", profile: profile, params: []string{"ROOT=/w"}, command: "true\x00rm -rf /", field: "command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := seatbelt.Argv(tt.profile, tt.params, tt.command)
			assert.Nil(t, argv)
			var ae *seatbelt.ArgvError
			require.ErrorAs(t, err, &ae)
			assert.ErrorIs(t, err, seatbelt.ErrInvalidArgv)
			assert.Equal(t, tt.field, ae.Field)
		})
	}
}

// TestArgvProperty: for any profile, parameters and command (any bytes
// but NUL), the command line holds each of them as one argument, in
// order, and nothing else.
func TestArgvProperty(t *testing.T) {
	anyBytes := rapid.StringOfN(rapid.Rune().Filter(func(r rune) bool { return r != 0 }), 0, 40, -1)
	rawBytes := rapid.Custom(func(t *rapid.T) string {
		b := rapid.SliceOfN(rapid.Byte().Filter(func(b byte) bool { return b != 0 }), 0, 30).Draw(t, "raw")
		return string(b)
	})
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 5).Draw(rt, "n")
		var params []string
		text := "(version 1)\n(deny default)\n" + anyBytes.Draw(rt, "profile text")
		for i := range n {
			key := rapid.StringMatching(`[A-Za-z_][A-Za-z0-9_]{0,8}`).Draw(rt, "key")
			if slices.ContainsFunc(params, func(p string) bool { return strings.HasPrefix(p, key+"=") }) {
				continue
			}
			value := rapid.OneOf(anyBytes, rawBytes).Draw(rt, "value")
			params = append(params, key+"="+value)
			if i%2 == 0 {
				text += `(allow file-read* (subpath (param "` + key + `")))`
			}
		}
		command := rapid.OneOf(anyBytes, rawBytes).Draw(rt, "command")
		argv, err := seatbelt.Argv(text, params, command)
		require.NoError(rt, err)
		require.Len(rt, argv, 3+2*len(params)+3)
		assert.Equal(rt, []string{seatbelt.Program, "-p", text}, argv[:3])
		for i, p := range params {
			assert.Equal(rt, "-D", argv[3+2*i])
			assert.Equal(rt, p, argv[4+2*i])
		}
		assert.Equal(rt, []string{"/bin/sh", "-c", command}, argv[len(argv)-3:])
	})
}

// TestArgvOfRenderedProfile: a profile policyderive renders for a root
// whose name holds every character that could break SBPL or a command
// line goes through Argv, with every path only in a parameter.
func TestArgvOfRenderedProfile(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	odd := "my ws \"q\" 'x' (p) [a]*? $X ;=\\ \xff"
	root, home := filepath.Join(base, odd), filepath.Join(base, "home=me")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.MkdirAll(home, 0o755))
	p := policy.Coding.Policy()
	p.DeniedPaths = append(p.DeniedPaths, ".env*", "~/.ssh")
	pr, err := policyderive.Derive(p, root, home, root, []policy.Grant{{Path: home, Op: policy.Read}})
	require.NoError(t, err)
	text, params, _ := policyderive.SBPL(pr.WithTmpDir(filepath.Join(base, "tmp dir")))

	argv, err := seatbelt.Argv(text, params, "ls -la")
	require.NoError(t, err)
	assert.Contains(t, argv, "ROOT="+root)
	assert.Contains(t, argv, "TMP="+filepath.Join(base, "tmp dir"))
	assert.NotContains(t, argv[2], odd)
	assert.NotContains(t, argv[2], base)
	assert.Equal(t, []string{"/bin/sh", "-c", "ls -la"}, argv[len(argv)-3:])
}
