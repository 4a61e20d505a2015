//go:build linux

package bwrap_test

import (
	"testing"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestAllowList: the network allow-list on this backend — enforced, or a
// declared gap that strict mode refuses and best effort runs with no
// network (testenv.CheckAllowList).
func TestAllowList(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	be := newExecutor(t, bwrap.Config{BestEffort: true})
	w := newWS(t)
	testenv.CheckAllowList(t, x, be, func(cmd string, p *policy.Policy) *executor.Request { return w.req(cmd, p) }, w.root)
}
