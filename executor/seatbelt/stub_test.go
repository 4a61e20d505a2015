//go:build !darwin

package seatbelt_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/seatbelt"
)

// TestNewUnsupported: off macOS, New fails with a typed error that says
// the backend is unsupported here, for every configuration.
func TestNewUnsupported(t *testing.T) {
	for _, cfg := range []seatbelt.Config{{}, {BestEffort: true}} {
		x, err := seatbelt.New(cfg)
		assert.Nil(t, x)
		require.Error(t, err)
		assert.ErrorIs(t, err, errors.ErrUnsupported)
		var ue *executor.UnavailableError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, seatbelt.Backend, ue.Backend)
		assert.NotEmpty(t, ue.Reason)
		assert.NotEmpty(t, ue.Fix)
	}
}

// TestNewInvalidConfig: the configuration is checked first, everywhere.
func TestNewInvalidConfig(t *testing.T) {
	_, err := seatbelt.New(seatbelt.Config{WaitDelay: -1})
	var ce *seatbelt.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, seatbelt.ErrInvalidConfig)
	assert.Equal(t, "WaitDelay", ce.Field)
	assert.False(t, errors.Is(err, errors.ErrUnsupported))
}
