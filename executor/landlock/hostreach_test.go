//go:build linux

package landlock_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/landlock"
)

// A sandboxed command must not reach the host process through /proc or
// signals: not its memory, not its environment, not any of its threads.
// An earlier design restricted a launcher thread of the host and forked
// commands from it; the command then shared that thread's Landlock
// domain, and Landlock's ptrace and signal scoping let it read
// /proc/PPID/task/TID/mem and signal the whole host. The helper (Init)
// gives every command a domain of its own instead. Each test has a twin
// through executor.Local that must reach the host, so a broken fixture
// cannot pass.

// hostTIDs is a shell snippet that sets $tids to every thread of the
// host process.
const hostTIDs = `tids=""; for t in /proc/$PPID/task/*; do tids="$tids ${t##*/}"; done; `

// twin runs cmd unsandboxed, with the same request.
func twin(t *testing.T, req *executor.Request) *executor.Result {
	t.Helper()
	return run(t, &executor.Local{}, req)
}

func TestCommandCannotReadHostMemory(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	secret := []byte("cordon-host-memory-secret-7f3a9c")
	addr := uintptr(unsafe.Pointer(&secret[0]))
	cmd := hostTIDs + fmt.Sprintf(`for tid in $tids; do dd if=/proc/$PPID/task/$tid/mem bs=1 skip=%d count=%d iflag=skip_bytes 2>/dev/null; echo; done`, addr, len(secret))
	res := run(t, x, w.req(cmd, nil))
	assert.NotContains(t, string(res.Stdout), string(secret), "a sandboxed command read the host's memory")
	ctl := twin(t, w.req(cmd, nil))
	assert.Contains(t, string(ctl.Stdout), string(secret), "control: unsandboxed, the same command reads it")
	keepAlive(secret)
}

func TestCommandCannotReadHostEnviron(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	hostEnv, err := os.ReadFile("/proc/self/environ")
	require.NoError(t, err)
	var marker string
	for _, kv := range bytes.Split(hostEnv, []byte{0}) {
		s := string(kv)
		if len(s) > 8 && !strings.HasPrefix(s, "PATH=") && !strings.HasPrefix(s, "HOME=") {
			marker = s
			break
		}
	}
	require.NotEmpty(t, marker, "the test process has no environment to look for")
	cmd := hostTIDs + `cat /proc/$PPID/environ 2>/dev/null | tr '\0' '\n'; for tid in $tids; do tr '\0' '\n' < /proc/$PPID/task/$tid/environ 2>/dev/null; done`
	res := run(t, x, w.req(cmd, nil))
	assert.NotContains(t, string(res.Stdout), marker, "a sandboxed command read the host's environment")
	ctl := twin(t, w.req(cmd, nil))
	assert.Contains(t, string(ctl.Stdout), marker, "control: unsandboxed, the same command reads it")
}

func TestCommandCannotSignalHost(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	cmd := `kill -0 $PPID 2>/dev/null && echo "signalled host pid"; ` + hostTIDs +
		`for tid in $tids; do kill -0 $tid 2>/dev/null && echo "signalled host thread $tid"; done; true`
	res := run(t, x, w.req(cmd, nil))
	assert.NotContains(t, string(res.Stdout), "signalled", "a sandboxed command may signal the host process")
	ctl := twin(t, w.req(cmd, nil))
	assert.Contains(t, string(ctl.Stdout), "signalled host pid", "control: unsandboxed, the same command may")
}

//go:noinline
func keepAlive(b []byte) { _ = b[0] }

// TestEnvironmentNotOnCommandLine: a command's environment (API keys live
// there) never appears on a command line, which every process may read
// in /proc/PID/cmdline — not even for the moment the sandbox helper runs
// (without cgo). A background command watches the command lines while
// commands with a secret in their environment run; the twin puts the
// same secret in a command's argv, and the watcher must see that.
func TestEnvironmentNotOnCommandLine(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	w := newWS(t)
	watch := func(marker string) string {
		// The pattern matches marker but not itself (ps | grep [x]).
		marker = "[" + marker[:1] + "]" + marker[1:]
		return `end=$(( $(date +%s) + 3 )); while [ $(date +%s) -lt $end ]; do for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f" 2>/dev/null; echo; done | grep -c '` + marker + `' | grep -qv '^0$' && { echo SEEN; break; }; done; echo done`
	}
	try := func(t *testing.T, marker string, run func()) string {
		p, err := x.Start(context.Background(), w.req(watch(marker), nil))
		require.NoError(t, err)
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-p.Done():
			default:
				run()
				continue
			}
			break
		}
		res := p.Wait()
		return string(res.Stdout)
	}
	secret := "cordon-env-secret-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	out := try(t, secret, func() {
		req := w.req("true", nil)
		req.Env = append(req.Env, "API_TOKEN="+secret)
		run(t, x, req)
	})
	assert.NotContains(t, out, "SEEN", "a command's environment appeared on a command line")
	assert.Contains(t, out, "done", "the watcher ran")

	// The twin stays alive until the watcher has had its chance.
	twin := "cordon-argv-twin-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	holder, err := x.Start(context.Background(), w.req("sleep 30; : "+twin, nil)) // the shell stays to run ":"
	require.NoError(t, err)
	defer holder.Kill()
	out = try(t, twin, func() { time.Sleep(10 * time.Millisecond) })
	assert.Contains(t, out, "SEEN", "control: the watcher sees a marker on a command line")
}
