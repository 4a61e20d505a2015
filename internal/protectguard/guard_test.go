//go:build unix

package protectguard_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/pathwatch"
	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/policy"
)

// world is a workspace root with a repository, a nested repository, an
// outside directory and a guard over the root.
type world struct {
	t       *testing.T
	base    string
	root    string
	outside string
	g       *protectguard.Guard
}

const (
	configText = "[core]\n\trepositoryformatversion = 0\n"
	sampleText = "#!/bin/sh\nexit 0\n"
)

func newWorld(t *testing.T, opts ...func(*protectguard.Options)) *world {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w := &world{t: t, base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	w.write("outside/secret.txt", "outside\n", 0o644)
	w.repo("root")
	w.repo("root/a/b/c/d/e")
	w.write("root/src/main.go", "package main\n", 0o644)
	w.write("root/.vscode/settings.json", "{}\n", 0o644)
	c, err := policy.NewChecker(policy.Coding.Policy(), w.root, filepath.Join(base, "home"))
	require.NoError(t, err)
	o := protectguard.Options{Checker: c, Trees: []string{w.root}}
	for _, f := range opts {
		f(&o)
	}
	w.g, err = protectguard.New(o)
	require.NoError(t, err)
	return w
}

func (w *world) path(rel string) string { return filepath.Join(w.base, rel) }

func (w *world) write(rel, content string, mode os.FileMode) {
	w.t.Helper()
	p := w.path(rel)
	require.NoError(w.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(w.t, os.WriteFile(p, []byte(content), mode))
	require.NoError(w.t, os.Chmod(p, mode))
}

func (w *world) repo(rel string) {
	w.write(rel+"/.git/HEAD", "ref: refs/heads/main\n", 0o644)
	w.write(rel+"/.git/config", configText, 0o644)
	w.write(rel+"/.git/hooks/pre-commit.sample", sampleText, 0o755)
	w.write(rel+"/.git/hooks/post-update.sample", sampleText, 0o755)
}

func (w *world) read(rel string) string {
	w.t.Helper()
	b, err := os.ReadFile(w.path(rel))
	require.NoError(w.t, err)
	return string(b)
}

func (w *world) absent(rel string) {
	w.t.Helper()
	_, err := os.Lstat(w.path(rel))
	assert.ErrorIs(w.t, err, os.ErrNotExist, "%s should not exist", rel)
}

// command runs mutate between Begin and End, like a sandboxed command.
func (w *world) command(mutate func()) []protectguard.Violation {
	w.t.Helper()
	ctx := context.Background()
	vs, err := w.g.Begin(ctx)
	require.NoError(w.t, err)
	require.Empty(w.t, vs)
	mutate()
	vs, err = w.g.End(ctx)
	require.NoError(w.t, err)
	return vs
}

func paths(vs []protectguard.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Path)
	}
	slices.Sort(out)
	return out
}

func noFailures(t *testing.T, vs []protectguard.Violation) {
	t.Helper()
	for _, v := range vs {
		assert.False(t, strings.HasPrefix(v.Action, "failed"), "violation %s", v)
	}
}

