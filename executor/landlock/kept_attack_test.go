//go:build linux

// Regression tests for holes a second attack review found around the
// kept mount namespace; each failed before its fix.

package landlock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestKeptRemountReadOnlyOnHost: the host makes a mount inside the root
// read-only (a bind remount: per-mount flags, same id, same path). The
// watcher diffs whole mountinfo lines, so this is a Mount event and the
// kept namespace is made again: the command cannot write through its old
// writable copy (it did when only "id path" was compared). Twin: a fresh
// executor.
func TestKeptRemountReadOnlyOnHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root")
	}
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	vol := filepath.Join(w.root, "vol")
	require.NoError(t, os.Mkdir(vol, 0o755))
	require.NoError(t, unix.Mount("tmpfs", vol, "tmpfs", 0, ""))
	defer unix.Unmount(vol, unix.MNT_DETACH)
	for range 2 {
		res := run(t, x, w.req("echo warm > vol/warm", nil))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	}
	require.NoError(t, unix.Mount("", vol, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""))
	require.Error(t, os.WriteFile(filepath.Join(vol, "host"), nil, 0o644), "read-only on the host now")
	// Twin: a fresh executor (fresh namespace) is refused.
	x2 := newExecutor(t, landlock.Config{})
	res := run(t, x2, w.req("echo twin > vol/twin", nil))
	t.Logf("twin: exit %d %q", res.ExitCode, res.Stderr)
	assert.NoFileExists(t, filepath.Join(vol, "twin"))
	res = run(t, x, w.req("echo pwn > vol/pwn", nil))
	t.Logf("kept: exit %d %q", res.ExitCode, res.Stderr)
	assert.NoFileExists(t, filepath.Join(vol, "pwn"), "a mount the host made read-only is not written through the kept namespace")
}

// TestKeptAliasMaskRenamedOver: the workspace is reachable under two names
// (a bind mount). A command under the alias makes the watcher watch the
// directory under the alias name; the watch of the real name is the same
// inotify wd, so every event in the root is reported under the alias.
// The host then replaces the denied .env atomically, which takes the
// mask's bind away; events are reported under every name, so keptCurrent
// sees it under the real one and the namespace is made again (it was kept
// when events went under the first name only).
func TestKeptAliasMaskRenamedOver(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root")
	}
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	require.NoError(t, os.Mkdir(filepath.Join(w.root, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "src/a.go"), []byte("x\n"), 0o644))
	env := filepath.Join(w.root, ".env")
	require.NoError(t, os.WriteFile(env, []byte("SECRET=1\n"), 0o600))
	alias := filepath.Join(w.base, "alias")
	require.NoError(t, os.Mkdir(alias, 0o755))
	require.NoError(t, unix.Mount(w.root, alias, "", unix.MS_BIND, ""))
	defer unix.Unmount(alias, unix.MNT_DETACH)
	p := policy.Coding.Policy()
	p.DeniedPaths = append(p.DeniedPaths, ".env*")
	ra := w.req("true", p)
	ra.Root, ra.Dir = alias, alias
	res := run(t, x, ra)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	for range 2 {
		res := run(t, x, w.req("chmod 755 .env; true", p))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
		fi, err := os.Stat(env)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "masked before")
	}
	tmp := filepath.Join(w.root, "src", "env.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("SECRET=2\n"), 0o600))
	require.NoError(t, os.Rename(tmp, env))
	// Twin: an ordinary file changes.
	res = run(t, x, w.req("chmod 700 src/a.go; chmod 755 .env; touch -d 2001-01-01 .env; true", p))
	t.Logf("stderr %q", res.Stderr)
	fi, err := os.Stat(filepath.Join(w.root, "src/a.go"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "twin")
	assertMetadataKept(t, env, 0o600)
}

// TestNewDeniedBesideMask: the root is split already (.env); the host
// adds another denied file beside it. No rule changes (a denied file gets
// no rule); the ruleset key covers the masks too, so the new file gets a
// ruleset (and a kept namespace) that masks it.
func TestNewDeniedBesideMask(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	require.NoError(t, os.Mkdir(filepath.Join(w.root, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "src/a.go"), []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, ".env"), []byte("S=1\n"), 0o600))
	p := policy.Coding.Policy()
	p.DeniedPaths = append(p.DeniedPaths, ".env*")
	for range 2 {
		res := run(t, x, w.req("true", p))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	}
	local := filepath.Join(w.root, ".env.local")
	require.NoError(t, os.WriteFile(local, []byte("S=2\n"), 0o600))
	// Twin: a fresh executor masks it.
	x2 := newExecutor(t, landlock.Config{})
	res := run(t, x2, w.req("chmod 755 .env.local; true", p))
	t.Logf("twin stderr %q", res.Stderr)
	fi, err := os.Stat(local)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "twin: a fresh executor masks the new denied file")
	res = run(t, x, w.req("chmod 755 .env.local; touch -d 2001-01-01 .env.local; cat .env.local; true", p))
	t.Logf("stdout %q stderr %q", res.Stdout, res.Stderr)
	assertMetadataKept(t, local, 0o600)
}

// TestKeptAliasKeyRenamedGrant: the same root cause as
// TestKeptAliasMaskRenamedOver, for the ruleset key: a grant's parent is
// watched first under an alias (a bind mount); the rename of the grant is
// reported under both names, so the key is computed again and the renamed
// directory is not granted any more (the cached ruleset granted it when
// only the alias was reported).
func TestKeptAliasKeyRenamedGrant(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root")
	}
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	d := filepath.Join(w.base, "d")
	grant, moved := filepath.Join(d, "grant"), filepath.Join(d, "moved")
	require.NoError(t, os.MkdirAll(grant, 0o755))
	alias := filepath.Join(w.base, "dalias")
	require.NoError(t, os.Mkdir(alias, 0o755))
	require.NoError(t, unix.Mount(d, alias, "", unix.MS_BIND, ""))
	defer unix.Unmount(alias, unix.MNT_DETACH)
	rw := func(path string) *policy.Policy {
		p := policy.Coding.Policy()
		p.PathRules = []policy.PathRule{{Pattern: path, Action: policy.Allow, Ops: []policy.Op{policy.Read, policy.Write}}}
		return p
	}
	ga := filepath.Join(alias, "grant")
	res := run(t, x, w.req("echo ok > "+filepath.Join(ga, "f"), rw(ga)))
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	for range 2 {
		res := run(t, x, w.req("echo ok > "+filepath.Join(grant, "f"), rw(grant)))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	}
	require.NoError(t, os.Rename(grant, moved))
	require.NoError(t, os.Mkdir(grant, 0o755))
	res = run(t, x, w.req("echo bad > "+filepath.Join(moved, "planted")+"; echo ok > "+filepath.Join(grant, "g"), rw(grant)))
	t.Logf("exit %d stderr %q", res.ExitCode, res.Stderr)
	assert.NoFileExists(t, filepath.Join(moved, "planted"), "the renamed directory is not granted any more")
	assert.FileExists(t, filepath.Join(grant, "g"), "twin: the new directory under the granted name is")
}
