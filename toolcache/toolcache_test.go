package toolcache

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed", name)
	}
}

// TestDetectGo: the module cache comes from `go env GOMODCACHE` (here set
// through the environment, as a user's go env -w would), the build cache
// is made per workspace, and a project without go.mod gets neither.
func TestDetectGo(t *testing.T) {
	needTool(t, "go")
	base := tempDir(t)
	root, home, mod := filepath.Join(base, "root"), filepath.Join(base, "home"), filepath.Join(base, "mod")
	for _, d := range []string{root, home, filepath.Join(mod, "cache", "download")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	env := append(os.Environ(), "GOMODCACHE="+mod, "XDG_CACHE_HOME=")
	caches, err := Detect(t.Context(), Options{Root: root, Home: home, Env: env})
	require.NoError(t, err)
	assert.Empty(t, caches, "no go.mod: no Go caches")

	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	caches, err = Detect(t.Context(), Options{Root: root, Home: home, Env: env})
	require.NoError(t, err)
	require.Len(t, caches, 2)
	assert.Equal(t, Cache{Tool: "go", Kind: "module cache", Path: mod, Source: "go env GOMODCACHE", Env: map[string]string{"GOMODCACHE": mod}}, caches[0])
	assert.True(t, caches[1].Write)
	assert.Equal(t, filepath.Join(home, ".cache", "cordon", "build"), filepath.Dir(filepath.Dir(caches[1].Path)))
	assert.DirExists(t, caches[1].Path)
	assert.Equal(t, map[string]string{"GOCACHE": caches[1].Path}, caches[1].Env)
	assert.Equal(t, `toolchain cache: go module cache (go env GOMODCACHE)`, caches[0].Label())

	// Another root gets another build cache.
	other := filepath.Join(base, "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "go.work"), []byte("go 1.22\n"), 0o644))
	caches2, err := Detect(t.Context(), Options{Root: other, Home: home, Env: env})
	require.NoError(t, err)
	require.Len(t, caches2, 2)
	assert.NotEqual(t, caches[1].Path, caches2[1].Path)
}

// TestDetectRefuses: a location that is the home, an ancestor of it, the
// file system root or holds the workspace is not granted, with a typed
// error naming it; one inside the root is left to the root's rules.
func TestDetectRefuses(t *testing.T) {
	needTool(t, "go")
	base := tempDir(t)
	root, home := filepath.Join(base, "home", "src", "root"), filepath.Join(base, "home")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	build := filepath.Join(base, "build")
	for _, mod := range []string{home, base, filepath.Join(home, "src"), "/"} {
		caches, err := Detect(t.Context(), Options{Root: root, Home: home, BuildDir: build, Env: append(os.Environ(), "GOMODCACHE="+mod)})
		var ce *Error
		require.ErrorAs(t, err, &ce, mod)
		assert.Equal(t, mod, ce.Path)
		assert.ErrorIs(t, err, ErrTooBroad)
		require.Len(t, caches, 1, "only the build cache")
		assert.True(t, caches[0].Write)
	}
	inside := filepath.Join(root, "modcache")
	require.NoError(t, os.MkdirAll(inside, 0o755))
	caches, err := Detect(t.Context(), Options{Root: root, Home: home, BuildDir: build, Env: append(os.Environ(), "GOMODCACHE="+inside)})
	require.NoError(t, err)
	require.Len(t, caches, 1, "a cache inside the root needs no rule")

	for _, glob := range []string{filepath.Join(base, "mod[x]"), filepath.Join(base, "mod{a,b}")} {
		require.NoError(t, os.MkdirAll(filepath.Join(glob, "cache", "download"), 0o755))
		_, err = Detect(t.Context(), Options{Root: root, Home: home, BuildDir: build, Env: append(os.Environ(), "GOMODCACHE="+glob)})
		assert.ErrorIs(t, err, ErrGlob, glob)
	}
	notCache := filepath.Join(base, "dotssh")
	require.NoError(t, os.MkdirAll(notCache, 0o700))
	_, err = Detect(t.Context(), Options{Root: root, Home: home, BuildDir: build, Env: append(os.Environ(), "GOMODCACHE="+notCache)})
	assert.ErrorIs(t, err, ErrNotCache, "a directory that is not a module cache is not granted")

	// The tools' own HOME counts as a home too (a workspace home that
	// differs from the real one).
	realHome := filepath.Join(base, "realhome")
	require.NoError(t, os.MkdirAll(filepath.Join(realHome, "cache", "download"), 0o755))
	_, err = Detect(t.Context(), Options{Root: root, Home: home, BuildDir: build, Env: append(os.Environ(), "HOME="+realHome, "GOMODCACHE="+realHome)})
	assert.ErrorIs(t, err, ErrTooBroad)
}

// TestDetectProjectConfigIgnored: an .npmrc in the repository cannot
// choose what is granted; the user's setting (here npm_config_cache)
// does. Cargo's CARGO_HOME itself, which holds credentials, is never
// granted.
func TestDetectProjectConfigIgnored(t *testing.T) {
	base := tempDir(t)
	root, home := filepath.Join(base, "root"), filepath.Join(base, "home")
	user, evil := filepath.Join(base, "npm-user"), filepath.Join(base, "evil")
	for _, d := range []string{root, filepath.Join(user, "_cacache", "index-v5"), filepath.Join(evil, "_cacache", "index-v5"), filepath.Join(home, ".cargo", "registry", "index")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "package.json"), []byte("{}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".npmrc"), []byte("cache="+evil+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "Cargo.toml"), []byte("[package]\n"), 0o644))
	env := append(os.Environ(), "npm_config_cache="+user, "CARGO_HOME=")
	caches, err := Detect(t.Context(), Options{Root: root, Home: home, Env: env})
	require.NoError(t, err)
	var paths []string
	for _, c := range caches {
		paths = append(paths, c.Path)
		assert.False(t, c.Write)
	}
	assert.Contains(t, paths, filepath.Join(home, ".cargo", "registry"))
	assert.NotContains(t, paths, filepath.Join(home, ".cargo"))
	if _, err := exec.LookPath("npm"); err == nil {
		assert.Contains(t, paths, filepath.Join(user, "_cacache"))
		assert.NotContains(t, paths, filepath.Join(evil, "_cacache"))
	}
}

// fakeTool writes an executable script name into dir.
func fakeTool(t *testing.T, dir, name, script string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755))
	return p
}

// TestDetectUnsafeTool: a tool that commands could have written (an
// activated virtualenv's, node_modules/.bin's, a link into the root) is
// never run on the host, and tools run without the variables that load
// code (PYTHONPATH, NODE_OPTIONS, LD_PRELOAD).
func TestDetectUnsafeTool(t *testing.T) {
	base := tempDir(t)
	root, home := filepath.Join(base, "root"), filepath.Join(base, "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	canary := filepath.Join(base, "ran")
	planted := fakeTool(t, filepath.Join(root, ".venv", "bin"), "go", "touch "+canary+"\necho "+home+"\n")
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))

	// On the PATH: skipped.
	_, err := Detect(t.Context(), Options{Root: root, Home: home, BuildDir: filepath.Join(base, "b"), Env: []string{"PATH=" + filepath.Dir(planted)}})
	assert.NoError(t, err, "the planted entry is dropped: no go at all")
	assert.NoFileExists(t, canary)

	// Reached through a link from a directory commands cannot write.
	links := filepath.Join(base, "links")
	require.NoError(t, os.MkdirAll(links, 0o755))
	require.NoError(t, os.Symlink(planted, filepath.Join(links, "go")))
	_, err = Detect(t.Context(), Options{Root: root, Home: home, BuildDir: filepath.Join(base, "b"), Env: []string{"PATH=" + links}})
	assert.ErrorIs(t, err, ErrUnsafeTool)
	assert.NoFileExists(t, canary)

	// Writable by the policy (not only the root): likewise.
	other := fakeTool(t, filepath.Join(base, "scratch", "bin"), "go", "touch "+canary+"\n")
	_, err = Detect(t.Context(), Options{Root: root, Home: home, BuildDir: filepath.Join(base, "b"), Env: []string{"PATH=" + filepath.Dir(other)},
		Writable: func(p string) bool {
			return p == filepath.Join(base, "scratch") || strings.HasPrefix(p, filepath.Join(base, "scratch")+"/")
		}})
	assert.NoError(t, err)
	assert.NoFileExists(t, canary)

	// Twin: the same tool where commands cannot write runs, with only
	// the variables that locate settings.
	envOut := filepath.Join(base, "env.txt")
	safe := fakeTool(t, filepath.Join(base, "safe"), "go", "/usr/bin/env > "+envOut+"\n")
	_, _ = Detect(t.Context(), Options{Root: root, Home: home, BuildDir: filepath.Join(base, "b"),
		Env: []string{"PATH=" + filepath.Dir(safe) + ":" + filepath.Dir(planted) + ":relative", "HOME=" + home, "GOMODCACHE=/x", "PYTHONPATH=" + root, "NODE_OPTIONS=--require " + root + "/x.js", "LD_PRELOAD=" + root + "/x.so"}})
	got, err := os.ReadFile(envOut)
	require.NoError(t, err, "the safe tool ran")
	assert.Contains(t, string(got), "GOMODCACHE=/x\n")
	assert.Contains(t, string(got), "HOME="+home+"\n")
	assert.Contains(t, string(got), "PATH="+filepath.Dir(safe)+"\n", "the PATH given to the tool has no writable or relative entry")
	for _, v := range []string{"PYTHONPATH", "NODE_OPTIONS", "LD_PRELOAD"} {
		assert.NotContains(t, string(got), v+"=")
	}
}

