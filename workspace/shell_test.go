//go:build linux

package workspace_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "sub/file.txt", "x")
	rec := &recorder{}
	s := f.open(t, workspace.WithMode(policy.Trusted), workspace.WithExecutor(rec), workspace.WithShellTimeout(2*time.Second))

	r, err := s.Run(ctx, "echo out; echo err >&2; exit 3", "", 0)
	require.NoError(t, err)
	assert.Equal(t, 3, r.ExitCode)
	assert.Equal(t, "out\n", r.Stdout)
	assert.Equal(t, "err\n", r.Stderr)
	assert.Equal(t, ".", r.Cwd)
	req := rec.last()
	assert.Equal(t, f.root, req.Dir)
	assert.Equal(t, f.root, req.Root)
	assert.Equal(t, f.home, req.Home)
	assert.Equal(t, 2*time.Second, req.Timeout, "timeout 0 means the shell timeout")
	assert.Equal(t, workspace.DefaultLimits().MaxShellOutputChars, req.OutputLimit)
	require.NotNil(t, req.Policy)
	assert.Equal(t, policy.NetworkFull, req.Policy.Network)

	r, err = s.Run(ctx, "pwd", "sub", 0)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(f.root, "sub")+"\n", r.Stdout)
	assert.Equal(t, "sub", r.Cwd)

	_, err = s.Run(ctx, "true", "", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, rec.last().Timeout, "a longer timeout is clamped")

	r, err = s.Run(ctx, "sleep 30", "", 200*time.Millisecond)
	require.NoError(t, err)
	assert.True(t, r.TimedOut)

	// Without WithShellTimeout, timeout 0 is the 300-second default.
	def := &recorder{}
	ds := f.open(t, workspace.WithMode(policy.Trusted), workspace.WithExecutor(def))
	_, err = ds.Run(ctx, "true", "", 0)
	require.NoError(t, err)
	assert.Equal(t, 300*time.Second, def.last().Timeout)
	assert.Equal(t, workspace.DefaultShellTimeout, def.last().Timeout)
	assert.Equal(t, -1, r.ExitCode)

	_, err = s.Run(ctx, "true", "sub/file.txt", 0)
	assert.ErrorIs(t, err, workspace.ErrInvalidArgument, "cwd must be a directory")
	_, err = s.Run(ctx, "  ", "", 0)
	assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
}

func TestRunOutputLimit(t *testing.T) {
	f := newFixture(t)
	s := f.open(t, workspace.WithMode(policy.Trusted), workspace.WithLimits(workspace.Limits{MaxShellOutputChars: 1000}))
	r, err := s.Run(ctx, "head -c 100000 /dev/zero | tr '\\0' a", "", 0)
	require.NoError(t, err)
	assert.True(t, r.Truncated)
	assert.Less(t, len(r.Stdout), 1200, "head and tail within the limit, plus the omission marker")
}

func TestCommandPolicy(t *testing.T) {
	f := newFixture(t)
	write(t, f.home, "notes.txt", "n")
	rules := workspace.WithCommandRules(
		policy.CommandRule{Pattern: "rm", Action: policy.Deny},
		policy.CommandRule{Pattern: "echo", Action: policy.Allow},
		policy.CommandRule{Pattern: "cat", Action: policy.Allow},
	)

	t.Run("deny, with an allowed twin", func(t *testing.T) {
		a := &approvals{answer: true}
		s := f.open(t, rules, workspace.WithApprover(a.approve))
		write(t, f.root, "victim", "v")
		_, err := s.Run(ctx, "rm victim", "", 0)
		requireDenied(t, err, policy.Deny)
		assert.FileExists(t, filepath.Join(f.root, "victim"))
		r, err := s.Run(ctx, "echo ok", "", 0)
		require.NoError(t, err)
		assert.Equal(t, "ok\n", r.Stdout)
		assert.Empty(t, a.requests(), "neither the allow nor the deny asks")
	})
	t.Run("ask without approver", func(t *testing.T) {
		s := f.open(t, rules)
		_, err := s.Run(ctx, "touch made", "", 0)
		requireDenied(t, err, policy.Ask)
		assert.NoFileExists(t, filepath.Join(f.root, "made"))
	})
	t.Run("approved ask claims become grants", func(t *testing.T) {
		rec := &recorder{}
		a := &approvals{answer: true}
		s := f.open(t, rules, workspace.WithApprover(a.approve), workspace.WithExecutor(rec))
		r, err := s.Run(ctx, "cat ~/notes.txt", "", 0)
		require.NoError(t, err)
		assert.Equal(t, "n", r.Stdout)
		reqs := a.requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, "run", reqs[0].Op)
		assert.Equal(t, "cat ~/notes.txt", reqs[0].Command)
		require.NotNil(t, reqs[0].CommandVerdict)
		assert.Equal(t, policy.Ask, reqs[0].CommandVerdict.Decision)
		want := []policy.Grant{{Path: filepath.Join(f.home, "notes.txt"), Op: policy.Read}}
		assert.Equal(t, want, reqs[0].Grants)
		assert.Equal(t, want, rec.last().Grants)

		// Control: an allowed command carries no grants.
		_, err = s.Run(ctx, "echo hi", "", 0)
		require.NoError(t, err)
		assert.Empty(t, rec.last().Grants)
	})
	t.Run("declined", func(t *testing.T) {
		a := &approvals{answer: false}
		s := f.open(t, rules, workspace.WithApprover(a.approve))
		_, err := s.Run(ctx, "cat ~/notes.txt", "", 0)
		requireDenied(t, err, policy.Ask)
	})
}

