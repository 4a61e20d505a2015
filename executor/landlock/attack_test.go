//go:build linux

// Regression tests for the holes an attack review found in the
// change-driven fast paths (pathwatch, the guard's reuse of its last walk,
// the ruleset key, the kept mount namespace): each failed before its fix.
// "Hole 1" is a watch that followed a directory renamed away, "hole 2" a
// .git pointer file rewritten through a hard link in an unwatched
// directory.

package landlock_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestAttackRulesetAncestorRenameAlias: the user renames a directory
// above a granted one away and makes a new one under its name; the key
// is computed again, but pathwatch.Add(new dir) finds the old path in
// byPath (the old watch follows the renamed inode) and adds no watch.
// A later rename-away-and-recreate of the grant inside the new directory
// then sends no event, and the kept ruleset still grants the old
// directory under its new name.
func TestAttackRulesetAncestorRenameAlias(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	d := filepath.Join(w.base, "d")
	grant, moved := filepath.Join(d, "grant"), filepath.Join(d, "moved")
	require.NoError(t, os.MkdirAll(grant, 0o755))
	p := policy.Coding.Policy()
	p.PathRules = []policy.PathRule{{Pattern: grant, Action: policy.Allow, Ops: []policy.Op{policy.Read, policy.Write}}}
	for range 2 {
		res := run(t, x, w.req("echo ok > "+filepath.Join(grant, "f"), p))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	}
	// Step 1: the directory above the grant renamed away, a new one made.
	require.NoError(t, os.Rename(d, filepath.Join(w.base, "d-old")))
	require.NoError(t, os.MkdirAll(grant, 0o755))
	res := run(t, x, w.req("echo ok > "+filepath.Join(grant, "f"), p))
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	// Step 2: the grant renamed away, a new one made (as in
	// TestRulesetFollowsRename, one level lower).
	require.NoError(t, os.Rename(grant, moved))
	require.NoError(t, os.Mkdir(grant, 0o755))
	res = run(t, x, w.req("echo bad > "+filepath.Join(moved, "planted")+"; echo ok > "+filepath.Join(grant, "g"), p))
	t.Logf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	assert.NoFileExists(t, filepath.Join(moved, "planted"), "the renamed directory is not granted any more")
	assert.FileExists(t, filepath.Join(grant, "g"), "twin: the new directory under the granted name is: %s", res.Stderr)
}

// TestAttackMaskRenamedOverOnHost: the host replaces a denied file by
// renaming a new one over it (an editor's atomic save). With the mount
// namespace kept between commands of a ruleset, the mask bound on the old
// file is detached by the rename (vfs_rename detaches mounts on the
// target in every namespace), the ruleset key does not change (the
// denied file is not a rule's path), and the next command changes the
// new file's metadata through the writable region.
func TestAttackMaskRenamedOverOnHost(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	require.NoError(t, os.Mkdir(filepath.Join(w.root, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "src/a.go"), []byte("x\n"), 0o644))
	env := filepath.Join(w.root, ".env")
	require.NoError(t, os.WriteFile(env, []byte("SECRET=1\n"), 0o600))
	p := policy.Coding.Policy()
	p.DeniedPaths = append(p.DeniedPaths, ".env*")
	for range 2 {
		res := run(t, x, w.req("chmod 755 .env; true", p))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
		fi, err := os.Stat(env)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "masked before")
	}
	// The host saves .env atomically.
	tmp := filepath.Join(w.root, "src", "env.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("SECRET=2\n"), 0o600))
	require.NoError(t, os.Rename(tmp, env))
	res := run(t, x, w.req("chmod 755 .env; touch -d 2001-01-01 .env; true", p))
	t.Logf("stderr %q", res.Stderr)
	assertMetadataKept(t, env, 0o600)
}

