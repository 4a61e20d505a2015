//go:build linux

package landlock_test

import (
	"bufio"
	"context"
	"encoding/json"
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

// keepEnv makes the test binary run keepMain with the JSON keepPlan in
// the variable: a process that starts a background command which leaves
// its tree, says "ready <prefix>" and waits to be killed.
const keepEnv = "CORDON_LANDLOCK_TEST_KEEP"

type keepPlan struct {
	Dir    string
	Keeper bool
	// PidsCG, if set, is a pids cgroup (v1) the owner joins first: its
	// keeper and commands share its limit.
	PidsCG string
	// Commands are started in the background in order; empty: one
	// command whose child leaves its tree and writes a heartbeat.
	Commands []string
}

func keepMain(arg string) int {
	var p keepPlan
	if err := json.Unmarshal([]byte(arg), &p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if !p.Keeper {
		landlock.NoKeeper()
	}
	if p.PidsCG != "" {
		if err := os.WriteFile(filepath.Join(p.PidsCG, "cgroup.procs"), []byte("0"), 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	x, err := landlock.New(landlock.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if len(p.Commands) == 0 {
		p.Commands = []string{`setsid sh -c 'echo $$ > orphan.pid; while :; do echo x >> hb; sleep 0.05; done' </dev/null >/dev/null 2>&1 & sleep 1000`}
	}
	for _, c := range p.Commands {
		req := &executor.Request{Dir: p.Dir, Root: p.Dir, Policy: policy.Coding.Policy(), Env: []string{"PATH=" + os.Getenv("PATH")}, Command: c}
		if _, err := x.Start(context.Background(), req); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	for range 200 {
		if b, err := os.ReadFile(filepath.Join(p.Dir, "orphan.pid")); err == nil && strings.HasSuffix(string(b), "\n") {
			fmt.Println("ready", landlock.KeeperPrefix())
			select {} // until killed
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintln(os.Stderr, "the background command did not start")
	return 1
}

// TestKeeperAfterSIGKILL: a process running landlock commands is killed
// outright while a background command's child, which left the command's
// tree (setsid), keeps writing a heartbeat in the workspace. The keeper
// kills it: the heartbeat stops, the process is gone and the command
// cgroups of the killed process are removed. Twin: without the keeper
// the escaped process goes on writing after its owner died.
func TestKeeperAfterSIGKILL(t *testing.T) {
	if base, why := landlock.Cgroups(); base == "" {
		// Host-dependent, not landlock's absence: command cgroups need
		// root or a delegated cgroup v2 subtree (the unprivileged run has
		// neither).
		t.Skip("the keeper needs command cgroups: " + why)
	}
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprint("keeper=", keep), func(t *testing.T) {
			dir := reapDir(t)
			cmd, prefix, pid := startOwner(t, keepPlan{Dir: dir, Keeper: keep})
			cg := cgroupOf(t, pid)
			t.Cleanup(func() {
				// Without the keeper the dead owner's command cgroup
				// still holds the command (and the escaped process).
				_ = os.WriteFile(filepath.Join(cg, "cgroup.kill"), []byte("1"), 0)
				syscall.Kill(pid, syscall.SIGKILL)
				waitGone(pid, 5*time.Second)
				for range 100 {
					if err := os.Remove(cg); err == nil || os.IsNotExist(err) {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
			require.NoError(t, syscall.Kill(pid, 0), "control: the escaped process runs")
			require.Contains(t, filepath.Base(cg), prefix, "control: it is in a command cgroup of the owner")

			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()
			if keep {
				assert.True(t, waitGone(pid, 10*time.Second), "the keeper killed the escaped process %d", pid)
				assert.False(t, growing(t, filepath.Join(dir, "hb")), "the heartbeat stopped")
				assert.Eventually(t, func() bool {
					_, err := os.Stat(cg)
					return os.IsNotExist(err)
				}, 10*time.Second, 50*time.Millisecond, "the keeper removed the command cgroup %s", cg)
				return
			}
			time.Sleep(500 * time.Millisecond)
			assert.NoError(t, syscall.Kill(pid, 0), "without the keeper the escaped process outlives its owner (the fixture works)")
			assert.True(t, growing(t, filepath.Join(dir, "hb")), "and keeps writing")
		})
	}
}

// startOwner starts the test binary as an owner (keepMain) of plan and
// returns it once it is ready, with its cgroups' name prefix and the pid
// its escaped process wrote to orphan.pid.
func startOwner(t *testing.T, plan keepPlan) (*exec.Cmd, string, int) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), keepEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		lines <- l
	}()
	var prefix string
	select {
	case l := <-lines:
		f := strings.Fields(l)
		require.Len(t, f, 2, "%q", l)
		prefix = f[1]
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("the owner did not get ready")
	}
	pidB, err := os.ReadFile(filepath.Join(plan.Dir, "orphan.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidB)))
	require.NoError(t, err)
	return cmd, prefix, pid
}

// cgroupOf returns the cgroup v2 directory of process pid.
func cgroupOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	require.NoError(t, err)
	base, _ := landlock.Cgroups()
	for _, l := range strings.Split(string(b), "\n") {
		if rel, ok := strings.CutPrefix(l, "0::"); ok {
			return filepath.Join(base, filepath.Base(rel))
		}
	}
	t.Fatalf("no cgroup v2 line in %s", b)
	return ""
}

// waitGone reports whether process pid is gone within d.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// growing reports whether file grows within half a second.
func growing(t *testing.T, file string) bool {
	t.Helper()
	size := func() int64 {
		fi, err := os.Stat(file)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	before := size()
	time.Sleep(500 * time.Millisecond)
	return size() > before
}

// TestKeeperUnderPidsLimit: the owner, its keeper and its commands share
// a process limit (a pids cgroup, as systemd's TasksMax or a container's
// pids limit make). A command uses it up, with processes that retry fork
// at once (taking every slot freed), while its escaped child writes a
// heartbeat without forking; then the owner is killed. The keeper, a dash that
// exits when it cannot fork, must kill every command cgroup before it
// forks anything: the heartbeat stops and the cgroups go. (With the
// keeper killing and removing one cgroup at a time, it died at the first
// rmdir and the second command lived on: helper-47's attack.) The
// fixture is checked from outside: the limit is reached before the kill.
func TestKeeperUnderPidsLimit(t *testing.T) {
	base, why := landlock.Cgroups()
	if base == "" {
		// Host-dependent, not landlock's absence: command cgroups need
		// root or a delegated cgroup v2 subtree (the unprivileged run has
		// neither).
		t.Skip("the keeper needs command cgroups: " + why)
	}
	const pidsRoot = "/sys/fs/cgroup/pids"
	if _, err := os.Stat(filepath.Join(pidsRoot, "cgroup.procs")); err != nil || !testenv.Root() {
		t.Skip("needs root and a cgroup v1 pids hierarchy at " + pidsRoot + " (a hybrid host like this project's CI)")
	}
	pcg := filepath.Join(pidsRoot, fmt.Sprintf("cordon-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	require.NoError(t, os.Mkdir(pcg, 0o755))
	const limit = 64
	require.NoError(t, os.WriteFile(filepath.Join(pcg, "pids.max"), []byte(strconv.Itoa(limit)), 0))
	t.Cleanup(func() {
		for range 200 {
			b, _ := os.ReadFile(filepath.Join(pcg, "cgroup.procs"))
			pids := strings.Fields(string(b))
			if len(pids) == 0 {
				break
			}
			for _, s := range pids {
				if pid, err := strconv.Atoi(s); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		os.Remove(pcg)
	})

	dir := reapDir(t)
	// perl (Essential on Debian) forks without threads and retries a
	// failed fork at once; neither the heartbeat nor the filler's
	// children fork again.
	hb := `setsid perl -e 'open(my $p, ">", "orphan.pid"); print $p "$$\n"; close $p; while (1) { open(my $f, ">>", "hb"); print $f "x\n"; close $f; select(undef, undef, undef, 0.05) }' </dev/null >/dev/null 2>&1 &`
	fill := `perl -e '$SIG{CHLD} = "IGNORE"; select(undef, undef, undef, 0.01) until -e "go"; for (1 .. 3) { last if !fork } while (1) { my $c = fork; if (defined $c && $c == 0) { sleep 1000 while 1 } }' </dev/null >/dev/null 2>&1 & sleep 1000`
	cmd, prefix, pid := startOwner(t, keepPlan{Dir: dir, Keeper: true, PidsCG: pcg, Commands: []string{"sleep 1000", hb + " " + fill}})
	defer cmd.Process.Kill()
	cgs, _ := filepath.Glob(filepath.Join(base, prefix+"*"))
	require.Len(t, cgs, 2, "control: two command cgroups")
	t.Cleanup(func() {
		for _, cg := range cgs {
			_ = os.WriteFile(filepath.Join(cg, "cgroup.kill"), []byte("1"), 0)
		}
		waitGone(pid, 5*time.Second)
		for _, cg := range cgs {
			for range 100 {
				if err := os.Remove(cg); err == nil || os.IsNotExist(err) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	})

	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o644))
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(pcg, "pids.current"))
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n >= limit
	}, 20*time.Second, 20*time.Millisecond, "control: the commands use up the process limit")
	require.NoError(t, syscall.Kill(pid, 0), "control: the escaped heartbeat runs")

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.True(t, waitGone(pid, 20*time.Second), "the keeper killed the escaped process %d", pid)
	assert.Eventually(t, func() bool {
		left, _ := filepath.Glob(filepath.Join(base, prefix+"*"))
		return len(left) == 0
	}, 20*time.Second, 50*time.Millisecond, "the keeper removed every command cgroup")
}