func TestGuardRepairs(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(w *world)
		// check runs after End; want lists the violation paths (relative
		// to the world's base).
		check func(w *world)
		want  []string
	}{
		{
			name:   "new hook is removed",
			mutate: func(w *world) { w.write("root/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0o755) },
			check:  func(w *world) { w.absent("root/.git/hooks/pre-commit") },
			want:   []string{"root/.git/hooks/pre-commit"},
		},
		{
			name:   "overwritten sample is restored",
			mutate: func(w *world) { w.write("root/.git/hooks/pre-commit.sample", "evil\n", 0o755) },
			check:  func(w *world) { assert.Equal(w.t, sampleText, w.read("root/.git/hooks/pre-commit.sample")) },
			want:   []string{"root/.git/hooks/pre-commit.sample"},
		},
		{
			name: "appended config is restored",
			mutate: func(w *world) {
				f, err := os.OpenFile(w.path("root/.git/config"), os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(w.t, err)
				_, _ = f.WriteString("[core]\n\tfsmonitor = evil\n")
				require.NoError(w.t, f.Close())
			},
			check: func(w *world) { assert.Equal(w.t, configText, w.read("root/.git/config")) },
			want:  []string{"root/.git/config"},
		},
		{
			name:   "nested repository config is restored",
			mutate: func(w *world) { w.write("root/a/b/c/d/e/.git/config", "evil\n", 0o644) },
			check:  func(w *world) { assert.Equal(w.t, configText, w.read("root/a/b/c/d/e/.git/config")) },
			want:   []string{"root/a/b/c/d/e/.git/config"},
		},
		{
			name: "new repository's hooks and config are removed",
			mutate: func(w *world) {
				w.write("root/x/y/.git/hooks/pre-commit", "evil\n", 0o755)
				w.write("root/x/y/.git/config", "evil\n", 0o644)
				w.write("root/x/y/.git/HEAD", "ref: refs/heads/main\n", 0o644)
			},
			check: func(w *world) {
				w.absent("root/x/y/.git/hooks")
				w.absent("root/x/y/.git/config")
				assert.Equal(w.t, "ref: refs/heads/main\n", w.read("root/x/y/.git/HEAD"), "unprotected files stay")
			},
			want: []string{"root/x/y/.git/config", "root/x/y/.git/hooks"},
		},
		{
			name:   "deleted sample is recreated",
			mutate: func(w *world) { require.NoError(w.t, os.Remove(w.path("root/.git/hooks/post-update.sample"))) },
			check: func(w *world) {
				assert.Equal(w.t, sampleText, w.read("root/.git/hooks/post-update.sample"))
				fi, err := os.Stat(w.path("root/.git/hooks/post-update.sample"))
				require.NoError(w.t, err)
				assert.Equal(w.t, os.FileMode(0o755), fi.Mode().Perm())
			},
			want: []string{"root/.git/hooks/post-update.sample"},
		},
		{
			name:   "chmod of a protected file is undone",
			mutate: func(w *world) { require.NoError(w.t, os.Chmod(w.path("root/.git/config"), 0o777)) },
			check: func(w *world) {
				fi, err := os.Stat(w.path("root/.git/config"))
				require.NoError(w.t, err)
				assert.Equal(w.t, os.FileMode(0o644), fi.Mode().Perm())
			},
			want: []string{"root/.git/config"},
		},
		{
			name: "config replaced by a link to an outside file: the outside file is untouched",
			mutate: func(w *world) {
				require.NoError(w.t, os.Remove(w.path("root/.git/config")))
				require.NoError(w.t, os.Symlink(w.path("outside/secret.txt"), w.path("root/.git/config")))
			},
			check: func(w *world) {
				assert.Equal(w.t, configText, w.read("root/.git/config"))
				fi, err := os.Lstat(w.path("root/.git/config"))
				require.NoError(w.t, err)
				assert.True(w.t, fi.Mode().IsRegular())
				assert.Equal(w.t, "outside\n", w.read("outside/secret.txt"))
			},
			want: []string{"root/.git/config"},
		},
		{
			name: ".git replaced by a link to a planted repository",
			mutate: func(w *world) {
				w.write("outside/evil/hooks/pre-commit", "evil\n", 0o755)
				w.write("outside/evil/config", "evil\n", 0o644)
				require.NoError(w.t, os.Rename(w.path("root/.git"), w.path("root/.git-away")))
				require.NoError(w.t, os.Symlink(w.path("outside/evil"), w.path("root/.git")))
			},
			check: func(w *world) {
				fi, err := os.Lstat(w.path("root/.git"))
				require.NoError(w.t, err)
				assert.True(w.t, fi.IsDir(), ".git is a real directory again")
				assert.Equal(w.t, configText, w.read("root/.git/config"))
				w.absent("root/.git/hooks/pre-commit")
				assert.Equal(w.t, "evil\n", w.read("outside/evil/config"), "the link's target is never written")
				assert.Equal(w.t, "evil\n", w.read("outside/evil/hooks/pre-commit"))
			},
			want: []string{"root/.git/config", "root/.git/hooks"},
		},
		{
			name: "rename away, plant, rename back",
			mutate: func(w *world) {
				require.NoError(w.t, os.Rename(w.path("root/.git"), w.path("root/.git-away")))
				w.write("root/.git-away/hooks/pre-commit", "evil\n", 0o755)
				w.write("root/.git-away/config", "evil\n", 0o644)
				require.NoError(w.t, os.Rename(w.path("root/.git-away"), w.path("root/.git")))
			},
			check: func(w *world) {
				w.absent("root/.git/hooks/pre-commit")
				assert.Equal(w.t, configText, w.read("root/.git/config"))
			},
			want: []string{"root/.git/config", "root/.git/hooks/pre-commit"},
		},
		{
			name: "hooks directory made read-only with a hook inside",
			mutate: func(w *world) {
				w.write("root/.git/hooks/pre-commit", "evil\n", 0o755)
				require.NoError(w.t, os.Chmod(w.path("root/.git/hooks"), 0o555))
			},
			check: func(w *world) {
				w.absent("root/.git/hooks/pre-commit")
				fi, err := os.Stat(w.path("root/.git/hooks"))
				require.NoError(w.t, err)
				assert.Equal(w.t, os.FileMode(0o755), fi.Mode().Perm())
			},
			want: []string{"root/.git/hooks", "root/.git/hooks/pre-commit"},
		},
		{
			name:   "bare-name protected file at depth",
			mutate: func(w *world) { w.write("root/src/deep/.envrc", "evil\n", 0o644) },
			check:  func(w *world) { w.absent("root/src/deep/.envrc") },
			want:   []string{"root/src/deep/.envrc"},
		},
		{
			name:   "protected directory content",
			mutate: func(w *world) { w.write("root/.vscode/tasks.json", "evil\n", 0o644) },
			check: func(w *world) {
				w.absent("root/.vscode/tasks.json")
				assert.Equal(w.t, "{}\n", w.read("root/.vscode/settings.json"))
			},
			want: []string{"root/.vscode/tasks.json"},
		},
		{
			name: "unprotected changes stay",
			mutate: func(w *world) {
				w.write("root/src/main.go", "package changed\n", 0o644)
				w.write("root/.git/HEAD", "ref: refs/heads/other\n", 0o644)
				w.write("root/.git/objects/ab/cdef", "object\n", 0o444)
			},
			check: func(w *world) {
				assert.Equal(w.t, "package changed\n", w.read("root/src/main.go"))
				assert.Equal(w.t, "ref: refs/heads/other\n", w.read("root/.git/HEAD"))
			},
		},
	}
	for _, tc := range cases {
		for _, watched := range []bool{false, true} {
			name := tc.name
			var opts []func(*protectguard.Options)
			if watched {
				// With a change watcher, and a first command that
				// changes nothing, so that the command's Begin reuses
				// the last walk's state and End sees the change.
				name += "/watched"
				opts = append(opts, withWatcher(t))
			}
			t.Run(name, func(t *testing.T) {
				w := newWorld(t, opts...)
				if watched {
					require.Empty(t, w.command(func() {}))
				}
				repairs(t, w, tc.mutate, tc.check, tc.want)
			})
		}
	}
}

// withWatcher gives the guard a change watcher (skipping where there is
// none).
func withWatcher(t *testing.T) func(*protectguard.Options) {
	w, err := pathwatch.New(pathwatch.Content, 0)
	if err != nil {
		t.Skipf("no change watcher here: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return func(o *protectguard.Options) { o.Watcher = w }
}

// repairs runs mutate as a command and checks its violations and effect.
func repairs(t *testing.T, w *world, mutate, check func(*world), wantRel []string) {
	t.Helper()
	vs := w.command(func() { mutate(w) })
	noFailures(t, vs)
	var want []string
	for _, p := range wantRel {
		want = append(want, w.path(p))
	}
	slices.Sort(want)
	assert.Equal(t, want, paths(vs), "violations %v", vs)
	check(w)
	// A second command that changes nothing reports nothing.
	assert.Empty(t, w.command(func() {}))
}

func TestGuardAcceptsChangesBetweenCommands(t *testing.T) {
	w := newWorld(t)
	require.Empty(t, w.command(func() {}))
	// The user edits the config between commands: that is the new baseline.
	w.write("root/.git/config", configText+"[user]\n\tname = me\n", 0o644)
	require.Empty(t, w.command(func() {}))
	assert.Equal(t, configText+"[user]\n\tname = me\n", w.read("root/.git/config"))
}

func TestGuardBackgroundProcess(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	// A background process starts, and plants a hook while it runs.
	_, err := w.g.Begin(ctx)
	require.NoError(t, err)
	w.write("root/.git/hooks/pre-commit", "evil\n", 0o755)
	// A later command starts: the guard repairs before it runs.
	vs, err := w.g.Begin(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{w.path("root/.git/hooks/pre-commit")}, paths(vs))
	w.absent("root/.git/hooks/pre-commit")
	vs, err = w.g.End(ctx)
	require.NoError(t, err)
	assert.Empty(t, vs)
	// The background process plants again and exits: repaired at its exit.
	w.write("root/.git/config", "evil\n", 0o644)
	vs, err = w.g.End(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{w.path("root/.git/config")}, paths(vs))
	assert.Equal(t, configText, w.read("root/.git/config"))
	assert.Equal(t, 0, w.g.Active())
}

func TestGuardHardLink(t *testing.T) {
	// A hard link made during one command and written in a later one:
	// the config is restored by renaming a fresh file over it, so the
	// link keeps the command's content and the config does not.
	w := newWorld(t)
	require.Empty(t, w.command(func() {
		require.NoError(t, os.Link(w.path("root/.git/config"), w.path("root/cfg")))
	}))
	vs := w.command(func() { w.write("root/cfg", "evil\n", 0o644) })
	assert.Equal(t, []string{w.path("root/.git/config")}, paths(vs))
	assert.Equal(t, configText, w.read("root/.git/config"))
	assert.Equal(t, "evil\n", w.read("root/cfg"))
}

func TestGuardLargeFileIsRemoved(t *testing.T) {
	w := newWorld(t, func(o *protectguard.Options) { o.MaxFileSize = 8 })
	vs := w.command(func() { w.write("root/.git/config", "evil\n", 0o644) })
	require.Len(t, vs, 1)
	assert.Contains(t, vs[0].Action, "removed")
	w.absent("root/.git/config")
}

func TestGuardLimit(t *testing.T) {
	w := newWorld(t, func(o *protectguard.Options) { o.MaxEntries = 5 })
	_, err := w.g.Begin(context.Background())
	var lerr *protectguard.LimitError
	require.ErrorAs(t, err, &lerr)
	assert.True(t, errors.Is(err, protectguard.ErrLimit))
	assert.Equal(t, 0, w.g.Active())
}

func TestGuardNoRules(t *testing.T) {
	base := t.TempDir()
	p := policy.Coding.Policy()
	p.Protect = policy.Protect{Disabled: true}
	c, err := policy.NewChecker(p, base, "")
	require.NoError(t, err)
	g, err := protectguard.New(protectguard.Options{Checker: c, Trees: []string{base}})
	require.NoError(t, err)
	assert.Empty(t, g.Trees())
	require.NoError(t, os.MkdirAll(filepath.Join(base, ".git", "hooks"), 0o755))
	vs, err := g.Begin(context.Background())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(base, ".git", "hooks", "pre-commit"), nil, 0o755))
	vs, err = g.End(context.Background())
	require.NoError(t, err)
	assert.Empty(t, vs)
}

func TestMergedTrees(t *testing.T) {
	base := t.TempDir()
	c, err := policy.NewChecker(policy.Coding.Policy(), base, "")
	require.NoError(t, err)
	g, err := protectguard.New(protectguard.Options{Checker: c, Trees: []string{base + "/a/b", base + "/a", base + "/ab", base + "/a/"}})
	require.NoError(t, err)
	assert.Equal(t, []string{base + "/a", base + "/ab"}, g.Trees())
}

// TestTreeSwappedForLink: a guard's tree lies in a directory another
// command may write (a narrower grant's guard, nested in the workspace's
// tree). A command that swaps the tree's parent for a symbolic link must
// neither have the guard copy a file from the link's target (then restore
// that copy into the workspace: a read of a host file) nor have the
// repair write through the link. The twins swap in a real directory, and
// the guard restores as usual.
func TestTreeSwappedForLink(t *testing.T) {
	newSub := func(t *testing.T) (*world, *protectguard.Guard) {
		w := newWorld(t)
		w.write("root/sub/in/.vscode/settings.json", "{}\n", 0o644)
		w.write("outside/in/.vscode/settings.json", "SECRET\n", 0o600)
		c, err := policy.NewChecker(policy.Coding.Policy(), w.root, filepath.Join(w.base, "home"))
		require.NoError(t, err)
		g, err := protectguard.New(protectguard.Options{Checker: c, Trees: []string{w.path("root/sub/in")}})
		require.NoError(t, err)
		return w, g
	}
	// swap replaces root/sub by a link to outside, or by a real
	// directory holding in/ (the twin).
	swap := func(w *world, link bool) {
		require.NoError(w.t, os.Rename(w.path("root/sub"), w.path("root/sub-away")))
		if link {
			require.NoError(w.t, os.Symlink(w.outside, w.path("root/sub")))
		} else {
			require.NoError(w.t, os.MkdirAll(w.path("root/sub/in"), 0o755))
		}
	}
	ctx := context.Background()
	t.Run("baseline read through the link", func(t *testing.T) {
		for _, link := range []bool{false, true} {
			w, g := newSub(t)
			if link {
				// The baseline is taken while sub is a link to
				// outside; the command then puts a real sub back.
				swap(w, true)
			} else {
				w.write("root/sub/in/.vscode/settings.json", "SECRET\n", 0o600)
			}
			_, err := g.Begin(ctx)
			if link {
				require.NoError(t, os.Remove(w.path("root/sub")))
				require.NoError(t, os.MkdirAll(w.path("root/sub/in"), 0o755))
			} else {
				require.NoError(t, err)
				require.NoError(t, os.RemoveAll(w.path("root/sub/in/.vscode")))
			}
			if err == nil {
				_, _ = g.End(ctx)
			}
			got, rerr := os.ReadFile(w.path("root/sub/in/.vscode/settings.json"))
			if link {
				assert.False(t, rerr == nil && strings.Contains(string(got), "SECRET"), "the guard copied a file through its swapped tree into the workspace")
				continue
			}
			require.NoError(t, rerr, "twin: a removed protected file in the tree is restored")
			assert.Equal(t, "SECRET\n", string(got))
		}
	})
	t.Run("repair through the link", func(t *testing.T) {
		for _, link := range []bool{false, true} {
			w, g := newSub(t)
			require.NoError(t, os.Remove(w.path("outside/in/.vscode/settings.json")))
			_, err := g.Begin(ctx)
			require.NoError(t, err)
			swap(w, link)
			_, _ = g.End(ctx)
			if link {
				w.absent("outside/in/.vscode/settings.json")
				continue
			}
			assert.Equal(t, "{}\n", w.read("root/sub/in/.vscode/settings.json"), "twin: the removed settings are restored in the real tree")
		}
	})
}

// TestGuardBeyondBound: a command that pushes the trees past the bound
// of a cached walk (Options.MaxEntries) with plain files does not disable
// the repair: the walk is done again streaming, and a hook in an existing
// repository, a changed config and settings, and a new repository's hook
// and fsmonitor are all repaired, with no error. The twin, without the
// flood, repairs the same.
func TestGuardBeyondBound(t *testing.T) {
	for _, flood := range []bool{false, true} {
		w := newWorld(t, func(o *protectguard.Options) { o.MaxEntries = 200 })
		ctx := context.Background()
		_, err := w.g.Begin(ctx)
		require.NoError(t, err)
		if flood {
			for i := range 300 {
				w.write(fmt.Sprintf("root/junk/%03d", i), "", 0o644)
			}
		}
		w.write("root/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0o755)
		w.write("root/a/b/c/d/e/.git/config", "[core]\n\tfsmonitor = evil\n", 0o644)
		w.write("root/.vscode/settings.json", "{\"evil\": true}\n", 0o644)
		w.repo("root/fresh")
		w.write("root/fresh/.git/hooks/post-checkout", "#!/bin/sh\nevil\n", 0o755)
		w.write("root/fresh/.git/config", "[core]\n\tfsmonitor = evil\n", 0o644)
		w.write("root/fresh/.git/objects/x", "", 0o644)
		w.write("root/fresh/.git/refs/heads/main", "", 0o644)
		vs, err := w.g.End(ctx)
		require.NoError(t, err, "flood %v", flood)
		w.absent("root/.git/hooks/pre-commit")
		w.absent("root/fresh/.git/hooks")
		assert.NotContains(t, w.read("root/fresh/.git/config"), "fsmonitor")
		assert.Equal(t, configText, w.read("root/a/b/c/d/e/.git/config"))
		assert.Equal(t, "{}\n", w.read("root/.vscode/settings.json"))
		assert.Len(t, vs, 5, "flood %v: %v", flood, paths(vs))
	}
}

// TestGuardSweep: a directory that gains more entries than a repair
// records one by one — an existing hooks directory, a new repository's
// git directory (unknown entries), its kept info/ — costs no memory per
// entry and is swept: every entry the baseline lacks (for a new
// repository, every entry it does not keep) is removed.
func TestGuardSweep(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.g.Begin(ctx)
	require.NoError(t, err)
	const n = 5000
	w.repo("root/fresh")
	w.write("root/fresh/.git/objects/x", "", 0o644)
	w.write("root/fresh/.git/refs/heads/main", "", 0o644)
	require.NoError(t, os.MkdirAll(w.path("root/fresh/.git/info"), 0o755))
	for i := range n {
		for _, d := range []string{"root/.git/hooks", "root/fresh/.git", "root/fresh/.git/info"} {
			require.NoError(t, os.WriteFile(w.path(fmt.Sprintf("%s/x%04d", d, i)), nil, 0o755))
		}
	}
	vs, err := w.g.End(ctx)
	require.NoError(t, err)
	count := func(rel string) int {
		des, err := os.ReadDir(w.path(rel))
		require.NoError(t, err)
		return len(des)
	}
	assert.Equal(t, 2, count("root/.git/hooks"), "the hooks directory keeps the two samples of the baseline")
	w.absent("root/fresh/.git/hooks")
	w.absent("root/fresh/.git/x0000")
	assert.Equal(t, n, count("root/fresh/.git/info"), "a new repository keeps its info/")
	assert.Contains(t, vlist(vs), fmt.Sprintf("flooded (%d entries created in it)", n))
	assert.Less(t, len(vs), 10, "a sweep is one violation, not one per entry: %v", paths(vs))
}

// TestGuardSweepHoldsLittle: deciding to sweep a flooded directory of
// the baseline does not hold its whole listing: while a repair walks
// 30,000 new entries in .git/hooks, no listing it holds has more than
// the flood bound plus what the baseline had there (Held: the largest
// listing the last walk held). The twin shows the counter sees a
// listing: 4,000 new hooks, under the bound, are all held.
func TestGuardSweepHoldsLittle(t *testing.T) {
	held := func(n int) int {
		w := newWorld(t)
		ctx := context.Background()
		_, err := w.g.Begin(ctx)
		require.NoError(t, err)
		for i := range n {
			require.NoError(t, os.WriteFile(w.path(fmt.Sprintf("root/.git/hooks/x%06d", i)), nil, 0o755))
		}
		_, err = w.g.End(ctx)
		require.NoError(t, err)
		des, err := os.ReadDir(w.path("root/.git/hooks"))
		require.NoError(t, err)
		assert.Len(t, des, 2, "the new hooks are gone")
		return protectguard.Held(w.g)
	}
	assert.LessOrEqual(t, held(30000), 4096+2, "a flooded listing keeps the baseline's entries and at most the bound of new ones")
	assert.GreaterOrEqual(t, held(4000), 4000, "control: a listing under the bound is held whole")
}

// TestGuardLimitAfterCommand: a command that records more protected
// entries than the bound even streaming (300 .envrc files) still has
// what the baseline knew — every git directory, every protected path —
// checked and repaired; End fails with the limit, and every later Begin
// fails with it until a whole walk succeeds again, then repairs against
// the same baseline.
func TestGuardLimitAfterCommand(t *testing.T) {
	w := newWorld(t, func(o *protectguard.Options) { o.MaxEntries = 200 })
	ctx := context.Background()
	_, err := w.g.Begin(ctx)
	require.NoError(t, err)
	for i := range 300 {
		w.write(fmt.Sprintf("root/p%03d/.envrc", i), "evil\n", 0o644)
	}
	w.write("root/.git/hooks/pre-commit", "#!/bin/sh\nevil\n", 0o755)
	w.write("root/a/b/c/d/e/.git/config", "[core]\n\tfsmonitor = evil\n", 0o644)
	w.write("root/.vscode/settings.json", "{\"evil\": true}\n", 0o644)
	vs, err := w.g.End(ctx)
	require.ErrorIs(t, err, protectguard.ErrLimit)
	assert.Equal(t, []string{w.path("root/.git/hooks/pre-commit"), w.path("root/.vscode/settings.json"), w.path("root/a/b/c/d/e/.git/config")}, paths(vs))
	w.absent("root/.git/hooks/pre-commit")
	assert.Equal(t, configText, w.read("root/a/b/c/d/e/.git/config"))
	assert.Equal(t, "{}\n", w.read("root/.vscode/settings.json"))
	// Refused while the tree is beyond the bound, even with no command
	// running: a fresh baseline now would take the .envrc files in.
	_, err = w.g.Begin(ctx)
	require.ErrorIs(t, err, protectguard.ErrLimit)
	assert.Equal(t, 0, w.g.Active())
	// A change made meanwhile is still repaired against the old
	// baseline once the tree is back within the bound.
	w.write("root/.git/hooks/post-checkout", "#!/bin/sh\nevil\n", 0o755)
	for i := range 300 {
		require.NoError(t, os.RemoveAll(w.path(fmt.Sprintf("root/p%03d", i))))
	}
	vs, err = w.g.Begin(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{w.path("root/.git/hooks/post-checkout")}, paths(vs))
	w.absent("root/.git/hooks/post-checkout")
	vs, err = w.g.End(ctx)
	require.NoError(t, err)
	assert.Empty(t, vs)
}