// TestAttackGuardWatchAliasExecutor: hole 1 end to end under the
// landlock executor with the default coding policy — a command renames
// an ordinary directory away and makes a new one under its name; a later
// command plants a repository (hook and fsmonitor config) in the new one
// and the guard, whose watch for that path still follows the renamed
// directory, reports and repairs nothing.
func TestAttackGuardWatchAliasExecutor(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.root, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "src/a.go"), []byte("package a\n"), 0o644))
	for _, c := range []string{"true", "true", "mv src src-old && mkdir src"} {
		res := run(t, x, w.req(c, nil))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	}
	res := run(t, x, w.req(`mkdir -p src/.git/hooks && printf '#!/bin/sh\necho pwned\n' > src/.git/hooks/pre-commit && chmod +x src/.git/hooks/pre-commit && printf '[core]\n\tfsmonitor = evil\n' > src/.git/config`, nil))
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	assert.NotEmpty(t, res.Violations, "the planted hook and config are violations")
	assert.NoFileExists(t, filepath.Join(w.root, "src/.git/hooks/pre-commit"))
	assert.NoFileExists(t, filepath.Join(w.root, "src/.git/config"))
	// The user saves a file between commands: the next command's Begin
	// walks and takes the planted files into its baseline; they are
	// never repaired.
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "notes.txt"), []byte("x\n"), 0o644))
	for _, c := range []string{"true", "touch new-file", "true"} {
		res = run(t, x, w.req(c, nil))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	}
	assert.NoFileExists(t, filepath.Join(w.root, "src/.git/hooks/pre-commit"), "still planted after later commands")
}

// TestAttackGuardPointerHardLinkExecutor: hole 2 end to end: a
// submodule-style .git file is re-pointed, through a hard link made in
// the unwatched objects/ of the outer repository, at a git directory
// planted there too. No event reaches any watch, the .git file is not
// stat-checked, and the guard returns its stale state; the host's git in
// sub then runs the planted fsmonitor.
func TestAttackGuardPointerHardLinkExecutor(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	for _, d := range []string{".git/objects/pack", ".git/refs/heads", "sub"} {
		require.NoError(t, os.MkdirAll(filepath.Join(w.root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.root, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, ".git/config"), []byte("[core]\n\trepositoryformatversion = 0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "sub/.git"), []byte("gitdir: ../.git/modules/sub-xyz\n"), 0o644))
	for range 2 {
		res := run(t, x, w.req("true", nil))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	}
	res := run(t, x, w.req(`set -e
E=.git/objects/ev
mkdir -p $E/objects $E/refs $E/hooks
echo 'ref: refs/heads/main' > $E/HEAD
printf '[core]\n\tfsmonitor = evil\n' > $E/config
printf '#!/bin/sh\necho pwned\n' > $E/hooks/pre-commit
ln sub/.git .git/objects/p
printf 'gitdir: ../.git/objects/ev\n' > .git/objects/p
rm .git/objects/p`, nil))
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	b, err := os.ReadFile(filepath.Join(w.root, "sub/.git"))
	require.NoError(t, err)
	require.Equal(t, "gitdir: ../.git/objects/ev\n", string(b))
	assert.NotEmpty(t, res.Violations, "the planted git directory's control entries are violations")
	cfg, _ := os.ReadFile(filepath.Join(w.root, ".git/objects/ev/config"))
	assert.NotContains(t, string(cfg), "fsmonitor")
	assert.NoFileExists(t, filepath.Join(w.root, ".git/objects/ev/hooks/pre-commit"))
}

// TestAttackNewMaskAfterWarm: denied files that appear on the host after
// a warm command (a new one beside ordinary files, and one in a
// coalesced directory of denied files) are masked too.
func TestAttackNewMaskAfterWarm(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	for _, d := range []string{"src", "fixtures"} {
		require.NoError(t, os.Mkdir(filepath.Join(w.root, d), 0o755))
	}
	for _, f := range []string{"src/a.go", "fixtures/c1.pem", "fixtures/c2.pem", ".env"} {
		require.NoError(t, os.WriteFile(filepath.Join(w.root, f), []byte("x\n"), 0o600))
	}
	p := policy.Coding.Policy()
	p.DeniedPaths = append(p.DeniedPaths, ".env*", "*.pem")
	for range 2 {
		res := run(t, x, w.req("true", p))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	}
	for _, f := range []string{"src/.env.prod", "fixtures/c3.pem"} {
		require.NoError(t, os.WriteFile(filepath.Join(w.root, f), []byte("x\n"), 0o600))
	}
	// fixtures gains an ordinary file: no longer all masked.
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "fixtures/readme"), []byte("x\n"), 0o644))
	res := run(t, x, w.req("chmod 755 src/.env.prod fixtures/c3.pem fixtures/c1.pem; echo y >> fixtures/readme; true", p))
	t.Logf("stderr %q", res.Stderr)
	for _, f := range []string{"src/.env.prod", "fixtures/c3.pem", "fixtures/c1.pem"} {
		fi, err := os.Stat(filepath.Join(w.root, f))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
	}
}

// TestAttackMoveMaskedParent: a command renames the directory holding a
// masked file (or a coalesced masked directory's parent) and changes the
// denied file's metadata under the new name.
func TestAttackMoveMaskedParent(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	for _, d := range []string{"src", "lib/fixtures"} {
		require.NoError(t, os.MkdirAll(filepath.Join(w.root, d), 0o755))
	}
	for _, f := range []string{"src/a.go", "src/.env.prod", "lib/fixtures/c1.pem", "lib/x.go"} {
		require.NoError(t, os.WriteFile(filepath.Join(w.root, f), []byte("x\n"), 0o600))
	}
	p := policy.Coding.Policy()
	p.DeniedPaths = append(p.DeniedPaths, ".env*", "*.pem")
	run(t, x, w.req("true", p))
	res := run(t, x, w.req("mv src src2; chmod 755 src2/.env.prod; mv lib lib2; chmod 755 lib2/fixtures/c1.pem lib2/fixtures; cp -a src2/.env.prod stolen; ln src2/.env.prod hl; chmod 755 hl; true", p))
	t.Logf("stderr %q", res.Stderr)
	for _, f := range []string{"src2/.env.prod", "src/.env.prod", "lib2/fixtures/c1.pem", "lib/fixtures/c1.pem"} {
		if fi, err := os.Stat(filepath.Join(w.root, f)); err == nil {
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
		}
	}
}

// assertMetadataKept checks from outside that the commands changed
// neither the mode (mode before) nor the times (touched to 2001) of the
// denied file path.
func assertMetadataKept(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, mode, fi.Mode().Perm(), "a denied file's mode is not changed by a command")
	assert.NotEqual(t, 2001, fi.ModTime().Year(), "a denied file's times are not changed by a command")
}