// TestDetectTimeout: a tool that hangs, with a child holding its output
// open, is killed with its group after the timeout.
func TestDetectTimeout(t *testing.T) {
	base := tempDir(t)
	root := filepath.Join(base, "root")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	slow := fakeTool(t, filepath.Join(base, "bin"), "go", "(sleep 30) & sleep 30\n")
	done := make(chan error, 1)
	go func() {
		_, err := Detect(t.Context(), Options{Root: root, Home: base, BuildDir: filepath.Join(base, "b"), Env: []string{"PATH=" + filepath.Dir(slow)}, Timeout: 200 * time.Millisecond})
		done <- err
	}()
	select {
	case err := <-done:
		assert.Error(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Detect still waits for a tool that hangs")
	}
}

// TestBuildCacheSafe: the build cache is made without following links,
// refused under a directory commands may write, made nowhere on a dry
// run, and a root made again at the same path gets a new one.
func TestBuildCacheSafe(t *testing.T) {
	needTool(t, "go")
	base := tempDir(t)
	root, home := filepath.Join(base, "root"), filepath.Join(base, "home")
	for _, d := range []string{root, home, filepath.Join(base, "mod", "cache", "download"), filepath.Join(base, "target")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	env := append(os.Environ(), "GOMODCACHE="+filepath.Join(base, "mod"), "XDG_CACHE_HOME=")
	build := func(o Options) ([]Cache, error) {
		o.Root, o.Env = root, env
		if o.Home == "" {
			o.Home = home
		}
		caches, err := Detect(t.Context(), o)
		var out []Cache
		for _, c := range caches {
			if c.Write {
				out = append(out, c)
			}
		}
		return out, err
	}

	// A dry run names the directory and makes nothing.
	dry, err := build(Options{DryRun: true})
	require.NoError(t, err)
	require.Len(t, dry, 1)
	assert.NoDirExists(t, filepath.Join(home, ".cache"))

	made, err := build(Options{})
	require.NoError(t, err)
	require.Len(t, made, 1)
	assert.Equal(t, dry[0].Path, made[0].Path, "the dry run names what a run makes")
	st, err := os.Stat(made[0].Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())

	// A link swapped in for a directory of the cache: refused, and what
	// it points to is not granted.
	key := filepath.Dir(made[0].Path)
	require.NoError(t, os.RemoveAll(key))
	require.NoError(t, os.Symlink(filepath.Join(base, "target"), key))
	swapped, err := build(Options{})
	assert.ErrorIs(t, err, ErrUnsafeDir)
	refused(t, swapped, made[0].Path)
	require.NoError(t, os.Remove(key))

	// Under a directory commands may write: refused.
	under, err := build(Options{Writable: func(p string) bool { return p == filepath.Join(home, ".cache") }})
	assert.ErrorIs(t, err, ErrWritableParent)
	refused(t, under, made[0].Path)

	// The same path, a new directory: a new cache.
	again, err := build(Options{})
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(root))
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	fresh, err := build(Options{})
	require.NoError(t, err)
	require.Len(t, fresh, 1)
	assert.NotEqual(t, again[0].Path, fresh[0].Path)

	// A very long root name still fits.
	long := filepath.Join(base, strings.Repeat("r", 240))
	require.NoError(t, os.MkdirAll(long, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(long, "go.mod"), []byte("module x\n"), 0o644))
	caches, err := Detect(t.Context(), Options{Root: long, Home: home, Env: env})
	require.NoError(t, err)
	require.Len(t, caches, 2)
	assert.DirExists(t, caches[1].Path)
}

// refused checks that a refused build cache gets no rule but still names
// the workspace's cache, so Go never falls back to the user's own.
func refused(t *testing.T, caches []Cache, want string) {
	t.Helper()
	require.Len(t, caches, 1)
	assert.True(t, caches[0].NoRule)
	assert.Equal(t, map[string]string{"GOCACHE": want}, caches[0].Env)
	p := Extend(&policy.Policy{}, caches)
	assert.Empty(t, p.PathRules, "no rule for a refused cache")
	assert.Equal(t, want, Env(caches)["GOCACHE"])
}

// TestDetectUnsafeSettings: no tool runs when what it reads its settings
// or code from could be the commands': a home inside the root, a home or
// a settings directory (Python's user site under ~/.local, npm's
// ~/.npmrc, Go's env file) that commands may write. Twin: the same tool
// runs when nothing of that is writable.
func TestDetectUnsafeSettings(t *testing.T) {
	base := tempDir(t)
	root, home := filepath.Join(base, "root"), filepath.Join(base, "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	canary := filepath.Join(base, "ran")
	tool := fakeTool(t, filepath.Join(base, "bin"), "go", "/usr/bin/touch "+canary+"\n")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	env := []string{"PATH=" + filepath.Dir(tool), "HOME=" + home}
	under := func(dir string) func(string) bool {
		return func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	}
	for name, o := range map[string]Options{
		"user site writable":  {Writable: under(filepath.Join(home, ".local"))},
		"npmrc writable":      {Writable: under(filepath.Join(home, ".npmrc"))},
		"go env writable":     {Writable: under(filepath.Join(home, ".config"))},
		"home writable":       {Writable: under(home)},
		"home inside root":    {Home: filepath.Join(root, ".home")},
		"tools' home in root": {Env: []string{"PATH=" + filepath.Dir(tool), "HOME=" + root}},
	} {
		t.Run(name, func(t *testing.T) {
			o.Root, o.BuildDir = root, filepath.Join(base, "b")
			if o.Home == "" {
				o.Home = home
			}
			if o.Env == nil {
				o.Env = env
			}
			_, err := Detect(t.Context(), o)
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.True(t, errors.Is(err, ErrUnsafeSettings) || errors.Is(err, ErrUnsafeHome), "%v", err)
			assert.NoFileExists(t, canary, "the tool did not run")
		})
	}
	_, _ = Detect(t.Context(), Options{Root: root, Home: home, BuildDir: filepath.Join(base, "b"), Env: env})
	assert.FileExists(t, canary, "twin: with nothing writable the tool runs")
}
