//go:build unix

// Regression tests for the holes an attack review (helper-41) found in
// the guard's streaming walk, its repair shortcuts and its pointers: each
// failed before its fix.

package protectguard_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/protectguard"
)

// a git directory hidden in the root's .git/objects (data below .git:
// never walked) named by a .git SYMBOLIC LINK (not a .git file): git
// follows the link; the guard only reads .git files as pointers.
func TestAttackGitSymlinkIntoData(t *testing.T) {
	for _, repaired := range []bool{false, true} {
		w := newGitWorld(t)
		plant := func() {
			w.writeFile(".git/objects/zz/ev/HEAD", "ref: refs/heads/main\n")
			w.writeFile(".git/objects/zz/ev/config", w.fsmonitor())
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git/objects/zz/ev/refs/heads"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git/objects/zz/ev/objects"), 0o755))
			w.writeFile("sub/f", "f\n")
			require.NoError(t, os.Symlink("../.git/objects/zz/ev", filepath.Join(w.root, "sub/.git")))
		}
		if !repaired {
			plant()
			require.True(t, w.statusRuns(filepath.Join(w.root, "sub")), "fixture")
			continue
		}
		vs := w.command(plant)
		assert.False(t, w.statusRuns(filepath.Join(w.root, "sub")), "fsmonitor ran; violations:\n%s", vlist(vs))
	}
}

// the same, with the hidden repository registered as a gitlink in the
// root's index: the host's git status in the ROOT runs its fsmonitor.
func TestAttackGitSymlinkGitlink(t *testing.T) {
	for _, repaired := range []bool{false, true} {
		w := newGitWorld(t)
		plant := func() {
			w.plantRepo("sub")
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git/objects/zz"), 0o755))
			require.NoError(t, os.Rename(filepath.Join(w.root, "sub/.git"), filepath.Join(w.root, ".git/objects/zz/ev")))
			require.NoError(t, os.Symlink("../.git/objects/zz/ev", filepath.Join(w.root, "sub/.git")))
		}
		if !repaired {
			plant()
			require.True(t, w.statusRuns(w.root), "fixture")
			continue
		}
		vs := w.command(plant)
		assert.False(t, w.statusRuns(w.root), "fsmonitor ran from root status; violations:\n%s", vlist(vs))
	}
}

// a .git FILE whose gitdir goes through a symbolic link and "..":
// the guard cleans the pointer lexically (filepath.Join) before
// EvalSymlinks, git lets the kernel resolve the link first. The two name
// different directories; the one git uses is hidden in .git/objects.
func TestAttackPointerLexicalDotDot(t *testing.T) {
	for _, repaired := range []bool{false, true} {
		w := newGitWorld(t)
		plant := func() {
			w.writeFile(".git/objects/zz/ev/HEAD", "ref: refs/heads/main\n")
			w.writeFile(".git/objects/zz/ev/config", w.fsmonitor())
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git/objects/zz/ev/refs/heads"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git/objects/zz/ev/objects"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git/objects/zz/q"), 0o755))
			w.writeFile("sub/f", "f\n")
			require.NoError(t, os.Symlink("../.git/objects/zz/q", filepath.Join(w.root, "sub/lnk")))
			w.writeFile("sub/.git", "gitdir: lnk/../ev\n")
		}
		if !repaired {
			plant()
			require.True(t, w.statusRuns(filepath.Join(w.root, "sub")), "fixture")
			continue
		}
		vs := w.command(plant)
		assert.False(t, w.statusRuns(filepath.Join(w.root, "sub")), "fsmonitor ran; violations:\n%s", vlist(vs))
	}
}

// rootAsRepo makes the watched tree's root itself a git directory by
// content (HEAD, objects/, refs/): a "new repository" whose unknown
// entries — the user's files, the user's .git — are all "remove".
func rootAsRepo(w *gitWorld) {
	w.writeFile("HEAD", "ref: refs/heads/main\n")
	require.NoError(w.t, os.MkdirAll(filepath.Join(w.root, "objects"), 0o755))
	require.NoError(w.t, os.MkdirAll(filepath.Join(w.root, "refs"), 0o755))
}

// the command turns the root into a git directory by content;
// End removes every pre-existing user file and the user's .git (all
// objects and refs), recreating only the few control entries it copied.
func TestAttackRootAsRepoWipes(t *testing.T) {
	for _, attack := range []bool{false, true} {
		w := newGitWorld(t)
		w.writeFile("src/main.go", "package main\n")
		w.writeFile(".env", "SECRET=1\n")
		w.git(w.root, "add", "src/main.go")
		w.git(w.root, "commit", "-q", "-m", "two")
		vs := w.command(func() {
			w.writeFile("notes.txt", "benign\n")
			if attack {
				rootAsRepo(w)
			}
		})
		t.Logf("attack=%v violations:\n%s", attack, vlist(vs))
		for _, p := range []string{"README", "src/main.go", ".env", ".git/objects", ".git/refs/heads", ".git/index"} {
			_, err := os.Stat(filepath.Join(w.root, p))
			assert.NoError(t, err, "attack=%v: the guard deleted the user's %s", attack, p)
		}
	}
}

