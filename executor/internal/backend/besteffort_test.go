package backend

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cordon-sandbox/cordon/executor"
)

// TestBestEffortLog: gaps of profiles run in best effort show in
// Describe's capabilities, take their controls off Enforced, and leave
// the capabilities they were applied to untouched.
func TestBestEffortLog(t *testing.T) {
	var l BestEffortLog
	base := executor.Capabilities{Enforced: []executor.Control{executor.ControlFSRead, executor.ControlSignal}}
	assert.Equal(t, base, l.Apply(base), "nothing run in best effort: unchanged")

	g := executor.Gap{Control: executor.ControlSignal, Reason: "no signal scoping"}
	l.Note(slog.New(slog.DiscardHandler), "x", []executor.Gap{g, g})
	got := l.Apply(base)
	assert.Equal(t, []executor.Control{executor.ControlFSRead}, got.Enforced)
	assert.Len(t, got.Gaps, 1, "one gap, noted twice")
	assert.Contains(t, got.Gaps[0].Reason, "no signal scoping")
	assert.Len(t, base.Enforced, 2, "the input is not modified")
	assert.Empty(t, base.Gaps)
}