func TestEnvironment(t *testing.T) {
	t.Setenv("CORDON_CANARY", "canary-7f3a")
	t.Setenv("LC_TIME", "C")
	t.Setenv("LANG", "C.UTF-8")
	allowed := map[string]string{"USER": "agent-user", "LOGNAME": "agent-login", "SHELL": "/bin/sh", "TERM": "dumb", "TZ": "UTC", "TMPDIR": "/var/tmp"}
	for k, v := range allowed {
		t.Setenv(k, v)
	}
	f := newFixture(t)

	t.Run("allowlist", func(t *testing.T) {
		s := f.open(t, workspace.WithMode(policy.Trusted), workspace.WithEnv(map[string]string{"LANG": "en_US.UTF-8", "EXTRA": "1"}))
		r, err := s.Run(ctx, "env", "", 0)
		require.NoError(t, err)
		env := envMap(r.Stdout)
		assert.NotContains(t, r.Stdout, "canary-7f3a", "no canary from the parent environment")
		assert.Equal(t, "C", env["LC_TIME"])
		assert.Equal(t, "en_US.UTF-8", env["LANG"], "WithEnv wins")
		assert.Equal(t, "1", env["EXTRA"])
		assert.Equal(t, f.home, env["HOME"])
		assert.NotEmpty(t, env["PATH"])
		for k, v := range allowed {
			assert.Equal(t, v, env[k], "%s is on the allowlist", k)
		}
	})
	t.Run("control: inherit", func(t *testing.T) {
		s := f.open(t, workspace.WithMode(policy.Trusted), workspace.WithInheritEnv())
		r, err := s.Run(ctx, "env", "", 0)
		require.NoError(t, err)
		assert.Equal(t, "canary-7f3a", envMap(r.Stdout)["CORDON_CANARY"])
	})
	t.Run("unknown home", func(t *testing.T) {
		ws, err := workspace.Local(f.root, workspace.WithHome(""), workspace.WithMode(policy.Trusted))
		require.NoError(t, err)
		s, err := ws.Open(ctx)
		require.NoError(t, err)
		defer s.Close()
		r, err := s.Run(ctx, "env", "", 0)
		require.NoError(t, err)
		_, ok := envMap(r.Stdout)["HOME"]
		assert.False(t, ok)
	})
}

