package netallow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// TestCheckerCache: the network checker is compiled once per network
// setting, and a policy changed in place gets a new one that decides by
// the change.
func TestCheckerCache(t *testing.T) {
	g := NewGate(nil)
	p := policy.Coding.Policy()
	p.Network = policy.NetworkAllowList
	p.Hosts.Allow = []string{"a.example"}
	c1, err := g.checker(p)
	require.NoError(t, err)
	c2, err := g.checker(p.Clone())
	require.NoError(t, err)
	assert.Same(t, c1, c2, "the same setting is compiled once")

	p.Hosts.Allow[0] = "b.example"
	c3, err := g.checker(p)
	require.NoError(t, err)
	assert.NotSame(t, c1, c3)
	v, err := c3.DecideHost("b.example", 443)
	require.NoError(t, err)
	assert.Equal(t, policy.Allow, v.Decision)
	v, err = c3.DecideHost("a.example", 443)
	require.NoError(t, err)
	assert.Equal(t, policy.Deny, v.Decision, "the changed policy decides")

	p.Hosts.Allow[0] = "*.*.bad"
	_, err = g.checker(p)
	require.Error(t, err)
}
