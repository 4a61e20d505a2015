package protectguard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// TestCache: one guard per root, home, trees and protect rules; none when
// there is nothing to protect; idle guards beyond the bound are dropped.
func TestCache(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	c := NewCache(2, nil)
	p := policy.Coding.Policy()
	g1, err := c.For(compiled(t, p, root, ""), []string{root})
	require.NoError(t, err)
	require.NotNil(t, g1)
	g2, err := c.For(compiled(t, p, root, ""), []string{root})
	require.NoError(t, err)
	assert.Same(t, g1, g2, "the same guard for the same workspace")

	none := policy.Coding.Policy()
	none.Protect = policy.Protect{Disabled: true}
	g, err := c.For(compiled(t, none, root, ""), []string{root})
	require.NoError(t, err)
	assert.Nil(t, g, "nothing to protect")
	g, err = c.For(compiled(t, p, root, ""), nil)
	require.NoError(t, err)
	assert.Nil(t, g, "no writable tree")

	for _, home := range []string{"/h1", "/h2", "/h3"} {
		_, err := c.For(compiled(t, p, root, home), []string{root})
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, len(c.m), 2, "idle guards beyond the bound are dropped")
	g3, err := c.For(compiled(t, p, root, ""), []string{root})
	require.NoError(t, err)
	assert.NotSame(t, g1, g3, "the dropped guard is built anew")
}

// TestCacheEvictedStillPeer: a guard handed out and then dropped from a
// full cache before its command began is still a peer of the guard built
// anew for the same trees: the new guard's baseline does not take in what
// the first guard's command planted, so its end does not restore the
// hook the first guard's end removed.
func TestCacheEvictedStillPeer(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git/objects"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git/refs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	hook := filepath.Join(root, ".git/hooks/pre-commit")
	c := NewCache(1, nil)
	p := policy.Coding.Policy()
	ctx := context.Background()
	g1, err := c.For(compiled(t, p, root, ""), []string{root})
	require.NoError(t, err)
	_, err = c.For(compiled(t, p, root, "/other-home"), []string{root}) // drops g1 (idle)
	require.NoError(t, err)
	_, err = g1.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\nevil\n"), 0o755)) // command 1 plants
	g3, err := c.For(compiled(t, p, root, ""), []string{root})
	require.NoError(t, err)
	require.True(t, g1 != g3, "fixture: the first guard was dropped from the cache")
	_, err = g3.Begin(ctx) // command 2 starts while command 1 runs
	require.NoError(t, err)
	vs, err := g1.End(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, vs, "command 1's end removes the hook")
	_, err = os.Stat(hook)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = g3.End(ctx)
	require.NoError(t, err)
	_, err = os.Stat(hook)
	assert.ErrorIs(t, err, os.ErrNotExist, "command 2's guard restored the hook command 1 planted")
}

// TestCacheKeepsBroken: a guard whose last repair could not walk
// everything is never dropped: a guard built anew would take a fresh
// baseline with whatever that repair could not see.
func TestCacheKeepsBroken(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	c := NewCache(1, nil)
	p := policy.Coding.Policy()
	ctx := context.Background()
	g1, err := c.For(compiled(t, p, root, ""), []string{root})
	require.NoError(t, err)
	g1.opts.MaxEntries = 50
	_, err = g1.Begin(ctx)
	require.NoError(t, err)
	for i := range 100 {
		// .envrc is protected: each is recorded, even streaming.
		require.NoError(t, os.MkdirAll(filepath.Join(root, fmt.Sprint(i)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprint(i), ".envrc"), nil, 0o644))
	}
	_, err = g1.End(ctx)
	require.ErrorIs(t, err, ErrLimit)
	_, err = c.For(compiled(t, p, root, "/other-home"), []string{root})
	require.NoError(t, err)
	g2, err := c.For(compiled(t, p, root, ""), []string{root})
	require.NoError(t, err)
	assert.True(t, g1 == g2, "the broken guard was dropped")
}

// compiled is p compiled for root and home.
func compiled(t testing.TB, p *policy.Policy, root, home string) *policy.Checker {
	t.Helper()
	c, err := policy.NewChecker(p, root, home)
	require.NoError(t, err)
	return c
}