func envMap(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

func TestVirtualenv(t *testing.T) {
	mk := func(t *testing.T, root, dir string, python bool) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir, "bin"), 0o755))
		if python {
			require.NoError(t, os.WriteFile(filepath.Join(root, dir, "bin", "python"), []byte("#!/bin/sh\n"), 0o755))
		}
	}
	probe := `printf '%s|%s' "$VIRTUAL_ENV" "${PATH%%:*}"`
	tests := []struct {
		name    string
		setup   func(t *testing.T, root string)
		opts    []workspace.Option
		want    string // the venv dir, "" for none
		wantRaw string
	}{
		{"dot venv", func(t *testing.T, r string) { mk(t, r, ".venv", true); mk(t, r, "venv", true) }, nil, ".venv", ""},
		{"venv", func(t *testing.T, r string) { mk(t, r, "venv", true) }, nil, "venv", ""},
		{"control: no python", func(t *testing.T, r string) { mk(t, r, ".venv", false) }, nil, "", ""},
		{"explicit PATH", func(t *testing.T, r string) { mk(t, r, ".venv", true) }, []workspace.Option{workspace.WithEnv(map[string]string{"PATH": "/usr/bin:/bin"})}, "", "|/usr/bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.setup(t, f.root)
			s := f.open(t, append([]workspace.Option{workspace.WithMode(policy.Trusted)}, tt.opts...)...)
			r, err := s.Run(ctx, probe, "", 0)
			require.NoError(t, err)
			switch {
			case tt.wantRaw != "":
				assert.Equal(t, tt.wantRaw, r.Stdout)
			case tt.want == "":
				assert.True(t, strings.HasPrefix(r.Stdout, "|"), "no VIRTUAL_ENV: %q", r.Stdout)
			default:
				v := filepath.Join(f.root, tt.want)
				assert.Equal(t, v+"|"+filepath.Join(v, "bin"), r.Stdout)
			}
		})
	}
	t.Run("looked up per command", func(t *testing.T) {
		f := newFixture(t)
		s := f.open(t, workspace.WithMode(policy.Trusted))
		r, err := s.Run(ctx, probe, "", 0)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(r.Stdout, "|"))
		mk(t, f.root, ".venv", true)
		r, err = s.Run(ctx, probe, "", 0)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(r.Stdout, filepath.Join(f.root, ".venv")+"|"))
	})
}

