package backend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRemoveNoFollow checks that removing a mount point never follows a
// symbolic link a command put in its path, and leaves a directory
// something was put into.
func TestRemoveNoFollow(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	target := filepath.Join(base, "target")
	require.NoError(t, os.MkdirAll(filepath.Join(target, ".git"), 0o755))
	require.NoError(t, os.Symlink(target, filepath.Join(base, "link")))
	assert.Error(t, Remove(filepath.Join(base, "link", ".git")))
	assert.DirExists(t, filepath.Join(target, ".git"))

	require.NoError(t, os.WriteFile(filepath.Join(target, ".git", "planted"), nil, 0o644))
	assert.NoError(t, Remove(filepath.Join(target, ".git")), "a directory that is not empty is left, without error")
	assert.DirExists(t, filepath.Join(target, ".git"))

	require.NoError(t, os.Remove(filepath.Join(target, ".git", "planted")))
	require.NoError(t, Remove(filepath.Join(target, ".git")), "control: a real, empty path")
	assert.NoDirExists(t, filepath.Join(target, ".git"))
	assert.NoError(t, Remove(filepath.Join(target, ".git")), "gone already: no error")
}
