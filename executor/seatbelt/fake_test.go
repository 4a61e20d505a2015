//go:build unix

package seatbelt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// These tests run the executor's plumbing — command line, environment,
// directory, the setup-error check, the protected-path guard, strict
// mode, caching, background processes — through the fake sandbox-exec of
// main_test.go, on every Unix system. The fake enforces nothing; what the
// profile enforces is checked by seatbelt_darwin_test.go against the real
// sandbox-exec, and as data by policyderive's SBPL model.

// fake is a fake sandbox-exec in a directory of its own.
type fake struct {
	dir, program string
}

func newFake(t *testing.T, mode string) *fake {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := &fake{dir: dir, program: filepath.Join(dir, fakeName)}
	require.NoError(t, os.Symlink(self, f.program))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "calls"), 0o755))
	if mode != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "mode"), []byte(mode), 0o644))
	}
	return f
}

func (f *fake) executor(t *testing.T, cfg Config) *Executor {
	t.Helper()
	x, err := newExecutor(cfg, f.program)
	require.NoError(t, err)
	t.Cleanup(func() { x.Close() })
	return x
}

// call is one recorded run of the fake.
type call struct {
	argv, env []string
	dir       string
}

// calls returns the recorded calls whose last argument is command.
func (f *fake) calls(t *testing.T, command string) []call {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(f.dir, "calls", "*.argv"))
	require.NoError(t, err)
	var out []call
	for _, n := range names {
		a, err := os.ReadFile(n)
		require.NoError(t, err)
		argv := strings.Split(string(a), "\x00")
		if argv[len(argv)-1] != command {
			continue
		}
		stem := strings.TrimSuffix(n, ".argv")
		e, err := os.ReadFile(stem + ".env")
		require.NoError(t, err)
		d, err := os.ReadFile(stem + ".dir")
		require.NoError(t, err)
		c := call{argv: argv, dir: string(d)}
		if len(e) > 0 {
			c.env = strings.Split(string(e), "\x00")
		}
		out = append(out, c)
	}
	return out
}

// ws is a workspace fixture.
type ws struct {
	root, home, outside string
}

func newWS(t *testing.T) *ws {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	w := &ws{root: filepath.Join(base, "root"), home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{w.root, w.home, w.outside} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	return w
}

func (w *ws) req(cmd string, p *policy.Policy) *executor.Request {
	if p == nil {
		p = policy.Coding.Policy()
	}
	return &executor.Request{
		Command: cmd, Dir: w.root, Root: w.root, Home: w.home, Policy: p,
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + w.home, "LANG=C"}, Timeout: 30 * time.Second,
	}
}

