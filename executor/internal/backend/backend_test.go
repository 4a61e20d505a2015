//go:build unix

package backend

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
)

func start(t *testing.T, cmd string) *procgroup.Process {
	t.Helper()
	p, err := procgroup.Start(context.Background(), &procgroup.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", cmd}})
	require.NoError(t, err)
	return p
}

// TestWatch: Done closes only after the end step ran, Wait carries its
// violations and the fix, and the output is the command's.
func TestWatch(t *testing.T) {
	var ended atomic.Bool
	p := start(t, "echo out; exit 3")
	bp := Watch(p, func(r *procgroup.Result) []string {
		time.Sleep(50 * time.Millisecond) // a slow repair
		ended.Store(true)
		return []string{"repaired " + string(r.Stdout)}
	}, func(r *executor.Result) { r.Signal = "fixed" })
	<-bp.Done()
	assert.True(t, ended.Load(), "Done closes after the end step")
	res := bp.Wait()
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, []string{"repaired out\n"}, res.Violations)
	assert.Equal(t, "fixed", res.Signal)
	assert.Equal(t, p.Pid(), bp.Pid())
}

// TestWatchKill: Kill ends the command and returns after the end step.
func TestWatchKill(t *testing.T) {
	var ended atomic.Bool
	bp := Watch(start(t, "sleep 1000"), func(*procgroup.Result) []string { ended.Store(true); return nil }, nil)
	require.NoError(t, bp.Kill())
	assert.True(t, ended.Load())
	assert.Equal(t, -1, bp.Wait().ExitCode)
}
