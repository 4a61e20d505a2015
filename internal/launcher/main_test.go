package launcher

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// The test binary's main goroutine stays on the main thread (init runs
// there), so TestMain can drive run from the main thread and observe that
// the launcher moves off it.
func init() { runtime.LockOSThread() }

var mainThreadRun struct {
	ran bool
	tid int
	err error
}

func TestMain(m *testing.M) {
	if onMainThread() {
		l := &Launcher{reqs: make(chan func()), quit: make(chan struct{}), done: make(chan struct{})}
		ready := make(chan error, 1)
		l.run(nil, ready) // synchronously, on the main thread
		mainThreadRun.ran, mainThreadRun.err, mainThreadRun.tid = true, <-ready, l.TID()
		close(l.quit)
		<-l.done
	}
	os.Exit(m.Run())
}

func TestLauncherAvoidsMainThread(t *testing.T) {
	if !mainThreadRun.ran {
		t.Skip("TestMain did not run on the main thread on this platform")
	}
	require.NoError(t, mainThreadRun.err)
	require.NotZero(t, mainThreadRun.tid)
	require.NotEqual(t, os.Getpid(), mainThreadRun.tid, "launcher thread is the main thread")
}
