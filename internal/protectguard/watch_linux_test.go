//go:build linux

package protectguard_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/protectguard"
)

// TestWatchedMmapWrite: a write through a shared mapping sends no
// inotify event; with a change watcher and nothing else changed, the
// guard still sees the protected file's new times and restores it. The
// descriptor stays open past End, so no close event tells either.
func TestWatchedMmapWrite(t *testing.T) {
	w := newWorld(t, withWatcher(t))
	require.Empty(t, w.command(func() {}))
	var f *os.File
	vs := w.command(func() {
		var err error
		f, err = os.OpenFile(w.path("root/.git/config"), os.O_RDWR, 0)
		require.NoError(t, err)
		m, err := unix.Mmap(int(f.Fd()), 0, len(configText), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		require.NoError(t, err)
		copy(m, "[core]\n\tfsmonitor=evil      \n")
		require.NoError(t, unix.Msync(m, unix.MS_SYNC))
		require.NoError(t, unix.Munmap(m))
	})
	defer f.Close()
	assert.Equal(t, []string{w.path("root/.git/config")}, paths(vs))
	assert.Equal(t, configText, w.read("root/.git/config"), "restored")
}

// TestWatchedInertChanges: with a change watcher, a command whose only
// changes leave the guard's state as it was — a temporary file made and
// removed, an ordinary file edited — costs no walk; one that leaves a new
// name behind, or edits a protected file through a hard link made before
// the baseline, is walked and repaired (the twins).
func TestWatchedInertChanges(t *testing.T) {
	w := newWorld(t, withWatcher(t))
	require.NoError(t, os.Link(w.path("root/.git/config"), w.path("root/src/config-link")))
	require.Empty(t, w.command(func() {}))
	walks := protectguard.Walks(w.g)
	require.Empty(t, w.command(func() {
		w.write("root/.git/hooks/tmp.123", "x", 0o644)
		require.NoError(t, os.Remove(w.path("root/.git/hooks/tmp.123")))
		require.NoError(t, os.Mkdir(w.path("root/.git/placeholder"), 0o755))
		require.NoError(t, os.Remove(w.path("root/.git/placeholder")))
		w.write("root/src/main.go", "package main // edited\n", 0o644)
	}))
	assert.Equal(t, walks, protectguard.Walks(w.g), "nothing the guard records changed: no walk")

	vs := w.command(func() { w.write("root/src/config-link", "[core]\n\tfsmonitor = evil\n", 0o644) })
	assert.Equal(t, []string{w.path("root/.git/config")}, paths(vs), "an edit through a hard link is repaired")
	assert.Equal(t, configText, w.read("root/.git/config"))

	walks = protectguard.Walks(w.g)
	require.Empty(t, w.command(func() { w.write("root/src/new.go", "package main\n", 0o644) }))
	assert.Greater(t, protectguard.Walks(w.g), walks, "a new name is walked")
	vs = w.command(func() { w.write("root/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0o755) })
	assert.Equal(t, []string{w.path("root/.git/hooks/pre-commit")}, paths(vs))
	w.absent("root/.git/hooks/pre-commit")
}
