//go:build linux

package landlock_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backendtest"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestAllowList: the network allow-list on this backend — enforced, or a
// declared gap that strict mode refuses and best effort runs with no
// network (backendtest.CheckAllowList).
func TestAllowList(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	be := newExecutor(t, landlock.Config{BestEffort: true})
	w := newWS(t)
	backendtest.CheckAllowList(t, x, be, func(cmd string, p *policy.Policy) *executor.Request { return w.req(cmd, p) }, w.root)
	if os.Geteuid() != 0 {
		if _, gap := x.Describe(t.Context()).Gap(executor.ControlNetAllowList); !gap {
			// Not root: the commands' children make their namespaces.
			assert.Contains(t, x.Describe(t.Context()).Info["network_allowlist"], "user namespace:")
		}
	}
}
