package backend

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestAdmit: a malformed request, a closed executor and a done context
// are refused in that order; a well-formed request to an open executor
// is admitted.
func TestAdmit(t *testing.T) {
	ok := &executor.Request{Command: "true", Root: "/w", Dir: "/w", Policy: policy.Coding.Policy()}
	ch := make(chan struct{})
	open := Closed("test", ch)
	admitted, err := Admit(context.Background(), ok, open)
	require.NoError(t, err)
	require.NotNil(t, admitted.Checker, "the policy compiled once, for the whole pipeline")
	assert.Nil(t, ok.Checker, "the caller's request is not changed")
	assert.Equal(t, ok.Policy.Network, admitted.Policy.Network)
	again, err := Admit(context.Background(), admitted, open)
	require.NoError(t, err)
	assert.Same(t, admitted, again, "a compiled request is used as it is")

	admit := func(ctx context.Context, r *executor.Request) error { _, err := Admit(ctx, r, open); return err }
	var re *executor.RequestError
	assert.ErrorAs(t, admit(context.Background(), &executor.Request{Command: "true"}), &re)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, admit(cancelled, ok), context.Canceled)
	close(ch)
	err = admit(cancelled, ok)
	assert.ErrorIs(t, err, executor.ErrClosed)
	assert.EqualError(t, err, "test executor: "+executor.ErrClosed.Error())
}

// TestDecide: no blocking gap runs; strict mode refuses the gaps by name;
// best effort runs and Describe (Apply) reports them.
func TestDecide(t *testing.T) {
	var l BestEffortLog
	log := slog.New(slog.DiscardHandler)
	gap := executor.Gap{Control: executor.ControlFSRead, Reason: "a test gap"}
	require.NoError(t, l.Decide(log, "test", false, nil))
	err := l.Decide(log, "test", false, []executor.Gap{gap})
	var ue *executor.UnenforceableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, []executor.Gap{gap}, ue.Gaps)
	assert.Empty(t, l.Apply(executor.Capabilities{}).Gaps, "strict mode notes nothing")
	require.NoError(t, l.Decide(log, "test", true, []executor.Gap{gap}))
	caps := l.Apply(executor.Capabilities{Enforced: []executor.Control{executor.ControlFSRead}})
	require.Len(t, caps.Gaps, 1)
	assert.Contains(t, caps.Gaps[0].Reason, "a test gap")
	assert.Empty(t, caps.Enforced)
}