// the root made a git directory plus more than 4096 "removable"
// entries: the root is swept, the sweep cannot open the root
// (components(tree, tree) fails), and the sweepable children — the
// user's .git among them — were skipped by the walk: a commondir planted
// in the root's .git survives and the host's git status runs the
// fsmonitor it redirects to.
func TestAttackRootSweepFails(t *testing.T) {
	for _, repaired := range []bool{false, true} {
		w := newGitWorld(t)
		plant := func() {
			w.writeFile("evil/HEAD", "ref: refs/heads/main\n")
			w.writeFile("evil/config", w.fsmonitor())
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, "evil/refs/heads"), 0o755))
			require.NoError(t, os.Symlink(filepath.Join(w.root, ".git/objects"), filepath.Join(w.root, "evil/objects")))
			w.writeFile(".git/commondir", "../evil\n")
			w.writeFile(".git/hooks/pre-commit", "#!/bin/sh\ntouch "+w.canary+"\n")
			rootAsRepo(w)
			for i := range 4100 {
				require.NoError(t, os.WriteFile(filepath.Join(w.root, fmt.Sprintf("j%05d", i)), nil, 0o644))
			}
		}
		if !repaired {
			plant()
			require.True(t, w.statusRuns(w.root), "fixture")
			continue
		}
		vs := w.command(plant)
		t.Logf("violations:\n%s", vlist(vs))
		assert.False(t, w.statusRuns(w.root), "fsmonitor through a surviving .git/commondir")
		assert.NoFileExists(t, filepath.Join(w.root, ".git/hooks/pre-commit"), "planted hook survived")
	}
}

// deepChain makes dir/name/d/d/.../d, depth levels, with *at calls (no
// path is ever longer than one name).
func deepChain(t *testing.T, dir, name string, depth int) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	n := name
	for range depth {
		require.NoError(t, unix.Mkdirat(fd, n, 0o755))
		nfd, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		require.NoError(t, err)
		unix.Close(fd)
		fd = nfd
		n = "d"
	}
	unix.Close(fd)
}

// flattenChain removes a chain made by deepChain without holding more
// than a few descriptors (test cleanup).
func flattenChain(dir, name string) {
	top := filepath.Join(dir, name)
	for {
		if err := os.Rename(filepath.Join(top, "d"), filepath.Join(dir, name+".tmp")); err != nil {
			break
		}
		_ = os.Remove(top)
		_ = os.Rename(filepath.Join(dir, name+".tmp"), top)
	}
	_ = os.RemoveAll(top)
}

func rawNames(t *testing.T, dir string) []string {
	f, err := os.Open(dir)
	require.NoError(t, err)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	require.NoError(t, err)
	return names
}

func fdLimit(t *testing.T) int {
	var rl unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &rl))
	return int(rl.Cur)
}

// a new repository whose hooks/ holds, before the planted hook in
// readdir order, a chain of directories deeper than the guard's
// descriptor limit: removeAt holds one descriptor per level, fails with
// EMFILE, and returns before unlinking the hook. End reports a failed
// violation but returns no error and is not "broken": the hook survives
// and the next baseline takes it in. The host's git commit in the new
// repository runs it.
func TestAttackDeepChainDefeatsRemoval(t *testing.T) {
	// A low descriptor limit for the test's duration keeps the chain
	// short (the limit may be a million elsewhere).
	var rl unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &rl))
	low := rl
	low.Cur = min(rl.Cur, 256)
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &low))
	t.Cleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_NOFILE, &rl) })
	depth := fdLimit(t) + 100
	t.Logf("RLIMIT_NOFILE %d; chain depth %d", fdLimit(t), depth)
	for _, repaired := range []bool{false, true} {
		w := newGitWorld(t)
		hooks := filepath.Join(w.root, "sub/.git/hooks")
		var chain string
		plant := func() {
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, "sub"), 0o755))
			w.git(filepath.Join(w.root, "sub"), "init", "-q")
			w.writeFile("sub/.git/hooks/pre-commit", "#!/bin/sh\ntouch "+w.canary+"\n")
			require.NoError(t, os.Chmod(filepath.Join(hooks, "pre-commit"), 0o755))
			// A chain name that readdir lists before pre-commit.
			for i := 0; ; i++ {
				name := fmt.Sprintf("c%d", i)
				require.NoError(t, os.Mkdir(filepath.Join(hooks, name), 0o755))
				names := rawNames(t, hooks)
				if slices.Index(names, name) < slices.Index(names, "pre-commit") {
					require.NoError(t, os.Remove(filepath.Join(hooks, name)))
					chain = name
					break
				}
				require.NoError(t, os.Remove(filepath.Join(hooks, name)))
				require.Less(t, i, 200)
			}
			deepChain(t, hooks, chain, depth)
		}
		commitRuns := func() bool {
			_ = os.Remove(w.canary)
			cmd := exec.Command("git", "-C", filepath.Join(w.root, "sub"), "-c", "user.name=t", "-c", "user.email=t@e.invalid", "commit", "-q", "--allow-empty", "-m", "x")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+filepath.Dir(w.root))
			_, _ = cmd.CombinedOutput()
			_, err := os.Stat(w.canary)
			return err == nil
		}
		if !repaired {
			plant()
			require.True(t, commitRuns(), "fixture: the hook did not run")
			flattenChain(hooks, chain)
			continue
		}
		vs := w.command(plant)
		t.Logf("violations:\n%s", vlist(vs))
		assert.False(t, commitRuns(), "the planted pre-commit hook ran")
		if chain != "" {
			flattenChain(hooks, chain)
		}
	}
}

