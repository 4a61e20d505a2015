//go:build unix

package policyderive

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// listenUnix leaves a listening Unix socket at p for the test's duration.
func listenUnix(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	l, err := net.Listen("unix", p)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
}

// A daemon whose socket lives in the writable root (a private dockerd
// under build/) must not be reachable: every socket found in a searched
// tree is hidden unless a path rule or grant names it.
func TestDeriveHidesSocketsInTheRoot(t *testing.T) {
	// Socket paths are limited to 108 bytes: keep the fixture short.
	base, err := os.MkdirTemp("/tmp", "cs")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	base, err = filepath.EvalSymlinks(base)
	require.NoError(t, err)
	root, home := base+"/ws", base+"/h"
	listenUnix(t, root+"/build/d.sock")
	listenUnix(t, root+"/sub/named.sock")
	listenUnix(t, home+"/agent.sock")
	require.NoError(t, os.WriteFile(root+"/plain", []byte("x"), 0o644))

	p := policy.Coding.Policy()
	p.Secrets = []string{}
	p.PathRules = []policy.PathRule{{Pattern: "sub/named.sock", Action: policy.Allow}}
	pr, err := Derive(p, root, home, "", nil)
	require.NoError(t, err)
	sockets := map[string]MaskKind{}
	for _, m := range pr.Masks {
		if m.Reason == "socket" {
			sockets[m.Path] = m.Kind
		}
	}
	assert.Equal(t, map[string]MaskKind{root + "/build/d.sock": Hide}, sockets,
		"the unnamed socket is hidden; the one a path rule names is not (twin); the home is not granted, so not searched")
	assert.NotContains(t, maskPaths(pr), root+"/plain", "an ordinary file is not masked")
	assert.Equal(t, []string{root + "/sub/named.sock"}, pr.Sockets, "the named socket is reported (landlock lets such a profile create Unix sockets)")

	// Granting the home for reading searches it: its socket is hidden too.
	pr, err = Derive(p, root, home, "", []policy.Grant{{Path: home, Op: policy.Read}})
	require.NoError(t, err)
	assert.Contains(t, maskPaths(pr), home+"/agent.sock")
	// An approved write grant of the socket itself names it.
	pr, err = Derive(p, root, home, "", []policy.Grant{{Path: root + "/build/d.sock", Op: policy.Write}})
	require.NoError(t, err)
	assert.NotContains(t, maskPaths(pr), root+"/build/d.sock")
}
