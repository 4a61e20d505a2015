//go:build linux

package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

const autoSecret = "AUTO-ALLOW-SECRET-7d1f"

// autoFixture is a coding workspace (shell_default ask, `git push` ask)
// with a secret in the home and a directory outside the root.
type autoFixture struct {
	root, home, outside string
	asked               atomic.Int32
	allowSpawn          bool
}

func newAutoFixture(t *testing.T) *autoFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := &autoFixture{root: filepath.Join(base, "root"), home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{filepath.Join(f.root, "src"), filepath.Join(f.home, ".ssh"), f.outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(f.home, ".ssh", "id_rsa"), []byte(autoSecret+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "notes.md"), []byte("inside notes\n"), 0o644))
	return f
}

func (f *autoFixture) open(t *testing.T, x executor.Executor, opts ...workspace.Option) *workspace.Session {
	t.Helper()
	opts = append([]workspace.Option{
		workspace.WithHome(f.home),
		workspace.WithExecutor(x),
		workspace.WithCommandRules(policy.CommandRule{Pattern: "git push", Action: policy.Ask}),
		workspace.WithApprover(func(_ context.Context, r *workspace.ApprovalRequest) (bool, error) {
			f.asked.Add(1)
			return f.allowSpawn && r.Op == "spawn", nil
		}),
	}, opts...)
	ws, err := workspace.Local(f.root, opts...)
	require.NoError(t, err)
	s, err := ws.Open(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func newBwrapX(t *testing.T, cfg bwrap.Config) executor.Executor {
	t.Helper()
	x, err := bwrap.New(cfg)
	if err != nil {
		testenv.SkipUnavailable(t, testenv.Bwrap, err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func newLandlockX(t *testing.T, cfg landlock.Config) executor.Executor {
	t.Helper()
	x, err := landlock.New(cfg)
	if err != nil {
		testenv.SkipUnavailable(t, testenv.Landlock, err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// TestSandboxAutoAllow: under a strict bwrap sandbox a command whose only
// ask is shell_default runs without asking, and stays confined: the
// secret is not read, nothing is written outside (checked from outside);
// asks from path claims and command rules still ask.
func TestSandboxAutoAllow(t *testing.T) {
	f := newAutoFixture(t)
	s := f.open(t, newBwrapX(t, bwrap.Config{}))
	a := s.AutoAllow()
	require.True(t, a.On, a.Why)
	assert.True(t, a.Exclusive, "bwrap declares the start-time race, a concurrent-only gap")

	res, err := s.Run(t.Context(), "touch made.txt", "", 0)
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode, res.Stderr)
	assert.FileExists(t, filepath.Join(f.root, "made.txt"))
	assert.Zero(t, f.asked.Load(), "a shell_default command was auto-allowed")

	v, err := s.DecideCommand("touch made.txt", "")
	require.NoError(t, err)
	assert.Equal(t, policy.Allow, v.Decision)
	assert.Equal(t, workspace.RuleSandboxAutoAllow, v.Rule)
	assert.Contains(t, v.Reason, "bwrap", "explain says why")

	// Auto-allowed, and confined by the sandbox: awk's program is opaque
	// to the gate, the kernel refuses the read and the write.
	secret := filepath.Join(f.home, ".ssh", "id_rsa")
	out := filepath.Join(f.outside, "leak")
	res, err = s.Run(t.Context(), `awk 'BEGIN { while ((getline l < "`+secret+`") > 0) print l; print "x" > "`+out+`" }'`, "", 0)
	require.NoError(t, err)
	assert.NotContains(t, res.Stdout+res.Stderr, autoSecret)
	assert.NoFileExists(t, out)
	res, err = s.Run(t.Context(), `awk 'BEGIN { while ((getline l < "notes.md") > 0) print l; print "x" > "inside.txt" }'`, "", 0)
	require.NoError(t, err)
	assert.Contains(t, res.Stdout, "inside notes", "allowed twin: the same program reads inside the root")
	assert.FileExists(t, filepath.Join(f.root, "inside.txt"), "allowed twin: and writes there")
	assert.Zero(t, f.asked.Load())

	// A path claim and a command rule still ask.
	_, err = s.Run(t.Context(), "cat "+secret, "", 0)
	assert.Error(t, err)
	assert.Equal(t, int32(1), f.asked.Load(), "a read outside the root asks")
	_, err = s.Run(t.Context(), "git push", "", 0)
	assert.Error(t, err)
	assert.Equal(t, int32(2), f.asked.Load(), "a command rule's ask asks")
}

// TestSandboxAutoAllowExclusive: while a background process of the
// workspace runs, a bwrap command asks (a concurrent process could race
// the sandbox's start); once it ends, it is auto-allowed again. A spawn
// is never auto-allowed under bwrap.
func TestSandboxAutoAllowExclusive(t *testing.T) {
	f := newAutoFixture(t)
	f.allowSpawn = true
	s := f.open(t, newBwrapX(t, bwrap.Config{}))
	p, err := s.Spawn(t.Context(), "sleep 60", "")
	require.NoError(t, err)
	require.Equal(t, int32(1), f.asked.Load(), "the spawn asked")

	_, err = s.Run(t.Context(), "touch during.txt", "", 0)
	assert.Error(t, err, "refused: the approver denies runs")
	assert.Equal(t, int32(2), f.asked.Load(), "with a background process running, the command asked")
	assert.NoFileExists(t, filepath.Join(f.root, "during.txt"))

	_, err = s.KillProcess(p.ID)
	require.NoError(t, err)
	res, err := s.Run(t.Context(), "touch after.txt", "", 0)
	require.NoError(t, err, "auto-allowed again once nothing else runs")
	assert.Equal(t, 0, res.ExitCode, res.Stderr)
	assert.Equal(t, int32(2), f.asked.Load())
	assert.FileExists(t, filepath.Join(f.root, "after.txt"))
}

// TestSandboxAutoAllowOff: no auto-allow without isolation, in best
// effort, when turned off, or where the executor declares a gap in a
// critical control (landlock's guard-repaired protect); landlock with
// KernelProtect earns it.
func TestSandboxAutoAllowOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    func(t *testing.T) executor.Executor
		opts []workspace.Option
		why  string
	}{
		{"local", func(*testing.T) executor.Executor { return executor.NewLocal() }, nil, "no isolation"},
		{"best-effort", func(t *testing.T) executor.Executor { return newBwrapX(t, bwrap.Config{BestEffort: true}) }, nil, "best-effort"},
		{"off", func(t *testing.T) executor.Executor { return newBwrapX(t, bwrap.Config{}) }, []workspace.Option{workspace.WithSandboxAutoAllow(false)}, "off"},
		{"landlock-protect", func(t *testing.T) executor.Executor { return newLandlockX(t, landlock.Config{}) }, nil, "protect"},
		{"network-full", func(t *testing.T) executor.Executor { return newBwrapX(t, bwrap.Config{}) }, []workspace.Option{workspace.WithNetwork(policy.NetworkFull)}, "network is full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newAutoFixture(t)
			s := f.open(t, tc.x(t), tc.opts...)
			a := s.AutoAllow()
			assert.False(t, a.On)
			assert.Contains(t, a.Why, tc.why)
			_, err := s.Run(t.Context(), "touch made.txt", "", 0)
			assert.Error(t, err)
			assert.Equal(t, int32(1), f.asked.Load(), "the command asked")
			assert.NoFileExists(t, filepath.Join(f.root, "made.txt"))
		})
	}
	t.Run("landlock-kernel-protect", func(t *testing.T) {
		f := newAutoFixture(t)
		s := f.open(t, newLandlockX(t, landlock.Config{KernelProtect: true}))
		a := s.AutoAllow()
		require.True(t, a.On, a.Why)
		assert.False(t, a.Exclusive)
		assert.True(t, strings.Contains(a.Why, "traded"), a.Why)
		// KernelProtect takes creation away from the directories above
		// protected paths (the root): a file is made in src/.
		res, err := s.Run(t.Context(), "touch src/made.txt", "", 0)
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode, res.Stderr)
		assert.Zero(t, f.asked.Load())
		assert.FileExists(t, filepath.Join(f.root, "src", "made.txt"))
	})
}
