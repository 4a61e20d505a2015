//go:build linux

package executor_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backendtest"
	"github.com/cordon-sandbox/cordon/internal/outbuf"
)

var testEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"}

func run(t *testing.T, req *executor.Request) *executor.Result {
	t.Helper()
	if req.Env == nil {
		req.Env = testEnv
	}
	res, err := executor.NewLocal().Run(context.Background(), req)
	require.NoError(t, err)
	return res
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

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err, "fixture: pid file %s", path)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

func TestLocalExitStatus(t *testing.T) {
	tests := []struct {
		command string
		code    int
		signal  string
	}{
		{"exit 0", 0, ""},
		{"true", 0, ""},
		{"exit 1", 1, ""},
		{"exit 7", 7, ""},
		{"kill -KILL $$", -1, "killed"},
		{"kill -TERM $$", -1, "terminated"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			res := run(t, &executor.Request{Command: tt.command})
			assert.Equal(t, tt.code, res.ExitCode)
			assert.Equal(t, tt.signal, res.Signal)
			assert.False(t, res.TimedOut)
			assert.Positive(t, res.Duration)
		})
	}
}

func TestLocalStreamsApart(t *testing.T) {
	res := run(t, &executor.Request{Command: "echo out; echo err >&2; echo out2"})
	assert.Equal(t, "out\nout2\n", string(res.Stdout))
	assert.Equal(t, "err\n", string(res.Stderr))
	assert.False(t, res.Truncated)
}

func TestLocalDir(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	res := run(t, &executor.Request{Command: "pwd -P", Dir: dir})
	assert.Equal(t, dir+"\n", string(res.Stdout))
}

func TestLocalEnvExact(t *testing.T) {
	t.Setenv("CORDON_CANARY_ENV", "leaked")
	tests := []struct {
		name string
		env  []string
	}{
		{"given", []string{"A=1", "B=two words", "PATH=/usr/bin:/bin"}},
		{"empty", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Print the environment the shell received with no PATH
			// lookup: /usr/bin/env is run by absolute path.
			res, err := executor.NewLocal().Run(context.Background(), &executor.Request{Command: "exec /usr/bin/env", Env: tt.env})
			require.NoError(t, err)
			got := strings.Fields(strings.ReplaceAll(string(res.Stdout), " ", "_"))
			var want []string
			for _, kv := range tt.env {
				want = append(want, strings.ReplaceAll(kv, " ", "_"))
			}
			// dash exports PWD it computes itself; nothing else may appear.
			got = filterPrefix(got, "PWD=")
			assert.ElementsMatch(t, want, got)
			assert.NotContains(t, string(res.Stdout), "CORDON_CANARY_ENV")
		})
	}
	// Control: the canary is really in the parent's environment.
	assert.Contains(t, os.Environ(), "CORDON_CANARY_ENV=leaked")
}

func filterPrefix(list []string, prefix string) []string {
	var out []string
	for _, s := range list {
		if !strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func TestLocalStdinIsDevNull(t *testing.T) {
	res := run(t, &executor.Request{Command: `readlink /proc/self/fd/0; cat; echo "cat=$?"; read -r x; echo "read=$?"`})
	assert.Equal(t, "/dev/null\ncat=0\nread=1\n", string(res.Stdout))
}

func TestLocalNoInheritedDescriptors(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "canary-descriptor")
	require.NoError(t, os.WriteFile(canary, []byte("secret"), 0o600))
	fd, err := syscall.Open(canary, syscall.O_RDONLY, 0) // no O_CLOEXEC
	require.NoError(t, err)
	defer syscall.Close(fd)

	const list = "ls -l /proc/self/fd/"
	// Control first (the sweep is process-wide): plain os/exec leaks it.
	plain, err := exec.Command("/bin/sh", "-c", list).Output()
	require.NoError(t, err)
	require.Contains(t, string(plain), canary, "fixture: os/exec should pass the descriptor on")

	res := run(t, &executor.Request{Command: list})
	assert.NotContains(t, string(res.Stdout), canary)
	// Only 0, 1, 2 and ls's own directory descriptor.
	fds := regexp.MustCompile(`(?m) (\d+) -> (.*)$`).FindAllStringSubmatch(string(res.Stdout), -1)
	for _, m := range fds {
		n, _ := strconv.Atoi(m[1])
		if n > 2 {
			assert.Regexp(t, `^/proc/\d+/fd$`, m[2], "descriptor %d", n)
		}
	}
	assert.GreaterOrEqual(t, len(fds), 3)
}

func TestLocalNoControllingTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	require.NoError(t, unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("cannot open the pty slave: %v", err)
	}
	defer pts.Close()

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=ctty")
	cmd.Stdin = pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.Output()
	require.NoError(t, err)
	var rep cttyReport
	require.NoError(t, json.Unmarshal(out, &rep), "helper output %q", out)
	require.Empty(t, rep.Err)

	// Controls: the helper and its plain child have the terminal.
	require.NotContains(t, rep.Helper, "tty_nr=0\n", "fixture: the helper has no controlling terminal")
	assert.NotContains(t, rep.Plain, "tty_nr=0\n")
	assert.Contains(t, rep.Plain, "tty=open")
	// The command run by Local has none, so TIOCSTI has nothing to target.
	assert.Contains(t, rep.Local, "tty_nr=0\n")
	assert.Contains(t, rep.Local, "tty=refused")
}

