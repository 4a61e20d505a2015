//go:build darwin

package seatbelt_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/seatbelt"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// gitEnv points git's global configuration at /dev/null: the fixture's
// ~/.gitconfig is unreadable in the sandbox (coding mode asks before
// reading outside the root), and git refuses to run on a global
// configuration it cannot read. Workspaces do the same (see the package
// documentation, Troubleshooting).
var gitEnv = conformance.WithEnv("GIT_CONFIG_GLOBAL=/dev/null")

// newExecutor returns an executor on the real /usr/bin/sandbox-exec,
// skipping with the reason where it is missing or cannot sandbox here
// (inside another sandbox), or failing when CORDON_REQUIRE names seatbelt.
func newExecutor(t *testing.T, cfg seatbelt.Config) *seatbelt.Executor {
	t.Helper()
	x, err := seatbelt.New(cfg)
	testenv.SkipUnavailable(t, testenv.Seatbelt, err)
	t.Cleanup(func() { x.Close() })
	return x
}

// TestConformance runs the whole shared suite against the real
// sandbox-exec: every isolation case must be denied, or match a gap
// Describe declares.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) executor.Executor { return newExecutor(t, seatbelt.Config{}) }, gitEnv)
}

type ws struct {
	root, home, outside, token string
}

func newWS(t *testing.T) *ws {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w := &ws{root: filepath.Join(base, "root"), home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside"), token: "tok-" + filepath.Base(base)}
	for _, d := range []string{w.root, w.home, w.outside} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.outside, "canary.txt"), []byte(w.token+"\n"), 0o644))
	return w
}

func (w *ws) run(t *testing.T, x *seatbelt.Executor, cmd string, p *policy.Policy, grants ...policy.Grant) *executor.Result {
	t.Helper()
	if p == nil {
		p = policy.Coding.Policy()
	}
	res, err := x.Run(context.Background(), &executor.Request{
		Command: cmd, Dir: w.root, Root: w.root, Home: w.home, Policy: p, Grants: grants,
		Env:     []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + w.home, "LANG=C", "TMPDIR=" + x.TempDir()},
		Timeout: 30 * time.Second,
	})
	require.NoError(t, err)
	return res
}

// TestReadOutside: the outside canary is unreadable; twin: readable
// under an approved grant.
func TestReadOutside(t *testing.T) {
	x := newExecutor(t, seatbelt.Config{})
	w := newWS(t)
	cmd := "cat " + filepath.Join(w.outside, "canary.txt")
	res := w.run(t, x, cmd, nil)
	assert.NotEqual(t, 0, res.ExitCode)
	assert.NotContains(t, string(res.Stdout), w.token)
	twin := w.run(t, x, cmd, nil, policy.Grant{Path: w.outside, Op: policy.Read})
	assert.Equal(t, 0, twin.ExitCode, "stderr: %s", twin.Stderr)
	assert.Contains(t, string(twin.Stdout), w.token)
}

// TestPatternsCoverNewPaths: a denied_paths match and a protected
// .git/hooks created while the command runs, deep in the tree, are
// refused — checked on the host; twin: the same without the rules. The
// repository's other files stay writable.
func TestPatternsCoverNewPaths(t *testing.T) {
	x := newExecutor(t, seatbelt.Config{})
	cmd := "mkdir -p a/b/c/.git/objects a/b/c/.git/hooks; echo x > a/b/c/.git/objects/o; echo x > a/b/c/.git/hooks/pre-commit; echo x > a/b/.env.new; true"
	for _, rules := range []bool{true, false} {
		w := newWS(t)
		p := policy.Coding.Policy()
		if rules {
			p.DeniedPaths = append(p.DeniedPaths, ".env*")
		} else {
			p.Protect.Disabled = true
		}
		res := w.run(t, x, cmd, p)
		require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
		assert.FileExists(t, filepath.Join(w.root, "a/b/c/.git/objects/o"))
		if rules {
			assert.NoFileExists(t, filepath.Join(w.root, "a/b/c/.git/hooks/pre-commit"))
			assert.NoFileExists(t, filepath.Join(w.root, "a/b/.env.new"))
		} else {
			assert.FileExists(t, filepath.Join(w.root, "a/b/c/.git/hooks/pre-commit"))
			assert.FileExists(t, filepath.Join(w.root, "a/b/.env.new"))
		}
	}
}

// TestArgsProgram: the command line starts with the fixed sandbox-exec.
func TestArgsProgram(t *testing.T) {
	x := newExecutor(t, seatbelt.Config{})
	w := newWS(t)
	args, err := x.Args(context.Background(), &executor.Request{Command: "true", Dir: w.root, Root: w.root, Home: w.home, Policy: policy.Coding.Policy()})
	require.NoError(t, err)
	assert.Equal(t, seatbelt.Program, args[0])
	assert.Equal(t, []string{"/bin/sh", "-c", "true"}, args[len(args)-3:])
}
