//go:build unix

package protectguard_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/policy"
)

// gitWorld is a workspace root holding a real repository made by the
// host's git, a guard over it, and a canary file outside the root that a
// planted fsmonitor or hook would create when the host's git runs.
type gitWorld struct {
	t      *testing.T
	root   string
	canary string
	g      *protectguard.Guard
}

func newGitWorld(t *testing.T) *gitWorld {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the structure tests run the host's real git")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w := &gitWorld{t: t, root: filepath.Join(base, "root"), canary: filepath.Join(base, "canary")}
	require.NoError(t, os.MkdirAll(w.root, 0o755))
	w.git(w.root, "init", "-q")
	w.writeFile("README", "hello\n")
	w.git(w.root, "add", "README")
	w.git(w.root, "commit", "-q", "-m", "one")
	c, err := policy.NewChecker(policy.Coding.Policy(), w.root, filepath.Join(base, "home"))
	require.NoError(t, err)
	w.g, err = protectguard.New(protectguard.Options{Checker: c, Trees: []string{w.root}})
	require.NoError(t, err)
	return w
}

// git runs the host's git in dir with no user or system config.
func (w *gitWorld) git(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+filepath.Dir(w.root))
	out, err := cmd.CombinedOutput()
	require.NoError(w.t, err, "git %v: %s", args, out)
	return string(out)
}

func (w *gitWorld) writeFile(rel, content string) {
	w.t.Helper()
	p := filepath.Join(w.root, rel)
	require.NoError(w.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(w.t, os.WriteFile(p, []byte(content), 0o644))
}

// fsmonitor is a config fragment that makes the host's git create the
// canary whenever it reads this config for a status.
func (w *gitWorld) fsmonitor() string {
	return "[core]\n\tfsmonitor = \"touch " + w.canary + "; false\"\n"
}

// statusRuns reports whether the host's git status in dir ran the
// canary (and removes it for the next check).
func (w *gitWorld) statusRuns(dir string) bool {
	w.t.Helper()
	_ = os.Remove(w.canary)
	cmd := exec.Command("git", "-C", dir, "status", "--porcelain")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+filepath.Dir(w.root))
	_, _ = cmd.CombinedOutput()
	_, err := os.Stat(w.canary)
	ran := err == nil
	_ = os.Remove(w.canary)
	return ran
}

// command runs plant between Begin and End, as a sandboxed command would
// run, and returns the violations End reported.
func (w *gitWorld) command(plant func()) []protectguard.Violation {
	w.t.Helper()
	ctx := context.Background()
	_, err := w.g.Begin(ctx)
	require.NoError(w.t, err)
	plant()
	vs, err := w.g.End(ctx)
	require.NoError(w.t, err)
	return vs
}

func vlist(vs []protectguard.Violation) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.String())
	}
	return strings.Join(out, "\n")
}

// TestStructureCommondir: a commondir written into the root's existing
// .git redirects git's config and hooks to a directory the command made;
// the host's git status must not run its fsmonitor. The twin (the same
// plant without the guard's repair) shows that it would.
func TestStructureCommondir(t *testing.T) {
	for _, repaired := range []bool{false, true} {
		w := newGitWorld(t)
		plant := func() {
			// A git directory by content (HEAD, objects/, refs/) whose
			// config has a fsmonitor, and a commondir pointing at it.
			w.writeFile("evil/HEAD", "ref: refs/heads/main\n")
			w.writeFile("evil/config", w.fsmonitor())
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, "evil/refs/heads"), 0o755))
			// objects: git needs the real ones to show a status.
			require.NoError(t, os.Symlink(filepath.Join(w.root, ".git/objects"), filepath.Join(w.root, "evil/objects")))
			w.writeFile(".git/commondir", "../evil\n")
		}
		if !repaired {
			plant()
			require.True(t, w.statusRuns(w.root), "fixture: the planted commondir redirect did not make git run the fsmonitor; the test proves nothing")
			continue
		}
		vs := w.command(plant)
		assert.False(t, w.statusRuns(w.root), "the host's git ran a fsmonitor planted through commondir; violations:\n%s", vlist(vs))
		assert.NoFileExists(t, filepath.Join(w.root, ".git/commondir"))
		assert.Contains(t, vlist(vs), ".git/commondir created")
		assert.NotContains(t, readFile(t, filepath.Join(w.root, "evil/config")), "fsmonitor")
	}
}

