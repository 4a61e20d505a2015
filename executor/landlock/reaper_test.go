//go:build linux

package landlock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// reapEnv makes the test binary run reapMain with the JSON reapPlan in
// the variable. A subreaper is for good and kills every child it did not
// start, so it gets a process of its own.
const reapEnv = "CORDON_LANDLOCK_TEST_REAP"

// attackEnv makes the test binary, copied into a workspace, act as the
// attacker inside the sandbox (attackMain).
const attackEnv = "CORDON_LANDLOCK_TEST_ATTACK"

// reapPlan is what reapMain runs: with cgroups turned off as in a
// container, an executor with Config.ReapOrphans or without, and
// commands in order — "bg:" ones by Start, waited for at the end.
type reapPlan struct {
	Dir   string
	Reap  bool
	Steps []string
}

func reapMain(arg string) int {
	var p reapPlan
	if err := json.Unmarshal([]byte(arg), &p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	landlock.NoCgroups()
	x, err := landlock.New(landlock.Config{ReapOrphans: p.Reap})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer x.Close()
	ctx := context.Background()
	var bgs []executor.Process
	for _, s := range p.Steps {
		req := &executor.Request{Dir: p.Dir, Root: p.Dir, Policy: policy.Coding.Policy(), Timeout: time.Minute,
			Env: []string{"PATH=" + os.Getenv("PATH"), attackEnv + "=1"}}
		if c, ok := strings.CutPrefix(s, "bg:"); ok {
			req.Command = c
			bg, err := x.Start(ctx, req)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			bgs = append(bgs, bg)
			continue
		}
		req.Command = s
		res, err := x.Run(ctx, req)
		if err != nil || res.ExitCode != 0 {
			fmt.Fprintln(os.Stderr, s, err, res)
			return 1
		}
		fmt.Printf("%s: %s%s", s, res.Stdout, res.Stderr)
	}
	for _, bg := range bgs {
		if r := bg.Wait(); r.ExitCode != 0 {
			fmt.Fprintf(os.Stderr, "background command: exit %d %s\n", r.ExitCode, r.Stdout)
			return 1
		}
	}
	fmt.Println(x.Describe(ctx).Info["reaper"])
	return 0
}

// attackMain is the attacker inside the sandbox. "ghost FILE": it starts
// G in a session of its own and exits; G's main thread exits while a
// thread of it writes FILE every 100 ms from 1.5 s on. "ptrace FILE": it
// starts O in a session of its own and exits, so O is orphaned; O starts
// T, which PTRACE_SEIZEs O (so O's zombie is reported to T first, not
// to its new parent), writes its pid and the seize's errno to T.pid and
// T.seize in the working directory and, after the command ended, writes
// FILE every 100 ms.
func attackMain(args []string) int {
	spawn := func(args ...string) *os.Process {
		c := exec.Command("/proc/self/exe", args...)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		return c.Process
	}
	switch args[0] {
	case "intocgroup":
		// A child started straight into the cgroup args[1] (clone3 with
		// CLONE_INTO_CGROUP, through an O_PATH descriptor), writing its
		// pid to args[2].
		fd, err := unix.Open(args[1], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			fmt.Println("open:", err)
			return 2
		}
		c := exec.Command("/bin/sh", "-c", `echo $$ > "$0"; exec sleep 30`, args[2])
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, UseCgroupFD: true, CgroupFD: fd}
		if err := c.Start(); err != nil {
			fmt.Println("start:", err)
			return 1
		}
		fmt.Println("escaped", c.Process.Pid)
		return 0
	case "prlimit":
		// Another process's open-file limit set to 0.
		pid, err := strconv.Atoi(args[1])
		if err != nil {
			return 2
		}
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{}, nil); err != nil {
			fmt.Println("prlimit:", err)
			return 1
		}
		fmt.Println("limited", pid)
		return 0
	case "ghost":
		spawn("ghost-run", args[1])
		return 0
	case "ghost-run":
		// The leader thread exits (not the process): /proc shows the
		// leader's zombie state while the writer goroutine runs on in
		// another thread.
		runtime.GOMAXPROCS(4)
		_ = os.WriteFile("G.pid", []byte(strconv.Itoa(os.Getpid())), 0o644)
		go func() {
			time.Sleep(1500 * time.Millisecond) // past its command's end
			for {
				_ = os.WriteFile(args[1], []byte("#!/bin/sh\necho pwned\n"), 0o755)
				time.Sleep(100 * time.Millisecond)
			}
		}()
		time.Sleep(100 * time.Millisecond)
		_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0)
	case "chain":
		spawn("chain-run", args[1])
		return 0
	case "chain-run":
		_ = os.WriteFile("C.pid", []byte(strconv.Itoa(os.Getpid())), 0o644)
		p, err := syscall.BytePtrFromString(args[1])
		if err != nil {
			return 1
		}
		msg := []byte("#!/bin/sh\necho pwned\n")
		runtime.LockOSThread()
		chain(p, msg, uintptr(time.Now().Unix()+15))
	case "flood":
		// "flood N": N empty files in flood/dDDDD/, a thousand per
		// directory, made by a few goroutines.
		n, _ := strconv.Atoi(args[1])
		return flood(n)
	case "ptrace":
		spawn("ptrace-O", args[1])
		return 0
	case "ptrace-O":
		// Yama's ptrace_scope 1 lets only ancestors trace, unless the
		// tracee names its tracer (no Yama: EINVAL, and nothing to do).
		_ = unix.Prctl(unix.PR_SET_PTRACER, unix.PR_SET_PTRACER_ANY, 0, 0, 0)
		spawn("ptrace-T", strconv.Itoa(os.Getpid()), args[1])
		select {}
	case "ptrace-T":
		runtime.LockOSThread()
		o, _ := strconv.Atoi(args[1])
		_ = os.WriteFile("T.pid", []byte(strconv.Itoa(os.Getpid())), 0o644)
		_, _, e := syscall.RawSyscall6(syscall.SYS_PTRACE, 0x4206 /* PTRACE_SEIZE */, uintptr(o), 0, 0, 0, 0)
		_ = os.WriteFile("T.seize", []byte(fmt.Sprint(int(e))), 0o644)
		time.Sleep(1500 * time.Millisecond) // past its command's end
		for {
			_ = os.WriteFile(args[2], []byte("#!/bin/sh\necho pwned\n"), 0o755)
			time.Sleep(100 * time.Millisecond)
		}
	}
	return 2
}

