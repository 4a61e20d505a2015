package policyderive

import (
	"fmt"
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

// TestSBPLAllowList evaluates the allow-list's SBPL rendering: the only
// network operation allowed is an outbound connection to the proxy's
// port on localhost; another port on localhost, a remote address, a
// bind, an inbound connection and Unix sockets are denied. The twin
// (network full) allows a remote address.
func TestSBPLAllowList(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	eval := func(p *policy.Policy) *sbplmodel.Profile {
		pr, err := Derive(p, root, "", root, nil)
		require.NoError(t, err)
		text, params, fid := SBPL(pr)
		pm, err := sbplmodel.ParseParams(params)
		require.NoError(t, err)
		prof, err := sbplmodel.Parse(text, pm)
		require.NoError(t, err, "outside the evaluated subset:\n%s", text)
		if p.Network == policy.NetworkAllowList {
			assert.Contains(t, fid.String(), "network proxy port", "the port-only rule is declared looser")
		}
		return prof
	}
	al := policy.Coding.Policy()
	al.Network = policy.NetworkAllowList
	al.Hosts = policy.HostRules{Allow: []string{"example.com"}}
	prof := eval(al)
	proxy := fmt.Sprintf("127.0.0.1:%d", ProxyPort)
	for _, c := range []struct {
		q    sbplmodel.Query
		want sbplmodel.Action
	}{
		{sbplmodel.Query{Op: "network-outbound", Remote: proxy, Proto: "tcp"}, sbplmodel.Allow},
		{sbplmodel.Query{Op: "network-outbound", Remote: fmt.Sprintf("[::1]:%d", ProxyPort), Proto: "tcp"}, sbplmodel.Allow},
		{sbplmodel.Query{Op: "network-outbound", Remote: "127.0.0.1:22", Proto: "tcp"}, sbplmodel.Deny},
		{sbplmodel.Query{Op: "network-outbound", Remote: "93.184.216.34:443", Proto: "tcp"}, sbplmodel.Deny},
		{sbplmodel.Query{Op: "network-outbound", Remote: "10.0.0.1:53", Proto: "udp"}, sbplmodel.Deny},
		{sbplmodel.Query{Op: "network-bind", Local: "127.0.0.1:8080", Proto: "tcp"}, sbplmodel.Deny},
		{sbplmodel.Query{Op: "network-inbound", Local: "127.0.0.1:8080", Proto: "tcp"}, sbplmodel.Deny},
		{sbplmodel.Query{Op: "network-outbound", Path: "/var/run/docker.sock"}, sbplmodel.Deny},
	} {
		v, err := prof.Eval(c.q)
		require.NoError(t, err)
		assert.Equal(t, c.want, v.Action, "%+v", c.q)
	}
	full := policy.Coding.Policy()
	full.Network = policy.NetworkFull
	v, err := eval(full).Eval(sbplmodel.Query{Op: "network-outbound", Remote: "93.184.216.34:443", Proto: "tcp"})
	require.NoError(t, err)
	assert.Equal(t, sbplmodel.Allow, v.Action, "twin: network full reaches a remote address")
}