// the whole walk fails even streaming (more recorded protected
// names than MaxEntries), and the fallback repairKnown fails too: it is a
// non-streaming scanner whose tick() counts every child of a base git
// directory, data included, against MaxEntries. Data-named files
// (tmp_*) in the root's .git are enough: repairKnown returns the limit
// before apply, so nothing — not even the baseline's own hooks directory
// — is repaired. The twin without the tmp_ files has the hook removed.
func TestAttackKnownRepairTicks(t *testing.T) {
	for _, attack := range []bool{false, true} {
		w := newWorld(t, func(o *protectguard.Options) { o.MaxEntries = 200 })
		// The root's .git a git directory by content.
		w.write("root/.git/objects/x", "", 0o644)
		w.write("root/.git/refs/heads/main", "", 0o644)
		ctx := context.Background()
		_, err := w.g.Begin(ctx)
		require.NoError(t, err)
		for i := range 300 {
			w.write(fmt.Sprintf("root/p%03d/.envrc", i), "evil\n", 0o644)
		}
		if attack {
			for i := range 300 {
				require.NoError(t, os.WriteFile(w.path(fmt.Sprintf("root/.git/tmp_%03d", i)), nil, 0o644))
			}
		}
		w.write("root/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0o755)
		w.write("root/.git/config", "[core]\n\tfsmonitor = evil\n", 0o644)
		vs, err := w.g.End(ctx)
		require.ErrorIs(t, err, protectguard.ErrLimit)
		t.Logf("attack=%v err=%v violations=%v", attack, err, paths(vs))
		_, serr := os.Stat(w.path("root/.git/hooks/pre-commit"))
		assert.ErrorIs(t, serr, os.ErrNotExist, "attack=%v: the planted hook survived End", attack)
		assert.Equal(t, configText, w.read("root/.git/config"), "attack=%v: planted fsmonitor survived", attack)
	}
}

// TestAttackPointerQuadratic: many .git files naming one large directory
// that is no git directory: a walk lists it once, not once per pointer
// (its cost was pointers × entries, with the guard's lock held).
func TestAttackPointerQuadratic(t *testing.T) {
	const m = 5000
	listed := func(n int) int {
		w := newWorld(t)
		ctx := context.Background()
		_, err := w.g.Begin(ctx)
		require.NoError(t, err)
		big := w.path("root/big")
		require.NoError(t, os.MkdirAll(big, 0o755))
		for i := range m {
			require.NoError(t, os.WriteFile(filepath.Join(big, fmt.Sprintf("f%06d", i)), nil, 0o644))
		}
		for i := range n {
			w.write(fmt.Sprintf("root/p/%05d/.git", i), "gitdir: ../../big\n", 0o644)
		}
		_, err = w.g.End(ctx)
		require.NoError(t, err)
		return protectguard.Listed(w.g)
	}
	one, many := listed(1), listed(200)
	t.Logf("entries listed by End: %d with one pointer, %d with 200", one, many)
	assert.Less(t, many, one+2*m, "the pointers' target is listed once per pointer")
}

// TestAttackSparseHash: a new protected file that is sparse and huge is
// not read by the repair that removes it (reading 8 GiB held End and the
// guard's lock for as long, and a file on tmpfs can be 8 EiB). The twin:
// a protected file of the baseline is hashed.
func TestAttackSparseHash(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.g.Begin(ctx)
	require.NoError(t, err)
	before := protectguard.Hashed(w.g)
	w.write("root/x/.envrc", "", 0o644)
	require.NoError(t, os.Truncate(w.path("root/x/.envrc"), 8<<30))
	w.write("root/.vscode/settings.json", "{} ", 0o644) // same size as the baseline's: hashed
	vs, err := w.g.End(ctx)
	require.NoError(t, err)
	assert.Contains(t, paths(vs), w.path("root/x/.envrc"))
	w.absent("root/x/.envrc")
	hashed := protectguard.Hashed(w.g) - before
	assert.Less(t, hashed, int64(1<<20), "End read %d bytes to hash", hashed)
	assert.Positive(t, hashed, "twin: the changed settings file of the baseline was hashed")
	assert.Equal(t, "{}\n", w.read("root/.vscode/settings.json"), "restored")
}