func TestLocalNoNewPrivs(t *testing.T) {
	const probe = "grep '^NoNewPrivs:' /proc/self/status"
	plain, err := exec.Command("/bin/sh", "-c", probe).Output()
	require.NoError(t, err)
	if !regexp.MustCompile(`NoNewPrivs:\s*0`).Match(plain) {
		t.Skipf("the test process already has no_new_privs (%q): nothing to tell apart", plain)
	}
	res := run(t, &executor.Request{Command: probe})
	assert.Regexp(t, `^NoNewPrivs:\s*1\n$`, string(res.Stdout))
}

func TestLocalTimeoutKillsTree(t *testing.T) {
	d := t.TempDir()
	script := `
sleep 1000 & echo $! > "$D/bg"
setsid sleep 1000 & echo $! > "$D/setsid"
nohup sleep 1000 >/dev/null 2>&1 & echo $! > "$D/nohup"
sh -c 'setsid sleep 1000 & echo $! > "$D/nested"; wait' &
echo started; echo started-err >&2
while [ ! -s "$D/nested" ]; do sleep 0.01; done
echo ready > "$D/ready"
wait`
	res := run(t, &executor.Request{
		Command: script,
		Env:     append([]string{"D=" + d}, testEnv...),
		Timeout: 2 * time.Second,
	})
	require.FileExists(t, filepath.Join(d, "ready"), "fixture: the tree was not complete before the timeout")
	assert.True(t, res.TimedOut)
	assert.Equal(t, -1, res.ExitCode)
	assert.Equal(t, "killed", res.Signal)
	assert.Equal(t, "started\n", string(res.Stdout), "output before the timeout is kept")
	assert.Equal(t, "started-err\n", string(res.Stderr))
	for _, name := range []string{"bg", "setsid", "nohup", "nested"} {
		pid := readPid(t, filepath.Join(d, name))
		assert.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "%s child %d survived the timeout", name, pid)
	}
}

func TestLocalContextCancel(t *testing.T) {
	d := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(d, "bg")); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res, err := executor.NewLocal().Run(ctx, &executor.Request{
		// "hi" is written before the bg file that triggers the cancel, and
		// the file appears whole (renamed into place).
		Command: `sleep 1000 & p=$!; echo hi; echo $p > "$D/bg.tmp"; mv "$D/bg.tmp" "$D/bg"; wait`,
		Env:     append([]string{"D=" + d}, testEnv...),
	})
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	assert.Equal(t, -1, res.ExitCode)
	assert.Equal(t, "hi\n", string(res.Stdout))
	pid := readPid(t, filepath.Join(d, "bg"))
	assert.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond)

	_, err = executor.NewLocal().Run(ctx, &executor.Request{Command: "true", Env: testEnv})
	assert.ErrorIs(t, err, context.Canceled, "a context done before the start is an error")
}

func TestLocalExitKillsLeftoverGroup(t *testing.T) {
	d := t.TempDir()
	res := run(t, &executor.Request{
		Command: `sleep 1000 & echo $! > "$D/bg"; echo done`,
		Env:     append([]string{"D=" + d}, testEnv...),
	})
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, "done\n", string(res.Stdout))
	pid := readPid(t, filepath.Join(d, "bg"))
	assert.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond)
}

