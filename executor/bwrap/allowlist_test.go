//go:build linux

package bwrap_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/internal/backendtest"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestAllowList: the network allow-list on this backend — enforced, or a
// declared gap that strict mode refuses and best effort runs with no
// network (backendtest.CheckAllowList).
func TestAllowList(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	be := newExecutor(t, bwrap.Config{BestEffort: true})
	w := newWS(t)
	backendtest.CheckAllowList(t, x, be, func(cmd string, p *policy.Policy) *executor.Request { return w.req(cmd, p) }, w.root)

	// Not root: the host program relays from inside the sandbox, as an
	// execute-only copy the command cannot read (the program may hold
	// secrets); the twin reads an ordinary system file.
	if !strings.HasPrefix(x.Describe(t.Context()).Info["network_allowlist"], "relay:") {
		return
	}
	res, err := x.Run(t.Context(), w.req(`cat /tmp/.cordon-relay >/dev/null 2>&1 && echo relay-read; head -c 4 /proc/$PPID/exe >/dev/null 2>&1 && echo exe-read; head -c 4 /bin/sh >/dev/null && echo twin-read`, backendtest.AllowListPolicy()))
	require.NoError(t, err)
	assert.Equal(t, "twin-read\n", string(res.Stdout), "%s", res.Stderr)
}
