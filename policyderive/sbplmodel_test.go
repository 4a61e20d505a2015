package policyderive

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive/internal/sbplmodel"
)

// TestSBPLRenderedProfile evaluates rendered profiles with the SBPL model
// (the subset cordon emits, last match wins): paths created after the
// start are denied by the regex rules, .git/hooks is denied at any depth,
// and a root full of regex metacharacters and quotes is escaped so that
// its denies still match and its grants still work. Every denial has an
// allowed twin.
func TestSBPLRenderedProfile(t *testing.T) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(top, `w "q\(x*[$^.+?{|`)
	home := filepath.Join(top, "home")
	for _, d := range []string{root, filepath.Join(root, ".git"), filepath.Join(home, ".ssh")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("secret\n"), 0o600))

	eval := func(t *testing.T, p *policy.Policy) func(op, path string) bool {
		t.Helper()
		pr, err := Derive(p, root, home, root, nil)
		require.NoError(t, err)
		text, params, _ := SBPL(pr)
		pm, err := sbplmodel.ParseParams(params)
		require.NoError(t, err)
		prof, err := sbplmodel.Parse(text, pm)
		require.NoError(t, err, "the rendered profile is outside the evaluated subset:\n%s", text)
		return func(op, path string) bool {
			ok, err := prof.Allows(op, path)
			require.NoError(t, err)
			return ok
		}
	}

	sh, err := filepath.EvalSymlinks("/bin/sh") // Seatbelt sees resolved paths
	require.NoError(t, err)
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*", "secrets/**"}
	allows := eval(t, p)
	cases := []struct {
		op, path string
		want     bool
	}{
		{"file-read-data", filepath.Join(root, "main.go"), true},
		{"file-read-data", filepath.Join(root, ".env.new"), false}, // created after the start
		{"file-read-data", filepath.Join(root, "a", "b", ".env"), false},
		{"file-read-data", filepath.Join(root, "a", "b", "env"), true},
		{"file-read-data", filepath.Join(root, "secrets"), false}, // "x/**" is x too
		{"file-read-data", filepath.Join(root, "secrets", "key"), false},
		{"file-read-data", filepath.Join(root, "secretsx"), true},
		{"file-write-data", filepath.Join(root, "a", "b", "new.go"), true},
		{"file-write-create", filepath.Join(root, "a", "b", ".git", "hooks", "pre-commit"), false}, // a nested repository, later
		{"file-write-create", filepath.Join(root, ".git", "hooks", "post-checkout"), false},
		{"file-write-data", filepath.Join(root, ".git", "config"), false},
		{"file-write-data", filepath.Join(root, ".git", "index"), true},
		{"file-read-data", filepath.Join(home, ".ssh", "id_rsa"), false},
		{"file-write-data", filepath.Join(top, "outside"), false},
		{"process-exec", sh, true}, // a System path
		{"process-exec", filepath.Join(home, ".ssh", "id_rsa"), false},
		{"network-outbound", "", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, allows(c.op, c.path), "%s %q", c.op, c.path)
	}

	full := policy.Coding.Policy()
	full.Network = policy.NetworkFull
	assert.True(t, eval(t, full)("network-outbound", ""), "network full: the twin of the network denial")
}
