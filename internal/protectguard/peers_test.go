//go:build unix

package protectguard_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestPeersShareBaseline: a command running under one guard plants a
// hook; a second command whose writable trees differ (a grant) starts
// under another guard of the same cache, then ends after the first. The
// second guard's baseline of the region both guard is the first one's,
// so its end does not restore the hook the first one's end removed. The
// twin: two guards of separate caches (no peers) do restore it.
func TestPeersShareBaseline(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(map[bool]string{true: "one cache", false: "two caches"}[shared], func(t *testing.T) {
			dir := evalTemp(t)
			other := evalTemp(t)
			require.NoError(t, exec.Command("git", "init", "-q", dir).Run())
			hook := filepath.Join(dir, ".git", "hooks", "post-checkout")
			p := policy.Coding.Policy()
			c1 := protectguard.NewCache(16, nil)
			c2 := c1
			if !shared {
				c2 = protectguard.NewCache(16, nil)
			}
			g1, err := c1.For(protectguard.Compiled(t, p, dir, ""), []string{dir})
			require.NoError(t, err)
			g2, err := c2.For(protectguard.Compiled(t, p, dir, ""), []string{dir, other})
			require.NoError(t, err)
			require.NotSame(t, g1, g2)
			_, err = g1.Begin(t.Context())
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\necho pwned\n"), 0o755))
			_, err = g2.Begin(t.Context())
			require.NoError(t, err)
			vs, err := g1.End(t.Context())
			require.NoError(t, err)
			require.NotEmpty(t, vs, "the first guard did not remove the hook")
			_, err = g2.End(t.Context())
			require.NoError(t, err)
			_, err = os.Stat(hook)
			if shared {
				assert.ErrorIs(t, err, os.ErrNotExist, "the second guard restored the hook the first removed")
				return
			}
			assert.NoError(t, err, "separate guards with no peers restore it (the fixture works)")
		})
	}
}

func evalTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// TestPeersRepairInOwnTree: a guard that took a region from a running
// peer repairs it walking from its own tree: when its command swapped
// the peer's tree for a symbolic link to a directory outside, the
// restore does not write there. The twin: the file is restored (or the
// repair fails) without following the link.
func TestPeersRepairInOwnTree(t *testing.T) {
	ws := evalTemp(t)
	outside := evalTemp(t)
	sub := filepath.Join(ws, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, ".envrc"), []byte("export A=1\n"), 0o644))
	p := policy.Coding.Policy()
	c := protectguard.NewCache(16, nil)
	peer, err := c.For(protectguard.Compiled(t, p, ws, ""), []string{sub})
	require.NoError(t, err)
	g, err := c.For(protectguard.Compiled(t, p, ws, ""), []string{ws})
	require.NoError(t, err)
	_, err = peer.Begin(t.Context())
	require.NoError(t, err)
	defer peer.End(t.Context())
	_, err = g.Begin(t.Context())
	require.NoError(t, err)
	// g's command swaps sub for a link to outside.
	require.NoError(t, os.Rename(sub, filepath.Join(ws, "x")))
	require.NoError(t, os.Symlink(outside, sub))
	_, _ = g.End(t.Context())
	_, err = os.Stat(filepath.Join(outside, ".envrc"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the repair followed the link and wrote outside the trees")
}
