//go:build linux

package protectguard_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
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