// TestFakeCommandLine: Run executes exactly the program, the profile and
// parameters policyderive renders for the request (with the executor's
// private temporary directory), then /bin/sh -c COMMAND — the command one
// argument, byte for byte — with exactly Request.Env, in Request.Dir.
func TestFakeCommandLine(t *testing.T) {
	f := newFake(t, "")
	x := f.executor(t, Config{})
	w := newWS(t)
	sub := filepath.Join(w.root, "sub dir")
	require.NoError(t, os.Mkdir(sub, 0o755))
	cmd := "printf '%s|' \"a b\" 'c\"d' '$(not run)' \"\xff\"; echo; pwd -P\n# a comment; rm -rf /"
	req := w.req(cmd, nil)
	req.Dir = sub
	req.Env = append(req.Env, "WEIRD=a=b c\"d\xff", "EMPTY=")

	res, err := x.Run(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	assert.Equal(t, "a b|c\"d|$(not run)|\xff|\n"+sub+"\n", string(res.Stdout))

	calls := f.calls(t, cmd)
	require.Len(t, calls, 1)
	c := calls[0]
	pr, err := policyderive.Derive(req.Policy, req.Root, req.Home, req.Dir, nil)
	require.NoError(t, err)
	text, params, _ := policyderive.SBPL(pr.WithTmpDir(x.TempDir()))
	want := []string{f.program, "-p", text}
	for _, p := range params {
		want = append(want, "-D", p)
	}
	want = append(want, "/bin/sh", "-c", cmd)
	assert.Equal(t, want, c.argv)
	assert.Contains(t, params, "ROOT="+w.root)
	assert.Contains(t, params, "TMP="+x.TempDir())
	assert.Equal(t, req.Env, c.env, "the environment is exactly Request.Env")
	assert.Equal(t, sub, c.dir)

	args, err := x.Args(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, want, args, "Args shows what Run executes")
}

// TestFakeEmptyEnv: a nil environment reaches the command empty, never
// as the host's.
func TestFakeEmptyEnv(t *testing.T) {
	f := newFake(t, "")
	x := f.executor(t, Config{})
	w := newWS(t)
	t.Setenv("CORDON_SEATBELT_PARENT_CANARY", "leaked")
	req := w.req("echo empty-env", nil)
	req.Env = nil
	res, err := x.Run(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	calls := f.calls(t, "echo empty-env")
	require.Len(t, calls, 1)
	assert.Empty(t, calls[0].env)
}

// TestFakeSetupError: when sandbox-exec cannot apply the profile the
// command never ran, and Run says so with *SetupError; a command that
// prints the same kind of message and exits the same way is a Result.
func TestFakeSetupError(t *testing.T) {
	f := newFake(t, "")
	x := f.executor(t, Config{})
	w := newWS(t)

	req := w.req("echo should-not-run", nil)
	req.Env = append(req.Env, fakeFailEnv+"=1")
	res, err := x.Run(context.Background(), req)
	assert.Nil(t, res)
	var se *SetupError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, ErrSetup)
	assert.Equal(t, 71, se.ExitCode)
	assert.NotEmpty(t, se.Message)

	// Twin: the same stderr and status from the command itself.
	twin := w.req("echo 'sandbox-exec: sandbox_apply: Operation not permitted' >&2; exit 71", nil)
	res, err = x.Run(context.Background(), twin)
	require.NoError(t, err)
	assert.Equal(t, 71, res.ExitCode)
	assert.True(t, bytes.HasPrefix(res.Stderr, setupPrefix))
	// And the check ran: a trial /bin/sh -c : under the same profile.
	assert.NotEmpty(t, f.calls(t, ":"))
}

// TestFakeNewUnavailable: New checks the program and runs a trial.
func TestFakeNewUnavailable(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), fakeName)
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	dirProg := filepath.Join(t.TempDir(), fakeName)
	require.NoError(t, os.Mkdir(dirProg, 0o755))
	tests := []struct {
		name    string
		program string
		cause   error
	}{
		{name: "missing", program: filepath.Join(t.TempDir(), fakeName), cause: ErrNotInstalled},
		{name: "not executable", program: notExec, cause: ErrNotInstalled},
		{name: "a directory", program: dirProg, cause: ErrNotInstalled},
		{name: "cannot apply any profile", program: newFake(t, "fail-apply").program, cause: ErrCannotApply},
		{name: "shell cannot start under cordon's profile", program: newFake(t, "fail-deny-default").program, cause: ErrTrial},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := newExecutor(Config{}, tt.program)
			assert.Nil(t, x)
			var ue *executor.UnavailableError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, Backend, ue.Backend)
			assert.ErrorIs(t, err, errors.ErrUnsupported)
			assert.ErrorIs(t, err, tt.cause)
			for _, other := range []error{ErrNotInstalled, ErrCannotApply, ErrTrial} {
				if other != tt.cause {
					assert.NotErrorIs(t, err, other)
				}
			}
		})
	}
	// Control: a working fake.
	x, err := newExecutor(Config{}, newFake(t, "").program)
	require.NoError(t, err)
	require.NoError(t, x.Close())
	_, err = os.Stat(x.TempDir())
	assert.ErrorIs(t, err, os.ErrNotExist, "Close removes the temporary directory")
}