// TestLocalEscapedGrandchildDoesNotHang covers the documented escape: a
// double-forked setsid daemon whose parent exited cannot be tracked, keeps
// stdout open, and Run still returns after WaitDelay.
func TestLocalEscapedGrandchildDoesNotHang(t *testing.T) {
	d := t.TempDir()
	l := &executor.Local{WaitDelay: 200 * time.Millisecond}
	done := make(chan *executor.Result, 1)
	go func() {
		res, err := l.Run(context.Background(), &executor.Request{
			Command: `(setsid sh -c 'echo $$ > "$D/daemon"; exec sleep 1000' &); while [ ! -s "$D/daemon" ]; do sleep 0.01; done; echo done`,
			Env:     append([]string{"D=" + d}, testEnv...),
		})
		assert.NoError(t, err)
		done <- res
	}()
	var res *executor.Result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run hung on a grandchild holding stdout")
	}
	require.NotNil(t, res)
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, "done\n", string(res.Stdout))
	pid := readPid(t, filepath.Join(d, "daemon"))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	assert.False(t, gone(pid), "the daemon escaped as documented (if this fails, the caveat in the docs is stale)")
}

func TestLocalOutputLimit(t *testing.T) {
	res := run(t, &executor.Request{Command: "seq 1 100000; seq 1 10 >&2", OutputLimit: 1000})
	var full bytes.Buffer
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&full, "%d\n", i)
	}
	want := append([]byte{}, full.Bytes()[:500]...)
	want = append(want, outbuf.Marker(int64(full.Len()-1000))...)
	want = append(want, full.Bytes()[full.Len()-500:]...)
	assert.Equal(t, string(want), string(res.Stdout))
	assert.True(t, res.Truncated)
	assert.Equal(t, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", string(res.Stderr), "stderr under the limit is whole")
}

func TestLocalBinaryExact(t *testing.T) {
	data := make([]byte, 20000)
	_, _ = rand.Read(data)
	data = append(data, 0, '\r', '\n', 0xff, 0xfe)
	f := filepath.Join(t.TempDir(), "blob")
	require.NoError(t, os.WriteFile(f, data, 0o600))
	res := run(t, &executor.Request{Command: `cat "$F"; cat "$F" >&2`, Env: append([]string{"F=" + f}, testEnv...)})
	assert.True(t, bytes.Equal(data, res.Stdout), "stdout differs")
	assert.True(t, bytes.Equal(data, res.Stderr), "stderr differs")
	assert.False(t, res.Truncated)
}

// TestLocalHugeOutputMemory runs `yes | head -c 1G` and checks that the
// parent's heap does not grow with it.
func TestLocalHugeOutputMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 1 GiB")
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := before.HeapInuse
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	res := run(t, &executor.Request{Command: "yes | head -c 1073741824"})
	close(stop)
	<-sampled
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	growth := peak - before.HeapInuse
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("heap in use: %d KiB before, peak growth %d KiB; allocated during the run: %d KiB", before.HeapInuse>>10, growth>>10, allocated>>10)
	assert.Less(t, growth, uint64(4<<20), "peak heap growth")
	assert.Less(t, allocated, uint64(4<<20), "bytes allocated while 1 GiB streamed through")

	assert.Equal(t, 0, res.ExitCode)
	assert.True(t, res.Truncated)
	half := executor.DefaultOutputLimit / 2
	want := strings.Repeat("y\n", half/2) + outbuf.Marker(1<<30-executor.DefaultOutputLimit) + strings.Repeat("y\n", half/2)
	assert.Equal(t, want, string(res.Stdout))
}

func TestLocalConcurrentRunsDoNotMix(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			res, err := executor.NewLocal().Run(context.Background(), &executor.Request{
				Command: fmt.Sprintf(`for j in $(seq 1 300); do echo "%d-$j"; echo "e%d-$j" >&2; done`, i, i),
				Env:     testEnv,
			})
			if !assert.NoError(t, err) {
				return
			}
			var out, errOut strings.Builder
			for j := 1; j <= 300; j++ {
				fmt.Fprintf(&out, "%d-%d\n", i, j)
				fmt.Fprintf(&errOut, "e%d-%d\n", i, j)
			}
			assert.Equal(t, out.String(), string(res.Stdout), "run %d stdout", i)
			assert.Equal(t, errOut.String(), string(res.Stderr), "run %d stderr", i)
		})
	}
	wg.Wait()
}