// readUntilDone polls a background process until it leaves the table,
// collecting its output.
func readUntilDone(t *testing.T, s *workspace.Session, id string) (string, *workspace.ProcessOutput) {
	t.Helper()
	var all strings.Builder
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := s.ReadProcessOutput(id)
		require.NoError(t, err)
		all.WriteString(out.Output)
		if out.Status != workspace.StatusRunning {
			return all.String(), out
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %s still running", id)
	return "", nil
}

func TestBackgroundProcesses(t *testing.T) {
	f := newFixture(t)
	s := f.open(t, workspace.WithMode(policy.Trusted))

	t.Run("output and exit", func(t *testing.T) {
		p, err := s.Spawn(ctx, "echo one; sleep 0.2; echo two >&2; exit 4", "")
		require.NoError(t, err)
		assert.Equal(t, workspace.StatusRunning, p.Status)
		all, last := readUntilDone(t, s, p.ID)
		assert.Equal(t, "one\ntwo\n", all, "stdout and stderr merged")
		assert.Equal(t, workspace.StatusExited, last.Status)
		require.NotNil(t, last.ExitCode)
		assert.Equal(t, 4, *last.ExitCode)
		_, err = s.ReadProcessOutput(p.ID)
		var ue *workspace.UnknownProcessError
		require.ErrorAs(t, err, &ue, "a drained exited process leaves the table")
		assert.ErrorIs(t, err, workspace.ErrUnknownProcess)
	})
	t.Run("exit is notified, kill is not", func(t *testing.T) {
		got := make(chan workspace.ProcessInfo, 4)
		s.NotifyProcessExit(func(pi workspace.ProcessInfo) { got <- pi })
		defer s.NotifyProcessExit(nil)
		killed, err := s.Spawn(ctx, "sleep 1000", "")
		require.NoError(t, err)
		p, err := s.Spawn(ctx, "sleep 0.1; echo done; exit 3", "")
		require.NoError(t, err)
		select {
		case pi := <-got:
			assert.Equal(t, p.ID, pi.ID)
			assert.Equal(t, workspace.StatusExited, pi.Status)
			require.NotNil(t, pi.ExitCode)
			assert.Equal(t, 3, *pi.ExitCode)
		case <-time.After(30 * time.Second):
			t.Fatal("no notification for a process that exited")
		}
		out, err := s.ReadProcessOutput(p.ID)
		require.NoError(t, err)
		assert.Equal(t, "done\n", out.Output, "the output stays for ReadProcessOutput")
		_, err = s.KillProcess(killed.ID)
		require.NoError(t, err)
		select {
		case pi := <-got:
			t.Fatalf("KillProcess was notified: %+v", pi)
		case <-time.After(200 * time.Millisecond):
		}
	})
	t.Run("unknown id lists live ids", func(t *testing.T) {
		p, err := s.Spawn(ctx, "sleep 1000", "")
		require.NoError(t, err)
		_, err = s.ReadProcessOutput("p999")
		var ue *workspace.UnknownProcessError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, []string{p.ID}, ue.Live)
		_, err = s.KillProcess(p.ID)
		require.NoError(t, err)
	})
	t.Run("kill", func(t *testing.T) {
		p, err := s.Spawn(ctx, "echo started; sleep 1000 & echo $! > kill.pid; sleep 1000", "")
		require.NoError(t, err)
		bg := waitPid(t, filepath.Join(f.root, "kill.pid"))
		require.False(t, gone(bg), "control: the grandchild runs")
		out, err := s.KillProcess(p.ID)
		require.NoError(t, err)
		assert.Equal(t, workspace.StatusKilled, out.Status)
		assert.Equal(t, "started\n", out.Output, "the last unread output")
		assert.True(t, gone(p.Pid), "the leader is gone")
		assert.True(t, gone(bg), "the grandchild is gone")
		ps, err := s.BackgroundProcesses()
		require.NoError(t, err)
		assert.Empty(t, ps)
	})
	t.Run("passive status consumes nothing", func(t *testing.T) {
		p, err := s.Spawn(ctx, "echo hello; exit 0", "")
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			ps, err := s.BackgroundProcesses()
			return err == nil && len(ps) == 1 && ps[0].Status == workspace.StatusExited
		}, 10*time.Second, 10*time.Millisecond)
		ps, err := s.BackgroundProcesses()
		require.NoError(t, err)
		require.Len(t, ps, 1)
		assert.Equal(t, 0, *ps[0].ExitCode)
		out, err := s.ReadProcessOutput(p.ID)
		require.NoError(t, err)
		assert.Equal(t, "hello\n", out.Output)
		assert.Equal(t, workspace.StatusExited, out.Status)
	})
	t.Run("dropped", func(t *testing.T) {
		s := f.open(t, workspace.WithMode(policy.Trusted), workspace.WithLimits(workspace.Limits{MaxShellOutputChars: 1000}))
		p, err := s.Spawn(ctx, "head -c 5000 /dev/zero | tr '\\0' a; echo; echo end", "")
		require.NoError(t, err)
		// Read once, after the exit, so that the buffer overflowed for
		// sure (BackgroundProcesses consumes nothing).
		require.Eventually(t, func() bool {
			ps, err := s.BackgroundProcesses()
			return err == nil && len(ps) == 1 && ps[0].Status == workspace.StatusExited
		}, 30*time.Second, 10*time.Millisecond)
		out, err := s.ReadProcessOutput(p.ID)
		require.NoError(t, err)
		assert.True(t, out.Dropped, "older unread output was dropped")
		assert.LessOrEqual(t, len(out.Output), 1000)
		assert.True(t, strings.HasSuffix(out.Output, "end\n"), "the newest output is kept")
	})
}

// waitPid waits until a command wrote a pid file, and returns the pid.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 30*time.Second, 5*time.Millisecond, "pid file %s", path)
	return pid
}

// gone reports whether pid no longer runs (absent, or a zombie waiting
// for a reaper that may never come).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X')
}

