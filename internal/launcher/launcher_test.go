//go:build linux

package launcher_test

import (
	"bytes"
	"errors"
	"fmt"
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

	"github.com/cordon-sandbox/cordon/internal/launcher"
)

var noNewPrivsLine = regexp.MustCompile(`(?m)^NoNewPrivs:\s*(\d)`)

// noNewPrivs parses the NoNewPrivs field of a /proc status file.
func noNewPrivs(t *testing.T, status []byte) string {
	t.Helper()
	m := noNewPrivsLine.FindSubmatch(status)
	if m == nil {
		t.Skip("kernel does not report NoNewPrivs in /proc/*/status")
	}
	return string(m[1])
}

// taskNoNewPrivs returns NoNewPrivs of every thread of this process.
func taskNoNewPrivs(t *testing.T) map[int]string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/self/task/*")
	require.NoError(t, err)
	out := map[int]string{}
	for _, d := range dirs {
		status, err := os.ReadFile(filepath.Join(d, "status"))
		if err != nil {
			continue // thread exited meanwhile
		}
		tid, err := strconv.Atoi(filepath.Base(d))
		require.NoError(t, err)
		out[tid] = noNewPrivs(t, status)
	}
	return out
}

func childStatus(t *testing.T, start func(*exec.Cmd) error) []byte {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("/bin/cat", "/proc/self/status")
	cmd.Stdout = &out
	require.NoError(t, start(cmd))
	require.NoError(t, cmd.Wait())
	return out.Bytes()
}

func TestNoNewPrivsStaysOnLauncher(t *testing.T) {
	self, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	if noNewPrivs(t, self) != "0" {
		t.Skip("the test process already runs with no_new_privs; nothing to tell apart")
	}

	l, err := launcher.New(launcher.NoNewPrivs)
	require.NoError(t, err)
	tid := l.TID()
	require.NotZero(t, tid)

	// Control twin: a child forked from any other thread keeps 0.
	assert.Equal(t, "0", noNewPrivs(t, childStatus(t, (*exec.Cmd).Start)))
	assert.Equal(t, "1", noNewPrivs(t, childStatus(t, l.Start)))

	// Make the runtime create threads while the launcher exists: from the
	// launcher (os/exec starts goroutines there) and from locked goroutines.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var out bytes.Buffer
			cmd := exec.Command("/bin/sleep", "0.05")
			cmd.Stdout = &out // a non-*os.File writer: Start spawns a copying goroutine
			if assert.NoError(t, l.Start(cmd)) {
				assert.NoError(t, cmd.Wait())
			}
		})
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			time.Sleep(20 * time.Millisecond)
		})
	}
	wg.Wait()

	tasks := taskNoNewPrivs(t)
	require.Contains(t, tasks, tid)
	assert.Greater(t, len(tasks), 2)
	for task, v := range tasks {
		if task == tid {
			assert.Equal(t, "1", v, "launcher thread %d", task)
			continue
		}
		if v != "0" {
			// Only the thread of a launcher closed just before (an
			// earlier test) may still be on its way out.
			assert.Eventually(t, func() bool {
				_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", task))
				return errors.Is(err, os.ErrNotExist)
			}, 5*time.Second, 10*time.Millisecond, "thread %d has NoNewPrivs %s", task, v)
		}
	}

	require.NoError(t, l.Close())
	assert.Eventually(t, func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
		return errors.Is(err, os.ErrNotExist)
	}, 5*time.Second, 10*time.Millisecond, "launcher thread %d still exists after Close", tid)
	assert.ErrorIs(t, l.Start(exec.Command("/bin/true")), launcher.ErrClosed)
}

func TestNoOtherGoroutineOnLauncherThread(t *testing.T) {
	l, err := launcher.New(nil)
	require.NoError(t, err)
	defer l.Close()

	var (
		mu   sync.Mutex
		seen = map[int]bool{}
		wg   sync.WaitGroup
	)
	for range 64 {
		wg.Go(func() {
			for range 50 {
				tid := unix.Gettid()
				mu.Lock()
				seen[tid] = true
				mu.Unlock()
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	assert.NotContains(t, seen, l.TID())
	assert.NotEmpty(t, seen)
}

func TestSetupFailureEndsThread(t *testing.T) {
	errSetup := errors.New("setup refused")
	var tid int
	_, err := launcher.New(func() error {
		tid = unix.Gettid()
		return errSetup
	})
	require.ErrorIs(t, err, errSetup)
	var se *launcher.SetupError
	require.ErrorAs(t, err, &se)
	assert.Eventually(t, func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
		return errors.Is(err, os.ErrNotExist)
	}, 5*time.Second, 10*time.Millisecond, "thread %d of a failed setup still exists", tid)
}

// fdTargets lists the targets of the child's descriptors, read by ls -l
// inside the child (ls's own directory descriptor shows up as /proc/N/fd).
func fdTargets(t *testing.T, start func(*exec.Cmd) error, extra ...*os.File) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("/bin/ls", "-l", "/proc/self/fd/")
	cmd.Stdout = &out
	cmd.ExtraFiles = extra
	require.NoError(t, start(cmd))
	require.NoError(t, cmd.Wait())
	return out.String()
}

func TestInheritableDescriptorDoesNotLeak(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "canary-fd")
	require.NoError(t, os.WriteFile(canary, []byte("secret"), 0o600))
	fd, err := syscall.Open(canary, syscall.O_RDONLY, 0) // no O_CLOEXEC
	require.NoError(t, err)
	defer syscall.Close(fd)

	l, err := launcher.New(nil)
	require.NoError(t, err)
	defer l.Close()

	// Control: plain os/exec hands the descriptor to the child.
	require.Contains(t, fdTargets(t, (*exec.Cmd).Start), canary, "fixture: plain os/exec should leak the descriptor")

	assert.NotContains(t, fdTargets(t, l.Start), canary)
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	require.NoError(t, err)
	assert.NotZero(t, flags&unix.FD_CLOEXEC, "sweep marks the parent's descriptor close-on-exec")

	// Allowed twin: a descriptor passed deliberately still arrives, as fd 3.
	f, err := os.Open(canary)
	require.NoError(t, err)
	defer f.Close()
	listing := fdTargets(t, l.Start, f)
	assert.Regexp(t, `(?m) 3 -> `+regexp.QuoteMeta(canary)+`$`, listing)
}

func TestStartDefaults(t *testing.T) {
	l, err := launcher.New(nil)
	require.NoError(t, err)
	defer l.Close()
	t.Setenv("CORDON_LAUNCHER_CANARY", "leaked")

	var out bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", `env; read -r line; echo "read=$?"`)
	cmd.Stdout = &out
	require.NoError(t, l.Start(cmd)) // nil Env and Stdin
	require.NoError(t, cmd.Wait())
	assert.NotContains(t, out.String(), "CORDON_LAUNCHER_CANARY")
	assert.Contains(t, out.String(), "read=1", "stdin is /dev/null: read hits EOF")

	p, err := l.StartProcess("/bin/sh", []string{"sh", "-c", "test -z \"$CORDON_LAUNCHER_CANARY\""}, &os.ProcAttr{})
	require.NoError(t, err)
	st, err := p.Wait()
	require.NoError(t, err)
	assert.Equal(t, 0, st.ExitCode(), "StartProcess with nil Env gives an empty environment")
}

func TestConcurrentStarts(t *testing.T) {
	l, err := launcher.New(launcher.NoNewPrivs)
	require.NoError(t, err)
	defer l.Close()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			var out bytes.Buffer
			cmd := exec.Command("/bin/echo", strconv.Itoa(i))
			cmd.Stdout = &out
			if assert.NoError(t, l.Start(cmd)) && assert.NoError(t, cmd.Wait()) {
				assert.Equal(t, strconv.Itoa(i), strings.TrimSpace(out.String()))
			}
		})
	}
	wg.Wait()
}