func TestLocalStartStreamsAndKills(t *testing.T) {
	d := t.TempDir()
	p, err := executor.NewLocal().Start(context.Background(), &executor.Request{
		Command: `sleep 1000 & echo $! > "$D/bg"; for i in 1 2 3; do echo "out$i"; echo "err$i" >&2; sleep 0.02; done; echo ready; wait`,
		Env:     append([]string{"D=" + d}, testEnv...),
	})
	require.NoError(t, err)
	var got strings.Builder
	require.Eventually(t, func() bool {
		out, dropped := p.ReadOutput()
		assert.False(t, dropped)
		got.Write(out)
		return strings.Contains(got.String(), "ready\n")
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, "out1\nerr1\nout2\nerr2\nout3\nerr3\nready\n", got.String(), "stdout and stderr merged in order")
	select {
	case <-p.Done():
		t.Fatal("process exited before Kill")
	default:
	}

	require.NoError(t, p.Kill())
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after Kill")
	}
	res := p.Wait()
	assert.Equal(t, -1, res.ExitCode)
	assert.Equal(t, "killed", res.Signal)
	assert.False(t, res.TimedOut)
	leader := p.(interface{ Pid() int }).Pid()
	bg := readPid(t, filepath.Join(d, "bg"))
	for _, pid := range []int{leader, bg} {
		assert.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "pid %d", pid)
	}
	assert.NoError(t, p.Kill(), "killing twice is harmless")
}

func TestLocalStartRingDrops(t *testing.T) {
	p, err := executor.NewLocal().Start(context.Background(), &executor.Request{
		Command:     "seq 1 10000",
		Env:         testEnv,
		OutputLimit: 100,
	})
	require.NoError(t, err)
	<-p.Done()
	res := p.Wait()
	assert.Equal(t, 0, res.ExitCode)
	out, dropped := p.ReadOutput()
	assert.True(t, dropped)
	assert.Len(t, out, 100)
	assert.True(t, strings.HasSuffix(string(out), "\n9999\n10000\n"), "newest output kept: %q", out)
	assert.Equal(t, out, res.Stdout, "Wait shows the unread output")
	assert.True(t, res.Truncated)

	out, dropped = p.ReadOutput()
	assert.Empty(t, out)
	assert.False(t, dropped)
}

func TestLocalStartFailure(t *testing.T) {
	_, err := executor.NewLocal().Run(context.Background(), &executor.Request{
		Command: "true", Env: testEnv, Dir: filepath.Join(t.TempDir(), "missing"),
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	_, err = executor.NewLocal().Run(context.Background(), nil)
	var re *executor.RequestError
	assert.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, executor.ErrInvalidRequest)

	_, err = executor.NewLocal().Run(context.Background(), &executor.Request{Command: "true", Timeout: -time.Second})
	assert.ErrorIs(t, err, executor.ErrInvalidRequest)
}

func TestLocalDescribe(t *testing.T) {
	var e executor.Executor = executor.NewLocal()
	d, ok := e.(executor.Describer)
	require.True(t, ok)
	c := d.Describe(context.Background())
	assert.Equal(t, "local", c.Backend)
	assert.False(t, c.Sandboxed)
	assert.Empty(t, c.Enforced)
	_, isStarter := e.(executor.Starter)
	assert.True(t, isStarter)
}

func TestLocalZeroValue(t *testing.T) {
	var l executor.Local
	res, err := l.Run(context.Background(), &executor.Request{Command: "echo zero", Env: testEnv})
	require.NoError(t, err)
	assert.Equal(t, "zero\n", string(res.Stdout))
}

// ExactEnvCommand unsets the shell's default PATH only where the
// environment names none; the twin keeps a given PATH.
func TestExactEnvCommand(t *testing.T) {
	assert.Equal(t, "unset PATH\nls", executor.ExactEnvCommand([]string{"HOME=/h"}, "ls"))
	assert.Equal(t, "ls", executor.ExactEnvCommand([]string{"PATH=/bin"}, "ls"))
}

// TestLocalStdio: the wrapper's streams (input, streamed output, a
// terminal of the command's own, signals), with the shared checks.
func TestLocalStdio(t *testing.T) {
	dir := t.TempDir()
	backendtest.CheckStdio(t, executor.NewLocal(), true, func(cmd string) *executor.Request {
		return &executor.Request{Command: cmd, Dir: dir, Env: testEnv}
	})
}

// TestStdioRefused: an executor that cannot connect a caller's streams
// says so, naming the field, instead of ignoring them.
func TestStdioRefused(t *testing.T) {
	err := executor.RefuseStdio(&executor.Request{Stdio: &executor.Stdio{}}, "docker")
	var re *executor.RequestError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "Stdio", re.Field)
	assert.ErrorIs(t, err, executor.ErrInvalidRequest)
	assert.NoError(t, executor.RefuseStdio(&executor.Request{}, "docker"))
}
