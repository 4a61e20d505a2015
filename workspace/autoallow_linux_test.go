//go:build linux

package workspace_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// autoFixture is a coding workspace (shell_default ask, no command rules
// unless a test adds them) with a secret in the home and a directory
// outside the root.
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

	// A path claim still asks.
	_, err = s.Run(t.Context(), "cat "+secret, "", 0)
	assert.Error(t, err)
	assert.Equal(t, int32(1), f.asked.Load(), "a read outside the root asks")
}

// TestSandboxAutoAllowRules: with command rules that ask or deny, every
// command that may reach them asks: a definite match, a possible match
// (options before the subcommand), a dynamic command, code the gate
// cannot read. Found by an attack review: `x=rm; $x -r src` deleted src
// without asking under a `rm` deny rule. Effects checked from outside.
func TestSandboxAutoAllowRules(t *testing.T) {
	for _, command := range []string{
		"git push", "git -C . push", "git --no-pager push", "git -c a.b=c push", "g=git; $g push", "$(echo git) push",
		"echo git push | sh", `python3 -c 'import os; os.system("git push")'`,
		"x=rm; $x -r src", "$(echo rm) -r src", "echo 'rm -r src' | sh", `python3 -c 'import shutil; shutil.rmtree("src")'`,
		"sh ./s.sh",
	} {
		t.Run(command, func(t *testing.T) {
			f := newAutoFixture(t)
			require.NoError(t, os.WriteFile(filepath.Join(f.root, "src", "keep.go"), []byte("package x\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(f.root, "s.sh"), []byte("rm -r src\n"), 0o755))
			s := f.open(t, newBwrapX(t, bwrap.Config{}), workspace.WithCommandRules(
				policy.CommandRule{Pattern: "git push", Action: policy.Ask}, policy.CommandRule{Pattern: "rm", Action: policy.Deny}))
			require.True(t, s.AutoAllow().On)
			v, err := s.DecideCommand(command, "")
			require.NoError(t, err)
			assert.NotEqual(t, workspace.RuleSandboxAutoAllow, v.Rule, "explain does not promise auto-allow")
			_, err = s.Run(t.Context(), command, "", 0)
			assert.Error(t, err, "refused: the approver denies")
			assert.DirExists(t, filepath.Join(f.root, "src"))
			assert.FileExists(t, filepath.Join(f.root, "src", "keep.go"))
		})
	}
	t.Run("allowed twin", func(t *testing.T) {
		f := newAutoFixture(t)
		require.NoError(t, os.WriteFile(filepath.Join(f.root, "s.sh"), []byte("touch ran.txt\n"), 0o755))
		s := f.open(t, newBwrapX(t, bwrap.Config{}))
		for _, command := range []string{"x=touch; $x a.txt", "sh ./s.sh"} {
			_, err := s.Run(t.Context(), command, "", 0)
			require.NoError(t, err, "without restrictive command rules, %s is auto-allowed", command)
		}
		assert.FileExists(t, filepath.Join(f.root, "a.txt"))
		assert.FileExists(t, filepath.Join(f.root, "ran.txt"))
		assert.Zero(t, f.asked.Load())
	})
}

// TestSandboxAutoAllowBadCwd: an auto-allowed command whose cwd is not a
// directory fails without keeping the workspace's exclusive place (found
// by an attack review: every later command hung).
func TestSandboxAutoAllowBadCwd(t *testing.T) {
	f := newAutoFixture(t)
	s := f.open(t, newBwrapX(t, bwrap.Config{}))
	for _, cwd := range []string{"notes.md", "missing-dir"} {
		_, err := s.Run(t.Context(), "true", cwd, 0)
		require.Error(t, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := s.Run(ctx, "touch after.txt", "", 0)
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	assert.Zero(t, f.asked.Load(), "still auto-allowed")
	assert.FileExists(t, filepath.Join(f.root, "after.txt"))
}

// TestSandboxAutoAllowNeedsApproval: under bwrap's exclusive auto-allow
// a spawn always needs approval, and the tool spec says so.
func TestSandboxAutoAllowNeedsApproval(t *testing.T) {
	f := newAutoFixture(t)
	s := f.open(t, newBwrapX(t, bwrap.Config{}))
	for _, tool := range s.Tools() {
		switch tool.Name {
		case workspace.ToolShell:
			assert.False(t, tool.NeedsApproval(json.RawMessage(`{"command":"touch x"}`)), "a run is auto-allowed")
		case workspace.ToolSpawnProcess:
			assert.True(t, tool.NeedsApproval(json.RawMessage(`{"command":"sleep 1"}`)), "a spawn asks")
		}
	}
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
		assert.Equal(t, 1, strings.Count(a.Why, "fs-new-files:"), "each traded control is named once: %s", a.Why)
		// KernelProtect takes creation away from the directories above
		// protected paths (the root): a file is made in src/.
		res, err := s.Run(t.Context(), "touch src/made.txt", "", 0)
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode, res.Stderr)
		assert.Zero(t, f.asked.Load())
		assert.FileExists(t, filepath.Join(f.root, "src", "made.txt"))
	})
}

// TestSandboxAutoAllowPolicyGaps: the session's own policy is assessed,
// not only Describe's sample: a denied name that also matches inside the
// System trees stays readable there under bwrap (an fs-read gap of this
// policy), so commands ask again. Found by an attack review: awk printed
// a denied *.pem under /usr without asking.
func TestSandboxAutoAllowPolicyGaps(t *testing.T) {
	f := newAutoFixture(t)
	s := f.open(t, newBwrapX(t, bwrap.Config{}), workspace.WithDeniedPaths("passwd"))
	a := s.AutoAllow()
	assert.False(t, a.On, "a policy with an fs-read gap of its own earns no auto-allow")
	assert.Contains(t, a.Why, "fs-read")
	res, err := s.Run(t.Context(), `awk 'BEGIN { while ((getline l < "/etc/passwd") > 0) print l }'`, "", 0)
	assert.Error(t, err, "asked and refused")
	assert.Nil(t, res)
	assert.Equal(t, int32(1), f.asked.Load())

	// The twin: the same workspace without that rule is auto-allowed.
	g := newAutoFixture(t)
	s2 := g.open(t, newBwrapX(t, bwrap.Config{}))
	require.True(t, s2.AutoAllow().On, s2.AutoAllow().Why)
}

// TestSandboxAutoAllowDocker: the docker executor assesses the session's
// policy too (docker.Executor.Assess): with a local engine it earns the
// exclusive auto-allow, and an auto-allowed command stays confined (the
// secret unread, nothing written outside, checked from outside); a policy
// whose denied name also matches inside the System trees, which stay
// readable there, earns none (the policy-gap twin).
func TestSandboxAutoAllowDocker(t *testing.T) {
	f := newAutoFixture(t)
	s := f.open(t, newDockerX(t))
	a := s.AutoAllow()
	require.True(t, a.On, a.Why)
	assert.True(t, a.Exclusive, a.Why)
	secret := filepath.Join(f.home, ".ssh", "id_rsa")
	out := filepath.Join(f.outside, "leak")
	res, err := s.Run(t.Context(), `awk 'BEGIN { while ((getline l < "`+secret+`") > 0) print l; print "y" > "made.txt"; close("made.txt"); print "x" > "`+out+`" }'`, "", 0)
	require.NoError(t, err)
	assert.NotContains(t, res.Stdout+res.Stderr, autoSecret)
	assert.NoFileExists(t, out)
	assert.FileExists(t, filepath.Join(f.root, "made.txt"), "the allowed write in the root happened")
	assert.Zero(t, f.asked.Load(), "a shell_default command was auto-allowed")

	g := newAutoFixture(t)
	s2 := g.open(t, newDockerX(t), workspace.WithDeniedPaths("passwd"))
	assert.False(t, s2.AutoAllow().On, "a policy with an fs-read gap of its own earns no auto-allow")
	assert.Contains(t, s2.AutoAllow().Why, "fs-read")
}

// TestSandboxAutoAllowProcRule: a denied path under /proc is not
// enforced by any backend (the sandbox's own /proc is mounted whole), so
// the executors' Assess reports it and a policy naming one earns no
// auto-allow: the command that reads it asks. Found by an attack review
// (helper-44): awk printed a denied /proc/self/environ unasked under
// docker and bwrap. The twins without the rule are on (TestSandboxAutoAllow,
// TestSandboxAutoAllowDocker).
func TestSandboxAutoAllowProcRule(t *testing.T) {
	for name, x := range map[string]func(t *testing.T) executor.Executor{
		"bwrap":  func(t *testing.T) executor.Executor { return newBwrapX(t, bwrap.Config{}) },
		"docker": newDockerX,
	} {
		for _, pat := range []string{"/proc/self/environ", "/proc/*/environ", "environ"} {
			t.Run(name+"/"+pat, func(t *testing.T) {
				f := newAutoFixture(t)
				s := f.open(t, x(t), workspace.WithDeniedPaths(pat))
				a := s.AutoAllow()
				assert.False(t, a.On, "a denied /proc path earns no auto-allow")
				assert.Contains(t, a.Why, "fs-read")
				assert.Contains(t, a.Why, pat)
				_, err := s.Run(t.Context(), `awk 'BEGIN { while ((getline l < "/proc/self/environ") > 0) print l }'`, "", 0)
				assert.Error(t, err, "asked and refused")
				assert.Equal(t, int32(1), f.asked.Load())
			})
		}
	}
}
