//go:build linux

package landlock_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// attackRequest is a request running ./atk (attackDir's copy of the test
// binary) in dir.
func attackRequest(dir, command string) *executor.Request {
	return &executor.Request{Command: command, Dir: dir, Root: dir, Policy: policy.Coding.Policy(), Timeout: time.Minute,
		Env: []string{"PATH=" + os.Getenv("PATH"), attackEnv + "=1"}}
}

// TestCommandCannotLeaveCgroup: a command that starts a child straight
// into another cgroup (clone3 with CLONE_INTO_CGROUP, through an O_PATH
// descriptor of the cgroup directory, which Landlock never sees) would
// leave the command's cgroup, so neither the command's end nor the
// keeper would kill it. The seccomp filter refuses clone3 (ENOSYS):
// nothing is started, checked from outside. Twin: the same program run
// outside the sandbox does start its child in that cgroup.
func TestCommandCannotLeaveCgroup(t *testing.T) {
	base, why := landlock.Cgroups()
	if base == "" {
		// Host-dependent, not landlock's absence: command cgroups need
		// root or a delegated cgroup v2 subtree (the unprivileged run has
		// neither).
		t.Skip("needs command cgroups: " + why)
	}
	x, err := landlock.New(landlock.Config{})
	testenv.SkipUnavailable(t, testenv.Landlock, err)
	defer x.Close()
	dir, _ := attackDir(t)
	res, err := x.Run(context.Background(), attackRequest(dir, "./atk intocgroup "+base+" escaped.pid"))
	require.NoError(t, err)
	assert.NotEqual(t, 0, res.ExitCode, "%s%s", res.Stdout, res.Stderr)
	assert.Contains(t, string(res.Stdout), "function not implemented", "clone3 is refused")
	time.Sleep(200 * time.Millisecond)
	assert.NoFileExists(t, filepath.Join(dir, "escaped.pid"), "a child outside the command's cgroup ran")

	twin := exec.Command(filepath.Join(dir, "atk"), "intocgroup", base, "twin.pid")
	twin.Dir = dir
	twin.Env = append(os.Environ(), attackEnv+"=1")
	out, err := twin.CombinedOutput()
	require.NoError(t, err, "twin: %s", out)
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "twin.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}, 10*time.Second, 20*time.Millisecond)
	defer syscall.Kill(pid, syscall.SIGKILL)
	assert.Equal(t, base, cgroupOf(t, pid), "twin: the child runs in the cgroup it was cloned into (the fixture works)")
}

// TestCommandCannotLimitOtherProcesses: the resource limits and the
// scheduling of another process of the same user are not mediated by
// Landlock; a command could set the keeper's open-file limit to 0 (it
// could then not kill anything), this process's CPU limit (the kernel
// kills it), or starve either (nice 19, SCHED_IDLE, pinned to one busy
// CPU). The seccomp filter refuses each (EPERM): the target is
// unchanged, read from /proc. Twin: the same command outside the sandbox
// changes it. (As root, the kernel already refuses the scheduling calls
// on a target with capabilities the capability-less command lacks; the
// unprivileged run, uid 65534, is where they are the filter's alone.)
func TestCommandCannotLimitOtherProcesses(t *testing.T) {
	x, err := landlock.New(landlock.Config{})
	testenv.SkipUnavailable(t, testenv.Landlock, err)
	defer x.Close()
	dir, _ := attackDir(t)
	target := func() int {
		c := exec.Command("sleep", "30")
		require.NoError(t, c.Start())
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c.Process.Pid
	}
	proc := func(pid int, file, prefix string) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
		require.NoError(t, err)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, prefix) {
				return strings.Join(strings.Fields(strings.TrimPrefix(l, prefix)), " ")
			}
		}
		return string(b)
	}
	for _, tc := range []struct {
		name, command string
		state         func(pid int) string
	}{
		{"prlimit", "./atk prlimit PID", func(pid int) string { return proc(pid, "limits", "Max open files") }},
		{"renice", "renice -n 19 -p PID", func(pid int) string { return strings.Fields(proc(pid, "stat", ""))[18] }},
		{"taskset", "taskset -p 1 PID", func(pid int) string { return proc(pid, "status", "Cpus_allowed_list:") }},
		{"chrt", "chrt -i -p 0 PID", func(pid int) string { return proc(pid, "sched", "policy") }},
		{"ionice", "ionice -c 3 -p PID", func(pid int) string {
			out, _ := exec.Command("ionice", "-p", strconv.Itoa(pid)).Output()
			return string(out)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid := target()
			before := tc.state(pid)
			command := strings.ReplaceAll(tc.command, "PID", strconv.Itoa(pid))
			res, err := x.Run(context.Background(), attackRequest(dir, command))
			require.NoError(t, err)
			assert.NotEqual(t, 0, res.ExitCode, "%s%s", res.Stdout, res.Stderr)
			assert.Contains(t, strings.ToLower(string(res.Stdout)+string(res.Stderr)), "not permitted", "refused with EPERM")
			assert.Equal(t, before, tc.state(pid), "the other process is unchanged")

			pid = target()
			before = tc.state(pid)
			twin := exec.Command("/bin/sh", "-c", strings.ReplaceAll(tc.command, "PID", strconv.Itoa(pid)))
			twin.Dir = dir
			twin.Env = append(os.Environ(), attackEnv+"=1")
			out, err := twin.CombinedOutput()
			require.NoError(t, err, "twin: %s", out)
			assert.NotEqual(t, before, tc.state(pid), "twin: outside the sandbox it changes (the fixture works)")
		})
	}
}
