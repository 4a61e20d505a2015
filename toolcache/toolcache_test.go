package toolcache

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	for _, d := range []string{root, home, mod} {
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

	glob := filepath.Join(base, "mod[x]")
	require.NoError(t, os.MkdirAll(glob, 0o755))
	_, err = Detect(t.Context(), Options{Root: root, Home: home, BuildDir: build, Env: append(os.Environ(), "GOMODCACHE="+glob)})
	assert.ErrorIs(t, err, ErrGlob)
}

// TestDetectProjectConfigIgnored: an .npmrc in the repository cannot
// choose what is granted; the user's setting (here npm_config_cache)
// does. Cargo's CARGO_HOME itself, which holds credentials, is never
// granted.
func TestDetectProjectConfigIgnored(t *testing.T) {
	base := tempDir(t)
	root, home := filepath.Join(base, "root"), filepath.Join(base, "home")
	user, evil := filepath.Join(base, "npm-user"), filepath.Join(base, "evil")
	for _, d := range []string{root, filepath.Join(user, "_cacache"), filepath.Join(evil, "_cacache"), filepath.Join(home, ".cargo", "registry")} {
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
