package workspace_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/toolcache"
	"github.com/cordon-sandbox/cordon/workspace"
)

// goModuleFixture writes a Go module that needs gopkg.in/yaml.v3 at the
// version this repository uses, and returns the module cache that holds
// it; it skips when the host's module cache does not (a machine that never
// built this repository).
func goModuleFixture(t *testing.T, root string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	out, err := exec.Command(goTool, "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	modcache := strings.TrimSpace(string(out))
	version, sums := "", ""
	for _, f := range []string{"go.mod", "go.sum"} {
		fh, err := os.Open(filepath.Join("..", f))
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			switch {
			case f == "go.mod" && len(fields) >= 2 && fields[0] == "gopkg.in/yaml.v3":
				version = fields[1]
			case f == "go.sum" && len(fields) == 3 && fields[0] == "gopkg.in/yaml.v3" && strings.HasPrefix(fields[1], version):
				sums += sc.Text() + "\n"
			}
		}
		fh.Close()
	}
	require.NotEmpty(t, version, "go.mod requires gopkg.in/yaml.v3")
	if _, err := os.Stat(filepath.Join(modcache, "gopkg.in", "yaml.v3@"+version, "yaml.go")); err != nil {
		t.Skipf("the module cache %s does not hold gopkg.in/yaml.v3@%s: %v", modcache, version, err)
	}
	files := map[string]string{
		"go.mod":  "module mini\n\ngo 1.22\n\nrequire gopkg.in/yaml.v3 " + version + "\n",
		"go.sum":  sums,
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"gopkg.in/yaml.v3\"\n)\n\nfunc main() {\n\tb, _ := yaml.Marshal(map[string]int{\"built\": 1})\n\tfmt.Print(string(b))\n}\n",
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(body), 0o644))
	}
	return modcache
}

// TestToolchainCaches: in a Go module whose dependency is in the host's
// module cache, `go build` and `go vet` work in the sandbox with the home
// hidden: the module cache is readable and stays unchanged, the build
// cache is the workspace's own (it fills, from outside), the rest of the
// home stays unreadable. Twin: without toolchain caches the same build
// fails and produces nothing.
func TestToolchainCaches(t *testing.T) {
	backends := []struct {
		name string
		newX func(t *testing.T) executor.Executor
	}{
		{"landlock", func(t *testing.T) executor.Executor { return newLandlockX(t, landlock.Config{}) }},
		{"bwrap", func(t *testing.T) executor.Executor { return newBwrapX(t, bwrap.Config{}) }},
	}
	f := newAutoFixture(t)
	modcache := goModuleFixture(t, f.root)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(f.outside, "xdg-cache"))
	buildBase := filepath.Join(f.outside, "xdg-cache", "cordon", "build")
	canary := filepath.Join(modcache, "cordon-toolchain-canary")
	t.Cleanup(func() { os.Remove(canary) })
	// Approve every ask that opens nothing in the sandbox: the gate's
	// asks pass, grants of the home are declined.
	noGrants := workspace.WithApprover(func(_ context.Context, r *workspace.ApprovalRequest) (bool, error) { return len(r.Grants) == 0, nil })

	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			x := b.newX(t)
			app := filepath.Join(f.root, "app-"+b.name)
			s := f.open(t, x, noGrants)
			assert.Contains(t, s.Instructions(), "Toolchains: the go module cache is readable, a go build cache of this workspace's own is writable.")
			assert.NotContains(t, s.Instructions(), "`"+modcache+"`", "said once, in the Toolchains line")
			res, err := s.Run(t.Context(), "go build -o app-"+b.name+" . && go vet . && go env GOCACHE GOMODCACHE", "", 0)
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
			lines := strings.Fields(res.Stdout)
			require.Len(t, lines, 2, res.Stdout)
			assert.True(t, strings.HasPrefix(lines[0], buildBase+"/"), "GOCACHE is the workspace's own: %s", lines[0])
			assert.Equal(t, modcache, lines[1])

			// From outside: the program was built against the cached
			// module, and the workspace's build cache filled.
			out, err := exec.Command(app).Output()
			require.NoError(t, err)
			assert.Equal(t, "built: 1\n", string(out))
			entries, err := os.ReadDir(lines[0])
			require.NoError(t, err)
			assert.NotEmpty(t, entries, "the build cache was written")

			// The module cache is read-only and the rest of the home
			// hidden.
			// (The name is computed: the gate asks to run it and the
			// approver says yes; only the sandbox stands in the way.)
			res, err = s.Run(t.Context(), `d=$(go env GOMODCACHE); touch "$d/`+filepath.Base(canary)+`"`, "", 0)
			require.NoError(t, err)
			assert.NotEqual(t, 0, res.ExitCode)
			assert.NoFileExists(t, canary, "the module cache is not writable")
			res, err = s.Run(t.Context(), `cat "$(go env GOMODCACHE)/../../../.ssh/id_rsa"`, "", 0)
			require.NoError(t, err)
			assert.NotEqual(t, 0, res.ExitCode)
			assert.NotContains(t, res.Stdout, autoSecret)
		})
	}

	t.Run("without", func(t *testing.T) {
		x := newBwrapX(t, bwrap.Config{})
		s := f.open(t, x, noGrants, workspace.WithToolchainCaches())
		assert.NotContains(t, s.Instructions(), "Toolchains:")
		res, err := s.Run(t.Context(), "go build -o app-none .", "", 0)
		require.NoError(t, err)
		assert.NotEqual(t, 0, res.ExitCode, "the module cache is hidden without the toolchain caches")
		assert.NoFileExists(t, filepath.Join(f.root, "app-none"))
	})
}

// TestToolchainCachesPolicy: the caches' rules are named, come after the
// policy's own, and a deny rule on a cache still decides.
func TestToolchainCachesPolicy(t *testing.T) {
	f := newAutoFixture(t)
	modcache := goModuleFixture(t, f.root)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(f.outside, "xdg-cache"))
	ws, err := workspace.Local(f.root, workspace.WithHome(f.home))
	require.NoError(t, err)
	v := ws.Checker().DecideResolved(filepath.Join(modcache, "gopkg.in"), policy.Read)
	assert.Equal(t, policy.Allow, v.Decision)
	assert.Equal(t, `toolchain cache: go module cache (go env GOMODCACHE) "`+modcache+`"`, v.Rule)
	v = ws.Checker().DecideResolved(filepath.Join(modcache, "gopkg.in"), policy.Write)
	assert.NotEqual(t, policy.Allow, v.Decision, "the module cache is read-only")

	ws, err = workspace.Local(f.root, workspace.WithHome(f.home), workspace.WithDeniedPaths(modcache))
	require.NoError(t, err)
	v = ws.Checker().DecideResolved(filepath.Join(modcache, "gopkg.in"), policy.Read)
	assert.Equal(t, policy.Deny, v.Decision, "a deny rule on the cache wins")

	ws, err = workspace.Local(f.root, workspace.WithHome(f.home), workspace.WithToolchainCaches())
	require.NoError(t, err)
	v = ws.Checker().DecideResolved(filepath.Join(modcache, "gopkg.in"), policy.Read)
	assert.Equal(t, policy.Ask, v.Decision, "no caches: read outside the root asks")

	caches, err := toolcache.Detect(t.Context(), toolcache.Options{Root: f.root, Home: f.home})
	require.NoError(t, err)
	p := toolcache.Extend(toolcache.Extend(policy.Coding.Policy(), caches), caches)
	assert.Len(t, p.PathRules, len(caches), "Extend adds a cache once")
}
