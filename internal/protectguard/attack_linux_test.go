//go:build linux

// Regression tests for the holes an attack review found in the
// change-driven fast paths (pathwatch, the guard's reuse of its last walk,
// the ruleset key, the kept mount namespace): each failed before its fix.
// "Hole 1" is a watch that followed a directory renamed away, "hole 2" a
// .git pointer file rewritten through a hard link in an unwatched
// directory.

package protectguard_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttackRenamedDirWatchAlias: a watched directory renamed away keeps
// its watch (inotify follows the inode), and pathwatch.Add for a new
// directory made at the old path returns early (byPath still has the old
// path): the new directory is never watched. A repository planted in it
// by a later command sends no event, and the guard returns the stale
// state.
func TestAttackRenamedDirWatchAlias(t *testing.T) {
	for _, watched := range []bool{false, true} {
		name := "unwatched"
		if watched {
			name = "watched"
		}
		t.Run(name, func(t *testing.T) {
			var w *world
			if watched {
				w = newWorld(t, withWatcher(t))
			} else {
				w = newWorld(t)
			}
			require.Empty(t, w.command(func() {}))
			// Command 1: rename src away and make a new src (both
			// ordinary, unprotected).
			require.Empty(t, w.command(func() {
				require.NoError(t, os.Rename(w.path("root/src"), w.path("root/src-old")))
				require.NoError(t, os.Mkdir(w.path("root/src"), 0o755))
			}))
			// Command 2: plant a repository with a hook and a config
			// in the new src.
			vs := w.command(func() {
				w.write("root/src/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0o755)
				w.write("root/src/.git/config", "[core]\n\tfsmonitor = evil\n", 0o644)
			})
			assert.Equal(t, []string{w.path("root/src/.git/config"), w.path("root/src/.git/hooks")}, paths(vs))
			w.absent("root/src/.git/hooks")
			w.absent("root/src/.git/config")
		})
	}
}

// TestAttackPointerViaHardLink: a .git pointer file is not recorded (no
// protect rule names a .git file), so the stat check does not cover it,
// and an edit made through a hard link in a directory the walk never
// lists (a git directory's objects/) sends no event to the watch on the
// pointer's directory. The pointer is turned to a git directory planted
// in objects/ (also unwatched); the guard returns the stale state.
func TestAttackPointerViaHardLink(t *testing.T) {
	for _, watched := range []bool{false, true} {
		name := "unwatched"
		if watched {
			name = "watched"
		}
		t.Run(name, func(t *testing.T) {
			var w *world
			if watched {
				w = newWorld(t, withWatcher(t))
			} else {
				w = newWorld(t)
			}
			// Make root/.git a real git directory (objects, refs) and a
			// sub-checkout whose .git file points elsewhere.
			require.NoError(t, os.MkdirAll(w.path("root/.git/objects/pack"), 0o755))
			require.NoError(t, os.MkdirAll(w.path("root/.git/refs/heads"), 0o755))
			w.write("root/sub/.git", "gitdir: ../.git/modules/sub-xyz\n", 0o644)
			require.Empty(t, w.command(func() {}))
			require.Empty(t, w.command(func() {}))
			vs := w.command(func() {
				w.write("root/.git/objects/ev/HEAD", "ref: refs/heads/main\n", 0o644)
				require.NoError(t, os.MkdirAll(w.path("root/.git/objects/ev/objects"), 0o755))
				require.NoError(t, os.MkdirAll(w.path("root/.git/objects/ev/refs"), 0o755))
				w.write("root/.git/objects/ev/config", "[core]\n\tfsmonitor = evil\n", 0o644)
				w.write("root/.git/objects/ev/hooks/pre-commit", "#!/bin/sh\nevil\n", 0o755)
				require.NoError(t, os.Link(w.path("root/sub/.git"), w.path("root/.git/objects/p")))
				f, err := os.OpenFile(w.path("root/.git/objects/p"), os.O_WRONLY|os.O_TRUNC, 0)
				require.NoError(t, err)
				_, err = f.WriteString("gitdir: ../.git/objects/ev\n")
				require.NoError(t, err)
				require.NoError(t, f.Close())
				require.NoError(t, os.Remove(w.path("root/.git/objects/p")))
			})
			require.Equal(t, "gitdir: ../.git/objects/ev\n", w.read("root/sub/.git"))
			assert.NotEmpty(t, vs, "the planted git directory's control entries are repaired")
			t.Logf("violations: %v", vs)
			if b, err := os.ReadFile(w.path("root/.git/objects/ev/config")); err == nil {
				assert.NotContains(t, string(b), "fsmonitor", "the planted config is sanitized")
			}
			w.absent("root/.git/objects/ev/hooks")
		})
	}
}

// TestAttackFIFOSwapDoesNotBlock: a background process swaps a directory
// the guard lists with a FIFO (renameat2 RENAME_EXCHANGE) in a loop; the
// guard's open of the directory must never block on the FIFO. Before, it
// opened the path with a plain open(2), which blocks on a FIFO with no
// writer forever, hanging every later command and the session's Close.
func TestAttackFIFOSwapDoesNotBlock(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.MkdirAll(w.path("root/swap"), 0o755))
	w.write("root/swap/file", "x", 0o644)
	require.NoError(t, unix.Mkfifo(w.path("root/fifo"), 0o644))
	require.Empty(t, w.command(func() {}))

	stop := make(chan struct{})
	var swaps atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, w.path("root/swap"), unix.AT_FDCWD, w.path("root/fifo"), unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A scan may fail (the directory it stat'ed is gone); it must
		// not block.
		for range 200 {
			_, _ = w.g.Begin(context.Background())
			_, _ = w.g.End(context.Background())
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("a guard scan blocked on the FIFO swapped in for a directory")
	}
	close(stop)
	assert.NotZero(t, swaps.Load(), "control: the swapper ran")
}