func init() {
	if os.Getenv(attackEnv) != "" {
		// main (TestMain, and with it attackMain) stays on the main
		// thread, whose exit the "ghost" attack needs.
		runtime.LockOSThread()
	}
}

// runReap runs plan in a process of its own, failing the test if it
// takes more than a minute, and returns its output.
func runReap(t *testing.T, plan reapPlan) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), reapEnv+"="+string(b))
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the executor hung: %s", out)
	require.NoError(t, err, "%s", out)
	return string(out)
}

// attackDir returns a git workspace holding a copy of the test binary as
// ./atk (the attacker, attackMain) and the path of a hook in it.
func attackDir(t *testing.T) (dir, hook string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	bin, err := os.ReadFile(self)
	require.NoError(t, err)
	dir = reapDir(t)
	require.NoError(t, exec.Command("git", "init", "-q", dir).Run())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "atk"), bin, 0o755))
	return dir, filepath.Join(dir, ".git", "hooks", "pre-commit")
}

func reapDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return dir
}

// killPidFile kills, at the end of the test, the process whose pid is in
// file (an attacker that survived a twin).
func killPidFile(t *testing.T, file string) int {
	b, err := os.ReadFile(file)
	require.NoError(t, err, "the attacker never ran (fixture)")
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// TestReapOrphans: with Config.ReapOrphans and no cgroup, a process that
// left its command's tree is killed when the command ends — the file it
// would have written later never appears — while a background command
// running meanwhile lives on. The twin without the reaper shows the
// orphan surviving and writing.
func TestReapOrphans(t *testing.T) {
	for _, reap := range []bool{true, false} {
		t.Run(fmt.Sprint("reap=", reap), func(t *testing.T) {
			dir := reapDir(t)
			out := runReap(t, reapPlan{Dir: dir, Reap: reap, Steps: []string{
				"bg:sleep 1; echo bg > bg.txt",
				`setsid sh -c 'echo $$ > orphan.pid; sleep 1; echo late > late.txt' & sleep 0.3`,
			}})
			killPidFile(t, filepath.Join(dir, "orphan.pid"))
			bg, err := os.ReadFile(filepath.Join(dir, "bg.txt"))
			require.NoError(t, err, "the background command did not finish")
			assert.Equal(t, "bg\n", string(bg))
			time.Sleep(2 * time.Second) // past the orphan's write
			_, err = os.Stat(filepath.Join(dir, "late.txt"))
			if reap {
				assert.ErrorIs(t, err, os.ErrNotExist, "the orphan outlived its command and wrote")
				assert.Contains(t, out, "subreaper", "Describe names the reaper")
				return
			}
			assert.NoError(t, err, "without the reaper the orphan survives (the fixture works)")
		})
	}
}

// TestReapGhost: an orphan whose main thread exited (its /proc state is
// the leader's zombie while another thread runs) is killed all the same:
// the hook it would write after its command never appears. The twin
// without the reaper shows it writing.
func TestReapGhost(t *testing.T) {
	for _, reap := range []bool{true, false} {
		t.Run(fmt.Sprint("reap=", reap), func(t *testing.T) {
			dir, hook := attackDir(t)
			runReap(t, reapPlan{Dir: dir, Reap: reap, Steps: []string{"./atk ghost " + hook + "; sleep 1", "true"}})
			pid := killPidFile(t, filepath.Join(dir, "G.pid"))
			time.Sleep(2 * time.Second) // past the ghost's first write
			_, err := os.Stat(hook)
			if reap {
				assert.ErrorIs(t, err, os.ErrNotExist, "the ghost outlived its command and planted the hook")
				_, err := os.Stat(fmt.Sprintf("/proc/%d/task", pid))
				assert.ErrorIs(t, err, os.ErrNotExist, "the ghost %d is still there", pid)
				return
			}
			assert.NoError(t, err, "without the reaper the ghost survives and writes (the fixture works)")
		})
	}
}

// TestReapChain: a process that hops from pid to pid (fork, the parent
// exits at once) is never the child a sweep listed by the time the kill
// comes; its process group, which it keeps, is killed with it at once.
// The hook it writes every 1024 generations never appears after the
// commands ended. The twin without the reaper shows it writing.
func TestReapChain(t *testing.T) {
	if !canChain {
		t.Skip("the pid-hopping attacker is written for linux/amd64 (raw fork and time system calls)")
	}
	for _, reap := range []bool{true, false} {
		t.Run(fmt.Sprint("reap=", reap), func(t *testing.T) {
			dir, hook := attackDir(t)
			runReap(t, reapPlan{Dir: dir, Reap: reap, Steps: []string{"./atk chain " + hook + "; sleep 0.5", "true"}})
			end := time.Now()
			b, err := os.ReadFile(filepath.Join(dir, "C.pid"))
			require.NoError(t, err, "the chain never ran (fixture)")
			if pgid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pgid > 1 {
				// The chain keeps the process group its first pid made.
				t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
			}
			if reap {
				time.Sleep(1500 * time.Millisecond)
				if fi, err := os.Stat(hook); err == nil {
					assert.False(t, fi.ModTime().After(end), "the chain outlived the commands and wrote the hook at %v (they ended at %v)", fi.ModTime(), end)
				}
				return
			}
			// The twin: the chain writes after the commands ended (it
			// runs until its deadline, long after; a loaded machine
			// may need a while for 1024 generations).
			wrote := false
			for deadline := time.Now().Add(8 * time.Second); !wrote && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				fi, err := os.Stat(hook)
				wrote = err == nil && fi.ModTime().After(end)
			}
			assert.True(t, wrote, "without the reaper the chain writes the hook after the commands ended (the fixture works)")
		})
	}
}

