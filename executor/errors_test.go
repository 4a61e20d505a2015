package executor_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
)

func TestUnavailableError(t *testing.T) {
	cause := &fs.PathError{Op: "exec", Path: "/usr/bin/bwrap", Err: fs.ErrNotExist}
	var err error = &executor.UnavailableError{Backend: "bwrap", Reason: "bwrap is not installed", Fix: "apt-get install bubblewrap", Err: cause}
	assert.ErrorIs(t, err, errors.ErrUnsupported, "unavailable is unsupported")
	assert.ErrorIs(t, err, fs.ErrNotExist, "and unwraps to its cause")
	var ue *executor.UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "bwrap", ue.Backend)
	for _, want := range []string{"bwrap", "not installed", "apt-get install bubblewrap"} {
		assert.Contains(t, err.Error(), want, "the message names the backend, the reason and the fix")
	}
	// Without a cause it still says unsupported.
	assert.ErrorIs(t, &executor.UnavailableError{Backend: "seatbelt", Reason: "macOS only"}, errors.ErrUnsupported)
}

func TestUnenforceableError(t *testing.T) {
	gaps := []executor.Gap{
		{Control: executor.ControlSignal, Reason: "no signal scoping below Landlock ABI 6"},
		{Control: executor.ControlNetUDP, Reason: "no UDP control"},
	}
	var err error = &executor.UnenforceableError{Backend: "landlock", Gaps: gaps}
	var ue *executor.UnenforceableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, gaps, ue.Gaps, "every gap is kept for the caller")
	for _, g := range gaps {
		assert.Contains(t, err.Error(), string(g.Control))
		assert.Contains(t, err.Error(), g.Reason)
	}
	assert.NotErrorIs(t, err, errors.ErrUnsupported, "a refusal is not an unavailable backend")
}

func TestCapabilitiesGap(t *testing.T) {
	c := executor.Capabilities{Backend: "x", Gaps: []executor.Gap{{Control: executor.ControlFSMetadata, Reason: "stat is not mediated"}}}
	g, ok := c.Gap(executor.ControlFSMetadata)
	assert.True(t, ok)
	assert.Equal(t, "stat is not mediated", g.Reason)
	_, ok = c.Gap(executor.ControlFSRead)
	assert.False(t, ok, "no gap declared on fs-read")
}