// TestStructureSeparateGitDir: a repository whose git directory is not
// named .git (init --separate-git-dir) and is registered as a gitlink in
// the superproject's index: the host's status recurses into it.
func TestStructureSeparateGitDir(t *testing.T) {
	for _, repaired := range []bool{false, true} {
		w := newGitWorld(t)
		plant := func() {
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, "data"), 0o755))
			w.git(w.root, "init", "-q", "--separate-git-dir="+filepath.Join(w.root, "data/x"), filepath.Join(w.root, "sub"))
			w.writeFile("sub/f", "f\n")
			w.git(filepath.Join(w.root, "sub"), "add", "f")
			w.git(filepath.Join(w.root, "sub"), "commit", "-q", "-m", "sub")
			cfg := filepath.Join(w.root, "data/x/config")
			f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString(w.fsmonitor())
			require.NoError(t, err)
			require.NoError(t, f.Close())
			head := strings.TrimSpace(w.git(filepath.Join(w.root, "sub"), "rev-parse", "HEAD"))
			w.git(w.root, "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
			// A new hook in the new repository, too.
			w.writeFile("data/x/hooks/pre-commit", "#!/bin/sh\ntouch "+w.canary+"\n")
			require.NoError(t, os.Chmod(filepath.Join(w.root, "data/x/hooks/pre-commit"), 0o755))
		}
		if !repaired {
			plant()
			require.True(t, w.statusRuns(w.root), "fixture: git status in the superproject did not run the submodule's fsmonitor; the test proves nothing")
			continue
		}
		vs := w.command(plant)
		assert.False(t, w.statusRuns(w.root), "the host's git ran a fsmonitor of a new separate git dir; violations:\n%s", vlist(vs))
		cfg := readFile(t, filepath.Join(w.root, "data/x/config"))
		assert.NotContains(t, cfg, "fsmonitor")
		assert.Contains(t, cfg, "repositoryformatversion", "inert keys of a new repository are kept")
		assert.NoDirExists(t, filepath.Join(w.root, "data/x/hooks"))
		assert.Contains(t, vlist(vs), "reduced to inert keys (removed core.fsmonitor)")
		// The new repository still works for the host's git.
		w.git(filepath.Join(w.root, "sub"), "log", "--oneline")
	}
}

// TestStructureExistingControl: control entries of an existing git
// directory — modules/NAME/config, config.worktree, info/attributes —
// are restored or removed; data (a commit) is kept.
func TestStructureExistingControl(t *testing.T) {
	w := newGitWorld(t)
	w.git(w.root, "init", "-q", "--bare", filepath.Join(w.root, ".git/modules/lib"))
	before := readFile(t, filepath.Join(w.root, ".git/modules/lib/config"))
	vs := w.command(func() {
		f, err := os.OpenFile(filepath.Join(w.root, ".git/modules/lib/config"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, _ = f.WriteString(w.fsmonitor())
		require.NoError(t, f.Close())
		w.writeFile(".git/config.worktree", w.fsmonitor())
		w.writeFile(".git/info/attributes", "* filter=evil\n")
		w.writeFile("two.txt", "two\n")
		w.git(w.root, "add", "two.txt")
		w.git(w.root, "commit", "-q", "-m", "two")
	})
	assert.Equal(t, before, readFile(t, filepath.Join(w.root, ".git/modules/lib/config")))
	assert.NoFileExists(t, filepath.Join(w.root, ".git/config.worktree"))
	assert.NoFileExists(t, filepath.Join(w.root, ".git/info/attributes"))
	assert.Contains(t, w.git(w.root, "log", "--oneline"), "two", "a commit (objects, refs, index, logs) is data and stays")
	for _, v := range vs {
		assert.NotContains(t, v.Path, "/objects/", "objects are data: %s", v)
		assert.NotContains(t, v.Path, "/refs/", "refs are data: %s", v)
	}
	assert.Len(t, vs, 3, "violations:\n%s", vlist(vs))
}

// TestStructureGitInit: git init inside the root is allowed; its config
// keeps only inert keys and its sample hooks are removed.
func TestStructureGitInit(t *testing.T) {
	w := newGitWorld(t)
	vs := w.command(func() {
		w.git(w.root, "init", "-q", filepath.Join(w.root, "fresh"))
		w.git(filepath.Join(w.root, "fresh"), "remote", "add", "origin", "https://example.invalid/x.git")
		w.git(filepath.Join(w.root, "fresh"), "config", "core.sshCommand", "touch "+w.canary)
	})
	cfg := readFile(t, filepath.Join(w.root, "fresh/.git/config"))
	assert.Contains(t, cfg, "https://example.invalid/x.git", "remote URLs are inert")
	assert.NotContains(t, cfg, "sshcommand")
	assert.NotContains(t, strings.ToLower(cfg), "sshcommand")
	assert.Contains(t, vlist(vs), "removed core.sshcommand")
	w.writeFile("fresh/a.txt", "a\n")
	w.git(filepath.Join(w.root, "fresh"), "add", "a.txt")
	w.git(filepath.Join(w.root, "fresh"), "commit", "-q", "-m", "a")
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestStructureHiddenInData: a git directory hidden in another
// repository's data (.git/objects/…, which walks skip) and named by a .git
// file is still found: the guard follows .git files as git does.
func TestStructureHiddenInData(t *testing.T) {
	for _, repaired := range []bool{false, true} {
		w := newGitWorld(t)
		plant := func() {
			w.writeFile(".git/objects/zz/ev/HEAD", "ref: refs/heads/main\n")
			w.writeFile(".git/objects/zz/ev/config", w.fsmonitor())
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git/objects/zz/ev/refs/heads"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git/objects/zz/ev/objects"), 0o755))
			w.writeFile("sub/f", "f\n")
			w.writeFile("sub/.git", "gitdir: ../.git/objects/zz/ev\n")
		}
		if !repaired {
			plant()
			require.True(t, w.statusRuns(filepath.Join(w.root, "sub")), "fixture: the hidden git directory's fsmonitor did not run; the test proves nothing")
			continue
		}
		vs := w.command(plant)
		assert.False(t, w.statusRuns(filepath.Join(w.root, "sub")), "the host's git ran a fsmonitor of a git dir hidden in objects/; violations:\n%s", vlist(vs))
		assert.NotContains(t, readFile(t, filepath.Join(w.root, ".git/objects/zz/ev/config")), "fsmonitor")
	}
}

