//go:build unix

package conformance

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
)

// hung starts a real process for the request and then ignores the
// context, as a broken executor might.
type hung struct {
	started chan *exec.Cmd
	release chan struct{}
}

func (h *hung) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 300")
	cmd.Env = req.Env
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h.started <- cmd
	<-h.release
	return &executor.Result{}, nil
}

func TestWatchdogKillsHungCase(t *testing.T) {
	defer func(d time.Duration) { watchdogGrace = d }(watchdogGrace)
	watchdogGrace = 300 * time.Millisecond
	h := &hung{started: make(chan *exec.Cmd, 1), release: make(chan struct{})}
	defer close(h.release)

	rep, err := Check(t.Context(), func() (executor.Executor, error) { return h, nil }, Select("exit-0"), WithCaseTimeout(500*time.Millisecond))
	require.NoError(t, err)
	require.Len(t, rep.Cases, 1)
	c := rep.Cases[0]
	t.Logf("%s: %s: %s", c.ID, c.Outcome, c.Reason)
	assert.Equal(t, SetupError, c.Outcome)
	assert.True(t, c.Failed)
	assert.Contains(t, c.Reason, "hung") // our own message, not an error string

	cmd := <-h.started
	werr := cmd.Wait()
	require.Error(t, werr, "the hung case's process was killed")
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	assert.Equal(t, syscall.SIGKILL, ws.Signal())
}

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"plain", "", "with space", "it's", `"double" $HOME $(id) ` + "`id`", "a\nb", "*?[x]", "-n", "'", `\`, "ünï"} {
		out, err := exec.Command("/bin/sh", "-c", "printf '%s' "+shellQuote(s)).Output()
		require.NoError(t, err, s)
		assert.Equal(t, s, string(out), "quote %q", s)
	}
}

func TestSnapshotDiff(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/a", []byte("1"), 0o644))
	before, err := snap(dir)
	require.NoError(t, err)
	same, err := snap(dir)
	require.NoError(t, err)
	assert.Empty(t, before.diff(same, dir))

	require.NoError(t, os.Chmod(dir+"/a", 0o600))
	require.NoError(t, os.WriteFile(dir+"/b", nil, 0o644))
	after, err := snap(dir)
	require.NoError(t, err)
	d := before.diff(after, dir)
	require.Len(t, d, 2)
	assert.True(t, strings.HasPrefix(d[0], "changed "+dir+"/a"), d[0])
	assert.True(t, strings.HasPrefix(d[1], "added "+dir+"/b"), d[1])
}
