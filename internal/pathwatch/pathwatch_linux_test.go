//go:build linux

package pathwatch_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/pathwatch"
)

func newWatcher(t *testing.T, ev pathwatch.Events) *pathwatch.Watcher {
	t.Helper()
	w, err := pathwatch.New(ev, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return w
}

// TestGenerations: the generation holds while nothing changes (the
// twin of every change below) and moves with each kind of change.
func TestGenerations(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "f"), []byte("x"), 0o644))
	for _, tc := range []struct {
		name   string
		ev     pathwatch.Events
		change func() error
		moves  bool
	}{
		{"create", pathwatch.Names, func() error { return os.WriteFile(filepath.Join(sub, "new"), nil, 0o644) }, true},
		{"remove", pathwatch.Names, func() error { return os.Remove(filepath.Join(sub, "new")) }, true},
		{"rename in", pathwatch.Names, func() error { return os.Rename(filepath.Join(dir, "x"), filepath.Join(sub, "x")) }, true},
		{"write, names only", pathwatch.Names, func() error { return os.WriteFile(filepath.Join(sub, "f"), []byte("y"), 0o644) }, false},
		{"write", pathwatch.Content, func() error { return os.WriteFile(filepath.Join(sub, "f"), []byte("z"), 0o644) }, true},
		{"chmod", pathwatch.Content, func() error { return os.Chmod(filepath.Join(sub, "f"), 0o600) }, true},
		{"directory moved", pathwatch.Names, func() error { return os.Rename(sub, sub+"2") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), nil, 0o644))
			if _, err := os.Stat(sub); err != nil {
				require.NoError(t, os.Rename(sub+"2", sub))
			}
			w := newWatcher(t, tc.ev)
			g := w.Gen()
			require.NoError(t, w.Add(sub))
			assert.Equal(t, g, w.Gen(), "nothing changed yet")
			require.NoError(t, tc.change())
			if tc.moves {
				assert.NotEqual(t, g, w.Gen())
			} else {
				// The generation also moves when this process's mount
				// table changes (other tests, a container engine, mount
				// in the host's namespace meanwhile): only inotify events
				// count here (a clean-clone run failed on one).
				evs, ok := w.Since(g)
				require.True(t, ok, "events since %d kept", g)
				for _, ev := range evs {
					assert.NotZero(t, ev.Mask&pathwatch.Mount, "an event that is not a mount change: %+v", ev)
				}
			}
		})
	}
}

// TestRewatchAfterRemoval: a directory removed and made again under the
// same name moves the generation, and Add watches the new one.
func TestRewatchAfterRemoval(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.Mkdir(dir, 0o755))
	w := newWatcher(t, pathwatch.Names)
	require.NoError(t, w.Add(dir))
	g := w.Gen()
	require.NoError(t, os.Remove(dir))
	require.NoError(t, os.Mkdir(dir, 0o755))
	g2 := w.Gen()
	assert.NotEqual(t, g, g2)
	require.NoError(t, w.Add(dir))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	assert.NotEqual(t, g2, w.Gen(), "the new directory is watched")
}

// TestAddRefuses: a symbolic link, and more directories than the cap,
// cannot be vouched for.
func TestAddRefuses(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink(dir, filepath.Join(dir, "link")))
	w, err := pathwatch.New(pathwatch.Names, 1)
	require.NoError(t, err)
	defer w.Close()
	assert.Error(t, w.Add(filepath.Join(dir, "link")))
	require.NoError(t, w.Add(dir))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "b"), 0o755))
	assert.Error(t, w.Add(filepath.Join(dir, "b")), "over the cap")
}

// TestMountMovesGeneration: a mount sends no inotify event; the polled
// mount table moves the generation (root only).
func TestMountMovesGeneration(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	dir := t.TempDir()
	w := newWatcher(t, pathwatch.Names)
	require.NoError(t, w.Add(dir))
	g := w.Gen()
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, ""))
	defer unix.Unmount(dir, unix.MNT_DETACH)
	assert.NotEqual(t, g, w.Gen())
}

// TestMovedAwayIsForgotten: a watch follows its directory, not the name;
// when the directory (or one above it) is moved away and a new one is
// made under the name, Add watches the new one — its changes move the
// generation — and the moved one's changes are no longer reported under
// the name.
func TestMovedAwayIsForgotten(t *testing.T) {
	base := t.TempDir()
	d := filepath.Join(base, "d")
	sub := filepath.Join(d, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	w := newWatcher(t, pathwatch.Names)
	require.NoError(t, w.Add(d))
	require.NoError(t, w.Add(sub))
	require.NoError(t, os.Rename(d, filepath.Join(base, "old")))
	require.NoError(t, os.MkdirAll(sub, 0o755))
	w.Gen()
	require.NoError(t, w.Add(d))
	require.NoError(t, w.Add(sub))
	g := w.Gen()
	require.NoError(t, os.WriteFile(filepath.Join(sub, "new"), nil, 0o644))
	g2 := w.Gen()
	assert.NotEqual(t, g, g2, "the new directory under the name is watched")
	require.NoError(t, os.WriteFile(filepath.Join(base, "old", "sub", "x"), nil, 0o644))
	evs, ok := w.Since(g2)
	require.True(t, ok)
	assert.Empty(t, evs, "the moved-away directory is not watched under the name any more")
}