// TestFakeGuard: protected paths a command creates or changes are undone
// after it and reported — checked on the host. The fake does not
// sandbox, so the writes themselves succeed, as they would on macOS
// through a renamed .git. Twin: with protect none they stay.
func TestFakeGuard(t *testing.T) {
	f := newFake(t, "")
	x := f.executor(t, Config{})
	for _, protect := range []bool{true, false} {
		w := newWS(t)
		repo := filepath.Join(w.root, "a", "b")
		require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git", "hooks"), 0o755))
		config := filepath.Join(repo, ".git", "config")
		require.NoError(t, os.WriteFile(config, []byte("[core]\n"), 0o644))
		p := policy.Coding.Policy()
		p.Protect.Disabled = !protect
		res, err := x.Run(context.Background(), w.req("cd a/b && mv .git .git-away && echo evil > .git-away/hooks/pre-commit && echo '[x]' >> .git-away/config && mv .git-away .git", p))
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
		hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
		got, err := os.ReadFile(config)
		require.NoError(t, err)
		if protect {
			assert.NoFileExists(t, hook)
			assert.Equal(t, "[core]\n", string(got))
			assert.NotEmpty(t, res.Violations)
		} else {
			assert.FileExists(t, hook)
			assert.Equal(t, "[core]\n[x]\n", string(got))
			assert.Empty(t, res.Violations)
		}
	}
}

// TestFakeStartGuard: a background process's changes are undone when it
// exits, and its output streams merged.
func TestFakeStartGuard(t *testing.T) {
	f := newFake(t, "")
	x := f.executor(t, Config{})
	w := newWS(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git", "hooks"), 0o755))
	p, err := x.Start(context.Background(), w.req("echo out; echo err >&2; echo evil > .git/hooks/post-checkout", nil))
	require.NoError(t, err)
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		require.NoError(t, p.Kill())
		t.Fatal("background process did not exit")
	}
	res := p.Wait()
	assert.Equal(t, 0, res.ExitCode)
	assert.Contains(t, string(res.Stdout), "out")
	assert.Contains(t, string(res.Stdout), "err")
	assert.NoFileExists(t, filepath.Join(w.root, ".git", "hooks", "post-checkout"))
	assert.NotEmpty(t, res.Violations)
}

// TestFakeStrict: a plan with a gap strict mode refuses is refused
// unless BestEffort, and runs then. (Today's SBPL renderer reports no
// such gap; the plan is given one.)
func TestFakeStrict(t *testing.T) {
	f := newFake(t, "")
	for _, best := range []bool{false, true} {
		x := f.executor(t, Config{BestEffort: best})
		w := newWS(t)
		req := w.req("echo ran", nil)
		pl, err := x.planFor(context.Background(), req)
		require.NoError(t, err)
		require.Empty(t, pl.blocking, "the renderer reports no blocking gap for coding mode")
		gap := executor.Gap{Control: executor.ControlFSRead, Reason: "a test gap"}
		looser := *pl
		looser.blocking = []executor.Gap{gap}
		x.plans.Add(pl.key, &looser)

		res, err := x.Run(context.Background(), req)
		if best {
			require.NoError(t, err)
			assert.Equal(t, "ran\n", string(res.Stdout))
			continue
		}
		var ue *executor.UnenforceableError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, []executor.Gap{gap}, ue.Gaps)
		assert.Empty(t, f.calls(t, "echo ran"), "nothing ran")
	}
}

// TestFakePlanCache: a plan is rendered once per profile key.
func TestFakePlanCache(t *testing.T) {
	f := newFake(t, "")
	x := f.executor(t, Config{})
	w := newWS(t)
	for range 3 {
		res, err := x.Run(context.Background(), w.req("true", nil))
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode)
	}
	assert.Equal(t, 1, x.plans.Len())
	full := policy.Coding.Policy()
	full.Network = policy.NetworkFull
	_, err := x.Run(context.Background(), w.req("true", full))
	require.NoError(t, err)
	assert.Equal(t, 2, x.plans.Len())
}

// TestFakeRequestErrors: requests an executor cannot run are typed
// errors, and nothing runs.
func TestFakeRequestErrors(t *testing.T) {
	f := newFake(t, "")
	x := f.executor(t, Config{})
	w := newWS(t)
	mod := func(fn func(r *executor.Request)) *executor.Request { r := w.req("echo bad", nil); fn(r); return r }
	for name, req := range map[string]*executor.Request{
		"nil":            nil,
		"no policy":      mod(func(r *executor.Request) { r.Policy = nil }),
		"no root":        mod(func(r *executor.Request) { r.Root = "" }),
		"negative":       mod(func(r *executor.Request) { r.Timeout = -time.Second }),
		"negative limit": mod(func(r *executor.Request) { r.OutputLimit = -1 }),
		"NUL in command": mod(func(r *executor.Request) { r.Command = "echo bad\x00" }),
		"relative cwd":   mod(func(r *executor.Request) { r.Dir = "sub" }),
		"NUL in a grant": mod(func(r *executor.Request) { r.Grants = []policy.Grant{{Path: "/x\x00", Op: policy.Read}} }),
		"empty grant":    mod(func(r *executor.Request) { r.Grants = []policy.Grant{{Path: "", Op: policy.Read}} }),
	} {
		_, err := x.Run(context.Background(), req)
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, executor.ErrInvalidRequest) || errors.Is(err, policyderive.ErrInvalid), "%s: %v", name, err)
	}
	assert.Empty(t, f.calls(t, "echo bad"))
	assert.Empty(t, f.calls(t, "echo bad\x00"))

	require.NoError(t, x.Close())
	_, err := x.Run(context.Background(), w.req("echo closed", nil))
	require.Error(t, err)
}

