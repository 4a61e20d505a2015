//go:build linux

package procgroup

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/netns"
)

// TestNetNSThreadOutlivesChild: a child started in a network namespace is
// forked from a launcher thread of its own, which must live until the
// child is reaped — a parent-death signal (bwrap's --die-with-parent)
// follows the thread that forked, so a thread that ended right after the
// start killed bwrap now and then. The child also starts in the
// namespace: its /proc/self/ns/net differs from this process's.
func TestNetNSThreadOutlivesChild(t *testing.T) {
	if err := netns.Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	ns, err := netns.New()
	require.NoError(t, err)
	defer ns.Close()
	s := &Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "readlink /proc/self/ns/net; sleep 0.3"}, NetNS: ns}
	r, err := s.resolve()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer outR.Close()
	proc, err := start(s, r, &streams{stdout: outW, stderr: outW})
	outW.Close()
	require.NoError(t, err)
	require.NotNil(t, r.held, "the launcher thread is kept while the child runs")
	task := fmt.Sprintf("/proc/self/task/%d", r.held.TID())
	_, err = os.Stat(task)
	assert.NoError(t, err, "the launcher thread is alive while the child runs")
	state, err := proc.Wait()
	require.NoError(t, err)
	assert.True(t, state.Success(), "%v", state)
	r.release()
	assert.Eventually(t, func() bool { _, err := os.Stat(task); return os.IsNotExist(err) }, 5*time.Second, 10*time.Millisecond, "the thread ends once the child is reaped")
	buf := make([]byte, 256)
	n, _ := outR.Read(buf)
	own, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	assert.NotEqual(t, own+"\n", string(buf[:n]), "the child ran in the namespace")
	assert.Contains(t, string(buf[:n]), "net:[")
}
