//go:build unix

package backend

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
	"github.com/cordon-sandbox/cordon/netproxy"
)

// recorder is a Command whose hooks record what the pipeline's back
// half called, in order.
type recorder struct {
	calls    []string
	ends     int
	endRes   *procgroup.Result
	launched error // Launched's answer
	outcome  error // Outcome's answer
}

func (rc *recorder) command(cmd string) *Command {
	return &Command{
		Spec: &procgroup.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", cmd}, Timeout: 50e9},
		Launched: func(err error) error {
			rc.calls = append(rc.calls, "launched")
			return rc.launched
		},
		End: func(_ context.Context, res *procgroup.Result) []string {
			rc.calls = append(rc.calls, "end")
			rc.ends++
			rc.endRes = res
			return []string{"repaired"}
		},
		Outcome: func(context.Context, *procgroup.Result) error {
			rc.calls = append(rc.calls, "outcome")
			return rc.outcome
		},
		StartError: func(err error) error { return errors.Join(errBackend, err) },
		Network:    func() []netproxy.Event { return []netproxy.Event{{Host: "example.com"}} },
		Fix:        func(r *executor.Result) { r.ExitCode++ },
	}
}

var errBackend = errors.New("backend")

// TestCommandRun: the hooks run once each, in the pipeline's order, and
// the Result carries the command's output, End's violations, the network
// decisions and the fix.
func TestCommandRun(t *testing.T) {
	rc := &recorder{}
	res, err := rc.command("echo out; exit 3").Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"launched", "end", "outcome"}, rc.calls)
	assert.Equal(t, "out\n", string(res.Stdout))
	assert.Equal(t, 4, res.ExitCode, "the fix ran")
	assert.Equal(t, []string{"repaired"}, res.Violations)
	assert.Len(t, res.Network, 1)
	assert.NotNil(t, rc.endRes)
}

// TestCommandRunFailures: a sandbox that did not come up (Launched) and
// a failed start are the backend's start errors after End ran with no
// result; an Outcome error replaces the Result after End ran with it.
func TestCommandRunFailures(t *testing.T) {
	rc := &recorder{launched: errors.New("helper: landlock_restrict_self failed")}
	_, err := rc.command("true").Run(context.Background())
	require.ErrorIs(t, err, errBackend)
	assert.ErrorContains(t, err, "landlock_restrict_self")
	assert.Equal(t, []string{"launched", "end"}, rc.calls)
	assert.Nil(t, rc.endRes, "End is told the command never ran")

	rc = &recorder{}
	c := rc.command("true")
	c.Spec.Path = "/nonexistent/sh"
	_, err = c.Run(context.Background())
	require.ErrorIs(t, err, errBackend)
	assert.Equal(t, 1, rc.ends)
	assert.Nil(t, rc.endRes)

	rc = &recorder{outcome: errors.New("setup failed")}
	_, err = rc.command("true").Run(context.Background())
	require.EqualError(t, err, "setup failed")
	assert.Equal(t, []string{"launched", "end", "outcome"}, rc.calls)
	assert.NotNil(t, rc.endRes)
}

// TestCommandStart: a background command has no timeout, its end step is
// End (once, with its result), and a sandbox that did not come up is
// waited for and reported as a start error.
func TestCommandStart(t *testing.T) {
	rc := &recorder{}
	c := rc.command("echo out; exit 3")
	p, err := c.Start(context.Background())
	require.NoError(t, err)
	assert.Zero(t, c.Spec.Timeout)
	res := p.Wait()
	assert.Equal(t, 4, res.ExitCode)
	assert.Equal(t, []string{"repaired"}, res.Violations)
	assert.Equal(t, 1, rc.ends)
	assert.NotNil(t, rc.endRes)
	assert.Contains(t, string(res.Stdout), "out")

	rc = &recorder{launched: errors.New("not up")}
	_, err = rc.command("sleep 0.1").Start(context.Background())
	require.ErrorIs(t, err, errBackend)
	assert.Equal(t, []string{"launched", "end"}, rc.calls)
	assert.Nil(t, rc.endRes)
}