// TestFakeDescribe: every control is declared enforced or a gap, and the
// gaps are the ones inherent to Seatbelt.
func TestFakeDescribe(t *testing.T) {
	x := newFake(t, "").executor(t, Config{})
	caps := x.Describe(context.Background())
	assert.Equal(t, Backend, caps.Backend)
	assert.True(t, caps.Sandboxed)
	assert.False(t, caps.BestEffort)
	var gaps []executor.Control
	for _, g := range caps.Gaps {
		gaps = append(gaps, g.Control)
		assert.NotEmpty(t, g.Reason)
	}
	assert.ElementsMatch(t, []executor.Control{executor.ControlFSMetadata, executor.ControlProtect, executor.ControlProcessTree, executor.ControlProcInfo, executor.ControlNetAllowList}, gaps)
	for _, c := range allControls {
		assert.NotEqual(t, slices.Contains(caps.Enforced, c), slices.Contains(gaps, c), "control %s is either enforced or a gap", c)
	}
	assert.NotContains(t, caps.Enforced, executor.ControlNetAbstract)
	assert.Equal(t, x.program, caps.Info["sandbox_exec"])
	assert.Equal(t, x.TempDir(), caps.Info["tmpdir"])
	assert.Empty(t, caps.Info["error"])
	assert.Empty(t, caps.Info["unenforceable"], "strict mode runs: every gap is inherent")

	// Describe returns copies.
	caps.Gaps[0].Reason = "changed"
	caps.Info["x"] = "y"
	again := x.Describe(context.Background())
	assert.NotEqual(t, "changed", again.Gaps[0].Reason)
	assert.NotContains(t, again.Info, "x")
}

// TestFakeConformanceFunctional runs the conformance suite's functional
// and process cases through the fake: the plumbing (exit codes, streams,
// environment, descriptors, terminal, timeouts killing the tree, output
// limits, concurrency, background processes) must hold with
// sandbox-exec between the executor and the shell. Isolation is not
// decided here (FunctionalOnly).
func TestFakeConformanceFunctional(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance cases take a while; -short")
	}
	f := newFake(t, "")
	conformance.Run(t, func(t *testing.T) executor.Executor { return f.executor(t, Config{}) },
		conformance.FunctionalOnly(), conformance.Select("functional", "process"))
}

// TestFakeExplain: Explain's command line is the one Run executes (the
// fake sandbox-exec records it), and its fidelity is the plan's; Assess
// gives that plan's looser elements as gaps, the guard-repaired
// protected paths among them.
func TestFakeExplain(t *testing.T) {
	f := newFake(t, "")
	x := f.executor(t, Config{})
	w := newWS(t)
	req := w.req("echo explained", nil)
	argv, fid, err := x.Explain(context.Background(), req)
	require.NoError(t, err)
	res, err := x.Run(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	calls := f.calls(t, "echo explained")
	require.Len(t, calls, 1)
	assert.Equal(t, calls[0].argv, argv, "Run executed the explained command line")
	require.NotNil(t, fid)
	assert.NotEmpty(t, fid.Looser())
	gaps, err := x.Assess(context.Background(), req)
	require.NoError(t, err)
	assert.Len(t, gaps, len(fid.Looser()))
	assert.True(t, slices.ContainsFunc(gaps, func(g executor.Gap) bool { return g.Control == executor.ControlProtect }), "protected paths are repaired, not denied: %v", gaps)
}
