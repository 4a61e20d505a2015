package backend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policyderive"
)

// TestRegistryDerive: a derivation during which another sandbox created
// a mount point is run again with the new set; Derive returns with the
// registry locked, so the set cannot change before the caller acquires.
// The last user removes the mount point, and only one this process
// created.
func TestRegistryDerive(t *testing.T) {
	r := New()
	dir := t.TempDir()
	a := policyderive.Mask{Path: filepath.Join(dir, "a"), Kind: policyderive.ReadOnly}
	b := policyderive.Mask{Path: filepath.Join(dir, "b"), Kind: policyderive.ReadOnly}
	require.NoError(t, os.Mkdir(b.Path, 0o755)) // b exists already: not created here

	var seen [][]policyderive.Mask
	pr, err := r.Derive(func(live []policyderive.Mask) (*policyderive.Profile, error) {
		seen = append(seen, live)
		if len(seen) == 1 {
			// Another sandbox acquires a new mount point meanwhile.
			r.Lock()
			r.Acquire([]policyderive.Mask{a, b})
			r.Unlock()
			require.NoError(t, os.Mkdir(a.Path, 0o755))
		}
		return &policyderive.Profile{}, nil
	})
	require.NoError(t, err)
	require.NotNil(t, pr)
	assert.False(t, r.TryLock(), "Derive returns with the registry locked")
	gen := r.Gen()
	r.Unlock()
	require.Len(t, seen, 2, "derived again with the new set")
	assert.Empty(t, seen[0])
	assert.Equal(t, []policyderive.Mask{a}, seen[1], "only a mount point this process created is live")

	r.Lock()
	_, ok := r.Current(gen)
	r.Unlock()
	assert.True(t, ok)
	assert.Empty(t, r.Release([]policyderive.Mask{a, b}))
	assert.NoDirExists(t, a.Path, "the last user removes what this process created")
	assert.DirExists(t, b.Path, "and nothing else")
	r.Lock()
	live, ok := r.Current(gen)
	r.Unlock()
	assert.False(t, ok)
	assert.Empty(t, live)
}