// TestReapTracedOrphan: an orphan traced by its own child (its zombie is
// reported to the tracer first) neither hangs the executor's sweep nor
// lets the tracer live on to write a hook after the guard. The twin
// without the reaper shows the tracer writing the hook.
func TestReapTracedOrphan(t *testing.T) {
	for _, reap := range []bool{true, false} {
		t.Run(fmt.Sprint("reap=", reap), func(t *testing.T) {
			dir, hook := attackDir(t)
			out := runReap(t, reapPlan{Dir: dir, Reap: reap, Steps: []string{"./atk ptrace " + hook + "; sleep 1", "true"}})
			t.Log(out)
			killPidFile(t, filepath.Join(dir, "T.pid"))
			seize, _ := os.ReadFile(filepath.Join(dir, "T.seize"))
			if string(seize) != "0" {
				// ptrace_scope 2 and 3, or a filter: no attacker can.
				t.Skipf("ptrace is not allowed here (errno %s): the attack cannot be made", seize)
			}
			time.Sleep(2 * time.Second) // past the tracer's first write
			_, err := os.Stat(hook)
			if reap {
				assert.ErrorIs(t, err, os.ErrNotExist, "the tracer outlived its command and planted the hook")
				return
			}
			assert.NoError(t, err, "without the reaper the tracer survives and writes (the fixture works)")
		})
	}
}