func TestSpawnPolicyAndExecutors(t *testing.T) {
	f := newFixture(t)
	t.Run("denied", func(t *testing.T) {
		s := f.open(t, workspace.WithCommandRules(policy.CommandRule{Pattern: "sleep", Action: policy.Deny}), workspace.WithApprover(allowAll))
		_, err := s.Spawn(ctx, "sleep 1000", "")
		requireDenied(t, err, policy.Deny)
		p, err := s.Spawn(ctx, "true", "")
		require.NoError(t, err, "control: an approved command spawns")
		readUntilDone(t, s, p.ID)
	})
	t.Run("executor without Starter", func(t *testing.T) {
		s := f.open(t, workspace.WithMode(policy.Trusted), workspace.WithExecutor(runOnly{}))
		_, err := s.Spawn(ctx, "sleep 1", "")
		var be *workspace.BackgroundUnsupportedError
		require.ErrorAs(t, err, &be)
		assert.ErrorIs(t, err, errors.ErrUnsupported)
		r, err := s.Run(ctx, "echo fg", "", 0)
		require.NoError(t, err, "control: Run works on the same executor")
		assert.Equal(t, "fg\n", r.Stdout)
	})
	t.Run("custom Starter runs background processes", func(t *testing.T) {
		rec := &recorder{}
		s := f.open(t, workspace.WithMode(policy.Trusted), workspace.WithExecutor(rec))
		p, err := s.Spawn(ctx, "echo via-recorder", "")
		require.NoError(t, err)
		all, _ := readUntilDone(t, s, p.ID)
		assert.Equal(t, "via-recorder\n", all)
		assert.Equal(t, "echo via-recorder", rec.last().Command)
	})
}

func TestCloseKillsEverything(t *testing.T) {
	f := newFixture(t)
	ws, err := workspace.Local(f.root, workspace.WithHome(f.home), workspace.WithMode(policy.Trusted))
	require.NoError(t, err)
	s, err := ws.Open(ctx)
	require.NoError(t, err)
	var pids []int
	for i := range 3 {
		pidFile := filepath.Join(f.root, fmt.Sprintf("bg%d.pid", i))
		p, err := s.Spawn(ctx, "sleep 1000 & echo $! > "+pidFile+"; sleep 1000", "")
		require.NoError(t, err)
		pids = append(pids, p.Pid, waitPid(t, pidFile))
	}
	for _, pid := range pids {
		require.False(t, gone(pid), "control: %d runs", pid)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, "sleep 1000", "", 0)
		done <- err
	}()
	require.NoError(t, s.Close())
	for _, pid := range pids {
		assert.True(t, gone(pid), "%d is gone after Close", pid)
	}
	select {
	case err := <-done:
		var ce *workspace.ClosedError
		assert.ErrorAs(t, err, &ce, "a Run that Close ended reports the close, not a result")
		assert.ErrorIs(t, err, workspace.ErrClosed)
	case <-time.After(30 * time.Second):
		t.Fatal("a running command survived Close")
	}
}

func TestClosed(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "a.txt", "a")
	ws, err := workspace.Local(f.root, workspace.WithHome(f.home), workspace.WithMode(policy.Trusted))
	require.NoError(t, err)
	s, err := ws.Open(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	calls := map[string]func() error{
		"ReadText":            func() error { _, err := s.ReadText(ctx, "a.txt", 0, 0); return err },
		"WriteText":           func() error { _, err := s.WriteText(ctx, "a.txt", "b", false); return err },
		"EditText":            func() error { _, err := s.EditText(ctx, "a.txt", "a", "b", false); return err },
		"ListFiles":           func() error { _, err := s.ListFiles(ctx, "", "", false, 0); return err },
		"Grep":                func() error { _, err := s.Grep(ctx, "a", "", "", workspace.GrepOptions{}); return err },
		"Run":                 func() error { _, err := s.Run(ctx, "true", "", 0); return err },
		"Spawn":               func() error { _, err := s.Spawn(ctx, "true", ""); return err },
		"ReadProcessOutput":   func() error { _, err := s.ReadProcessOutput("p1"); return err },
		"KillProcess":         func() error { _, err := s.KillProcess("p1"); return err },
		"BackgroundProcesses": func() error { _, err := s.BackgroundProcesses(); return err },
		"DecidePath":          func() error { _, err := s.DecidePath("a.txt", policy.Read); return err },
		"DecideCommand":       func() error { _, err := s.DecideCommand("true", ""); return err },
		"Dispatch":            func() error { _, err := s.Dispatch(ctx, "read_file", []byte(`{"path":"a.txt"}`)); return err },
		"Close":               s.Close,
	}
	for name, call := range calls {
		err := call()
		var ce *workspace.ClosedError
		assert.ErrorAs(t, err, &ce, name)
		assert.ErrorIs(t, err, workspace.ErrClosed, name)
	}
	assert.Equal(t, "a", read(t, filepath.Join(f.root, "a.txt")))
}

var _ executor.Executor = runOnly{}