// TestAttackGitDirInTempDir: found by an attack review. The executor's
// private temporary directory is writable by commands and outlives them;
// a git directory planted there and named by a .git file in the root was
// never sanitized (the guard walked the root only), and the host's git
// status in the root ran its fsmonitor. Twin: protect none (no guard).
func TestAttackGitDirInTempDir(t *testing.T) {
	gitTool, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	x := newExecutor(t, landlock.Config{})
	tmp := x.TempDir()
	require.NotEmpty(t, tmp)
	noProtect := policy.Coding.Policy()
	noProtect.Protect = policy.Protect{Disabled: true}
	for i, p := range []*policy.Policy{policy.Coding.Policy(), noProtect} {
		w := newWS(t)
		canary := filepath.Join(w.outside, "fsmonitor-ran")
		evil := filepath.Join(tmp, fmt.Sprintf("evil%d", i))
		res := run(t, x, w.req(fmt.Sprintf(`set -e
mkdir -p %[1]s/objects %[1]s/refs/heads
echo 'ref: refs/heads/main' > %[1]s/HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch %[2]s; false"\n' > %[1]s/config
printf 'gitdir: %[1]s\n' > .git`, evil, canary), p))
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
		cmd := exec.Command(gitTool, "-C", w.root, "status", "--porcelain")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+w.home)
		out, _ := cmd.CombinedOutput()
		if i == 0 {
			assert.NoFileExists(t, canary, "the host's git status ran the fsmonitor planted in the temporary directory: %s", out)
			assert.NotEmpty(t, res.Violations, "the repair is reported")
		} else {
			assert.FileExists(t, canary, "twin: without the guard the host's git runs it (%s)", out)
		}
	}
}