// TestStructureNested: a git directory inside another one's kept or
// unwalked parts — a new git directory's own .git, its info/ or an
// unknown entry, an existing bare repository's refs/ — registered as a
// gitlink in the superproject's index: the host's status recurses into it
// and discovers the nested .git. Every nested git directory is a git
// directory of its own, and a new repository keeps only what git creates.
func TestStructureNested(t *testing.T) {
	for _, tc := range []struct {
		name string
		// before runs before the command (the baseline); at is where
		// the planted repository lies, made a gitlink at that path.
		before func(w *gitWorld)
		setup  func(w *gitWorld)
		at     string
	}{
		{name: "new git dir's .git", setup: func(w *gitWorld) { w.gitDirByContent("sub") }, at: "sub"},
		{name: "new git dir's info", setup: func(w *gitWorld) { w.gitDirByContent("sub") }, at: "sub/info"},
		{name: "new git dir's unknown entry", setup: func(w *gitWorld) { w.gitDirByContent("sub") }, at: "sub/extra"},
		{name: "new git dir's refs", setup: func(w *gitWorld) { w.gitDirByContent("sub") }, at: "sub/refs/x"},
		{name: "existing bare repository's refs", before: func(w *gitWorld) { w.git(w.root, "init", "-q", "--bare", filepath.Join(w.root, "lib.git")) }, at: "lib.git/refs/x"},
		{name: "existing bare repository's info", before: func(w *gitWorld) { w.git(w.root, "init", "-q", "--bare", filepath.Join(w.root, "lib.git")) }, at: "lib.git/info/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, repaired := range []bool{false, true} {
				w := newGitWorld(t)
				if tc.before != nil {
					tc.before(w)
				}
				plant := func() {
					if tc.setup != nil {
						tc.setup(w)
					}
					w.plantRepo(tc.at)
				}
				if !repaired {
					plant()
					require.True(t, w.statusRuns(w.root), "fixture: git status in the superproject did not run the nested repository's fsmonitor; the test proves nothing")
					continue
				}
				vs := w.command(plant)
				assert.False(t, w.statusRuns(w.root), "the host's git ran a fsmonitor of a repository nested at %s; violations:\n%s", tc.at, vlist(vs))
			}
		})
	}
}

// gitDirByContent makes rel a git directory by content (HEAD, objects/,
// refs/), as a bare repository or a separate git directory is.
func (w *gitWorld) gitDirByContent(rel string) {
	w.t.Helper()
	w.writeFile(rel+"/HEAD", "ref: refs/heads/main\n")
	require.NoError(w.t, os.MkdirAll(filepath.Join(w.root, rel, "objects"), 0o755))
	require.NoError(w.t, os.MkdirAll(filepath.Join(w.root, rel, "refs/heads"), 0o755))
}

// plantRepo makes a repository with one commit at rel, whose config has
// the fsmonitor, and registers it as a gitlink in the root's index.
func (w *gitWorld) plantRepo(rel string) {
	w.t.Helper()
	dir := filepath.Join(w.root, rel)
	require.NoError(w.t, os.MkdirAll(dir, 0o755))
	w.git(dir, "init", "-q")
	w.writeFile(rel+"/f", "f\n")
	w.git(dir, "add", "f")
	w.git(dir, "commit", "-q", "-m", "nested")
	f, err := os.OpenFile(filepath.Join(dir, ".git/config"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(w.t, err)
	_, err = f.WriteString(w.fsmonitor())
	require.NoError(w.t, err)
	require.NoError(w.t, f.Close())
	head := strings.TrimSpace(w.git(dir, "rev-parse", "HEAD"))
	w.git(w.root, "update-index", "--add", "--cacheinfo", "160000,"+head+","+rel)
}
