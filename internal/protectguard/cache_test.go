package protectguard

import (
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
	g1, err := c.For(p, root, "", []string{root})
	require.NoError(t, err)
	require.NotNil(t, g1)
	g2, err := c.For(p, root, "", []string{root})
	require.NoError(t, err)
	assert.Same(t, g1, g2, "the same guard for the same workspace")

	none := policy.Coding.Policy()
	none.Protect = policy.Protect{Disabled: true}
	g, err := c.For(none, root, "", []string{root})
	require.NoError(t, err)
	assert.Nil(t, g, "nothing to protect")
	g, err = c.For(p, root, "", nil)
	require.NoError(t, err)
	assert.Nil(t, g, "no writable tree")

	for _, home := range []string{"/h1", "/h2", "/h3"} {
		_, err := c.For(p, root, home, []string{root})
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, len(c.m), 2, "idle guards beyond the bound are dropped")
	g3, err := c.For(p, root, "", []string{root})
	require.NoError(t, err)
	assert.NotSame(t, g1, g3, "the dropped guard is built anew")
}
