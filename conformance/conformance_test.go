//go:build unix

package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor"
)

func TestMain(m *testing.M) {
	probe.MaybeRun()
	os.Exit(m.Run())
}

func local() (executor.Executor, error) { return executor.NewLocal(), nil }

// logReport logs one line per case, so go test -v shows what the suite
// concluded about each test executor.
func logReport(t *testing.T, rep *conformance.Report) {
	t.Helper()
	for _, c := range rep.Cases {
		t.Logf("%-26s expected %-8s outcome %-12s passed=%-5v failed=%-5v %s", c.ID, c.Expected, c.Outcome, c.Passed, c.Failed, c.Reason)
	}
}

// TestRunLocal runs the whole suite against executor.Local the way a
// backend's test does: every functional case must pass; the isolation
// cases run, log their evidence and are skipped as informational.
func TestRunLocal(t *testing.T) {
	conformance.Run(t, func(t *testing.T) executor.Executor { return executor.NewLocal() }, conformance.FunctionalOnly())
}

// TestCheckCatchesLocal: without FunctionalOnly, executor.Local (which
// enforces nothing) must be caught on every isolation case that expects a
// denial, while every functional case and every case that expects the
// action to be allowed passes.
func TestCheckCatchesLocal(t *testing.T) {
	rep, err := conformance.Check(t.Context(), local)
	require.NoError(t, err)
	logReport(t, rep)
	require.Len(t, rep.Cases, len(conformance.Cases()))
	assert.Equal(t, "local", rep.Backend)
	assert.False(t, rep.OK(), "a leaky executor must fail the suite")
	for _, c := range rep.Cases {
		switch {
		case !c.Isolation:
			assert.Equal(t, conformance.OK, c.Outcome, "%s: %s %v", c.ID, c.Reason, c.Evidence)
			assert.True(t, c.Passed && !c.Failed, c.ID)
		case c.Expected == conformance.Denied:
			assert.Equal(t, conformance.Allowed, c.Outcome, "%s leaks on Local: %s %v", c.ID, c.Reason, c.Evidence)
			assert.True(t, c.Failed && !c.Passed, "%s: a leak must fail", c.ID)
			assert.NotEmpty(t, c.Reason, c.ID)
		default:
			assert.Equal(t, conformance.Allowed, c.Outcome, "%s: %s %v", c.ID, c.Reason, c.Evidence)
			assert.True(t, c.Passed, c.ID)
		}
		assert.NotEmpty(t, c.Evidence, c.ID)
	}
	assert.Equal(t, rep.Summary.Total, len(rep.Cases))
	assert.Equal(t, rep.Summary.Failed, len(rep.Failures()))

	// The report is JSON and round-trips.
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	logReport(t, rep)
	var back conformance.Report
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, rep.Summary, back.Summary)
	assert.Equal(t, rep.Cases[0].ID, back.Cases[0].ID)
	var raw struct {
		Cases []map[string]any `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &raw))
	for _, k := range []string{"id", "title", "layer", "expected", "outcome", "passed", "evidence"} {
		assert.Contains(t, raw.Cases[0], k)
	}
}

// TestFunctionalOnly: under FunctionalOnly isolation leaks are reported
// but decide nothing.
func TestFunctionalOnly(t *testing.T) {
	rep, err := conformance.Check(t.Context(), local, conformance.FunctionalOnly(), conformance.Select("exit-0", "write-outside", "net-udp"))
	require.NoError(t, err)
	logReport(t, rep)
	require.Len(t, rep.Cases, 3)
	assert.True(t, rep.OK(), "%+v", rep.Failures())
	for _, c := range rep.Cases {
		if c.Isolation {
			assert.Equal(t, conformance.Allowed, c.Outcome, c.ID)
			assert.False(t, c.Required || c.Failed || c.Passed, c.ID)
		}
	}
}

// leaky runs commands with plain os/exec: the parent's environment and
// inheritable descriptors leak, no new session, no no_new_privs, and a
// timeout kills only the shell. It claims to be a sandbox, optionally
// declaring gaps.
type leaky struct{ gaps []executor.Gap }

func (l *leaky) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", req.Command)
	cmd.Dir = req.Dir
	cmd.Env = append(os.Environ(), req.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && ctx.Err() == nil {
		return nil, err
	}
	res := &executor.Result{ExitCode: cmd.ProcessState.ExitCode(), Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), TimedOut: ctx.Err() != nil, Duration: time.Since(start)}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
	}
	return res, nil
}

func (l *leaky) Describe(context.Context) executor.Capabilities {
	return executor.Capabilities{Backend: "leaky", Sandboxed: true, Gaps: l.gaps}
}

// TestCheckCatchesLeakyPlumbing: an executor built on plain os/exec fails
// the hygiene cases, and its isolation leaks fail unless it declared them.
func TestCheckCatchesLeakyPlumbing(t *testing.T) {
	l := &leaky{gaps: []executor.Gap{{Control: executor.ControlNetUDP, Reason: "this test executor cannot filter UDP"}}}
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return l, nil },
		conformance.Select("env", "no-inherited-fds", "no-new-privs", "timeout-tree", "exit-7", "net-udp", "net-tcp-connect"))
	require.NoError(t, err)
	logReport(t, rep)
	got := map[string]conformance.CaseResult{}
	for _, c := range rep.Cases {
		got[c.ID] = c
	}
	for _, id := range []string{"env", "no-inherited-fds", "no-new-privs", "timeout-tree"} {
		assert.Equal(t, conformance.Broken, got[id].Outcome, "%s: %s %v", id, got[id].Reason, got[id].Evidence)
		assert.True(t, got[id].Failed, id)
	}
	assert.True(t, got["exit-7"].Passed, "exit codes still work: %v", got["exit-7"].Evidence)
	assert.Equal(t, conformance.Gap, got["net-udp"].Outcome, "a declared gap")
	assert.Equal(t, "this test executor cannot filter UDP", got["net-udp"].Gap)
	assert.False(t, got["net-udp"].Failed || got["net-udp"].Passed, "a gap neither passes nor fails")
	assert.Equal(t, conformance.Allowed, got["net-tcp-connect"].Outcome, "an undeclared leak")
	assert.True(t, got["net-tcp-connect"].Failed)
}

// noop returns a failure without running anything, like a sandbox that
// cannot even start the probe: nothing may pass as denied.
type noop struct{}

func (noop) Run(context.Context, *executor.Request) (*executor.Result, error) {
	return &executor.Result{ExitCode: 126, Stderr: []byte("sh: permission denied\n")}, nil
}

func (noop) Describe(context.Context) executor.Capabilities {
	return executor.Capabilities{Backend: "noop", Sandboxed: true}
}

func TestCheckNoopNeverPasses(t *testing.T) {
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return noop{}, nil })
	require.NoError(t, err)
	logReport(t, rep)
	for _, c := range rep.Cases {
		assert.False(t, c.Passed, "%s passed on an executor that runs nothing: %v", c.ID, c.Evidence)
		if c.Isolation {
			assert.Contains(t, []conformance.Outcome{conformance.SetupError, conformance.Unsupported}, c.Outcome, c.ID)
		}
		assert.True(t, c.Failed || c.Outcome == conformance.Unsupported, "%s: %s", c.ID, c.Outcome)
	}
}

// scratch runs every command through Local on a private copy of the
// fixture (the way a write can "succeed" on a tmpfs inside a sandbox):
// the probe reports success, the host sees nothing, and the policy twin
// sees nothing either. Such cases must be setup errors, not denials.
type scratch struct{ t *testing.T }

func (s scratch) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	base := filepath.Dir(req.Root)
	copyDir := s.t.TempDir()
	if out, err := exec.Command("cp", "-a", base+"/root", base+"/home", base+"/outside", copyDir).CombinedOutput(); err != nil {
		return nil, errors.New("cp: " + err.Error() + ": " + string(out))
	}
	r := *req
	r.Command = string(bytes.ReplaceAll([]byte(req.Command), []byte(base), []byte(copyDir)))
	r.Dir = copyDir + "/root"
	return executor.NewLocal().Run(ctx, &r)
}

func TestCheckScratchCopyIsSetupError(t *testing.T) {
	policyTwins := []string{"write-outside", "truncate-outside", "read-home-secrets"}
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return scratch{t}, nil }, conformance.Select(policyTwins...))
	require.NoError(t, err)
	logReport(t, rep)
	require.Len(t, rep.Cases, len(policyTwins))
	for _, c := range rep.Cases {
		if c.ID == "read-home-secrets" {
			// The copy holds the secrets, so the leak is real.
			assert.Equal(t, conformance.Allowed, c.Outcome, c.ID)
			continue
		}
		assert.Equal(t, conformance.SetupError, c.Outcome, "%s: %v %v", c.ID, c.Evidence, c.Twin)
		assert.True(t, c.Failed, c.ID)
	}
}

// TestBrokenFixture: a fixture that cannot be made fails every case.
func TestBrokenFixture(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "does-not-exist")
	rep, err := conformance.Check(t.Context(), local, conformance.WithTempDir(missing), conformance.Select("exit-0", "write-outside"))
	require.NoError(t, err)
	logReport(t, rep)
	for _, c := range rep.Cases {
		assert.Equal(t, conformance.SetupError, c.Outcome, c.ID)
		assert.True(t, c.Failed, c.ID)
	}
}

func TestExecutorConstructorErrors(t *testing.T) {
	unavailable := &executor.UnavailableError{Backend: "x", Reason: "not here"}
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return nil, unavailable }, conformance.Select("exit-0"))
	require.NoError(t, err)
	logReport(t, rep)
	assert.Equal(t, conformance.Unsupported, rep.Cases[0].Outcome)
	assert.True(t, rep.OK())

	rep, err = conformance.Check(t.Context(), func() (executor.Executor, error) { return nil, errors.New("boom") }, conformance.Select("exit-0"))
	require.NoError(t, err)
	logReport(t, rep)
	assert.Equal(t, conformance.SetupError, rep.Cases[0].Outcome)
	assert.False(t, rep.OK())
}

func TestSelectErrors(t *testing.T) {
	_, err := conformance.Check(t.Context(), local, conformance.Select("no-such-case"))
	assert.ErrorIs(t, err, conformance.ErrNoCase)
	_, err = conformance.Check(t.Context(), local, conformance.Skip("["))
	assert.Error(t, err)

	var ids []string
	rep, err := conformance.Check(t.Context(), local, conformance.Select("network"), conformance.Skip("net-tcp-*", "net-proxy-*"),
		conformance.FunctionalOnly(), conformance.WithProgress(func(id string, done *conformance.CaseResult) {
			if done != nil {
				ids = append(ids, id)
			}
		}))
	require.NoError(t, err)
	logReport(t, rep)
	assert.Equal(t, []string{"net-udp", "net-unix-stream", "socket-trusted-read", "net-unix-dgram", "socket-in-root", "socket-unlisted-dir", "socket-named", "net-abstract-unix"}, ids)
	assert.Len(t, rep.Cases, 8)
}

func TestCancelledCheckReturnsPartialReport(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	n := 0
	rep, err := conformance.Check(ctx, local, conformance.Select("exit-*"), conformance.WithProgress(func(string, *conformance.CaseResult) {
		if n++; n == 2 {
			cancel()
		}
	}))
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, rep)
	assert.Len(t, rep.Cases, 1)
}

// straggler runs commands through Local but also leaves a process behind,
// outside Local's process group.
type straggler struct{ left chan *exec.Cmd }

func (s straggler) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	cmd := exec.Command("/bin/sleep", "300")
	cmd.Env = req.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.left <- cmd
	return executor.NewLocal().Run(ctx, req)
}

// TestLeftBehindProcessesFail: a process that outlives its command is
// found in /proc by the case tag, killed, and fails the case.
func TestLeftBehindProcessesFail(t *testing.T) {
	s := straggler{left: make(chan *exec.Cmd, 1)}
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return s, nil }, conformance.Select("exit-0"))
	require.NoError(t, err)
	logReport(t, rep)
	assert.Equal(t, conformance.Broken, rep.Cases[0].Outcome)
	cmd := <-s.left
	require.Error(t, cmd.Wait(), "the straggler was killed by the suite")
}

// TestRegisteredHostBinaryAsProbe: a program that calls probe.MaybeRun
// (this test binary does, in TestMain) serves as the probe when copied
// under the name cordon-probe, as sandbox-probe does on a machine without
// a Go toolchain.
func TestRegisteredHostBinaryAsProbe(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	rep, err := conformance.Check(t.Context(), local, conformance.WithProbe(self), conformance.Select("stdin", "no-new-privs", "net-udp"), conformance.FunctionalOnly())
	require.NoError(t, err)
	logReport(t, rep)
	assert.Contains(t, rep.Probe, "copied from "+self)
	assert.True(t, rep.OK(), "%+v", rep.Failures())
	for _, c := range rep.Cases {
		want := conformance.OK
		if c.Isolation {
			want = conformance.Allowed
		}
		assert.Equal(t, want, c.Outcome, c.ID)
	}

	rep, err = conformance.Check(t.Context(), local, conformance.WithProbe(filepath.Join(t.TempDir(), "missing")), conformance.Select("stdin", "exit-0"))
	require.NoError(t, err, "a missing probe is a per-case setup error")
	assert.Equal(t, conformance.SetupError, rep.Cases[1].Outcome, "stdin needs the probe")
	assert.Equal(t, conformance.OK, rep.Cases[0].Outcome, "exit-0 does not")
}

// refuser refuses every command, as a strict executor does when it cannot
// enforce a policy, naming one control; or, with err set, fails with err.
type refuser struct{ err error }

func (r refuser) Run(context.Context, *executor.Request) (*executor.Result, error) {
	if r.err != nil {
		return nil, r.err
	}
	return nil, &executor.UnenforceableError{Backend: "refuser", Gaps: []executor.Gap{{Control: executor.ControlNetUDP, Reason: "no UDP control"}}}
}

// TestCheckRefuserNeverPasses: an executor that refuses everything must
// not pass the suite. Only the cases that check the control its refusal
// names may come out as gaps; every other case fails.
func TestCheckRefuserNeverPasses(t *testing.T) {
	for name, x := range map[string]refuser{
		"unenforceable": {},
		"unsupported":   {err: fmt.Errorf("engine went away: %w", errors.ErrUnsupported)},
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return x, nil })
			require.NoError(t, err)
			assert.False(t, rep.OK(), "a refusing executor passed the suite")
			for _, c := range rep.Cases {
				assert.False(t, c.Passed, "%s passed on an executor that refuses everything", c.ID)
				if c.Outcome == conformance.Gap {
					assert.Equal(t, executor.ControlNetUDP, c.Control, "%s: a gap on a control the refusal does not name", c.ID)
					assert.Empty(t, x.err)
					continue
				}
				if c.Outcome == conformance.Unsupported {
					assert.Contains(t, []string{"background", "session-memory"}, c.ID, "only the cases needing the optional Starter may be unsupported")
					continue
				}
				assert.True(t, c.Failed, "%s: %s", c.ID, c.Outcome)
			}
		})
	}
}

// hider hides the whole workspace root whenever the policy has denied
// paths (it runs the command with the root swapped for an empty
// directory): the .env files are unreadable, but so is everything else.
// Such a sandbox must not pass the denied-paths cases.
type hider struct{ t *testing.T }

func (h hider) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	r := *req
	if len(req.Policy.DeniedPaths) > 0 {
		empty := h.t.TempDir()
		r.Command = string(bytes.ReplaceAll([]byte(req.Command), []byte(req.Root), []byte(empty)))
		r.Dir = empty
	}
	return executor.NewLocal().Run(ctx, &r)
}

func TestCheckHidingEverythingIsSetupError(t *testing.T) {
	cases := []string{"denied-paths", "denied-new-file", "trusted-denied-paths"}
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return hider{t}, nil }, conformance.Select(cases...))
	require.NoError(t, err)
	logReport(t, rep)
	require.Len(t, rep.Cases, len(cases))
	for _, c := range rep.Cases {
		assert.False(t, c.Passed, "%s passed on a sandbox that hides the whole workspace", c.ID)
		assert.True(t, c.Failed, c.ID)
		if c.ID != "trusted-denied-paths" { // there the fake also leaks outside the root
			assert.Equal(t, conformance.SetupError, c.Outcome, c.ID)
		}
	}
}
