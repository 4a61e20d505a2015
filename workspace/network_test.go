package workspace_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// asker is an executor that, as an allow-list proxy would, asks the
// request's AskNetwork about one host and prints the answer.
type asker struct {
	executor.Local
	host string
}

func (a *asker) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	if req.AskNetwork == nil {
		return &executor.Result{Stdout: []byte("no AskNetwork")}, nil
	}
	if req.AskNetwork(ctx, a.host, 443) {
		return &executor.Result{Stdout: []byte("yes")}, nil
	}
	return &executor.Result{Stdout: []byte("no")}, nil
}

// TestAskNetwork: network.unknown: ask reaches the workspace's approver
// as an ApprovalRequest of op "connect" naming the host, the port and the
// rule; its answer is the proxy's.
func TestAskNetwork(t *testing.T) {
	f := newFixture(t)
	var got []*workspace.ApprovalRequest
	answer := true
	approver := func(_ context.Context, r *workspace.ApprovalRequest) (bool, error) {
		if r.Op == "connect" {
			got = append(got, r)
			return answer, nil
		}
		return true, nil // the command itself (shell_default ask)
	}
	x := &asker{host: "New.Example."}
	s := f.open(t, workspace.WithExecutor(x), workspace.WithApprover(approver),
		workspace.WithNetworkAllowList(policy.HostRules{Allow: []string{"example.com"}, Unknown: policy.Ask}))
	res, err := s.Run(t.Context(), "true", "", 0)
	require.NoError(t, err)
	assert.Equal(t, "yes", res.Stdout)
	require.Len(t, got, 1)
	r := got[0]
	assert.Equal(t, "connect", r.Op)
	assert.Equal(t, "new.example", r.Host, "normalised")
	assert.Equal(t, uint16(443), r.Port)
	require.NotNil(t, r.HostVerdict)
	assert.Equal(t, policy.Ask, r.HostVerdict.Decision)
	assert.Contains(t, r.Reason(), "new.example:443")
	assert.Contains(t, r.Reason(), "network.unknown")

	answer = false
	res, err = s.Run(t.Context(), "true", "", 0)
	require.NoError(t, err)
	assert.Equal(t, "no", res.Stdout, "a refusal is the proxy's answer")

	// Without an approver every ask is refused.
	s2 := f.open(t, workspace.WithExecutor(x), workspace.WithMode(policy.Trusted),
		workspace.WithNetworkAllowList(policy.HostRules{Unknown: policy.Ask}))
	res, err = s2.Run(t.Context(), "true", "", 0)
	require.NoError(t, err)
	assert.Equal(t, "no", res.Stdout)
}

// TestInstructionsAllowList: the instructions name the allowed hosts and
// the proxy only when the executor enforces the allow-list.
func TestInstructionsAllowList(t *testing.T) {
	f := newFixture(t)
	rules := policy.HostRules{Allow: []string{"proxy.golang.org", "*.github.com"}, Unknown: policy.Ask}
	enforced := f.open(t, workspace.WithNetworkAllowList(rules), workspace.WithExecutor(&described{caps: executor.Capabilities{Backend: "x", Sandboxed: true,
		Enforced: []executor.Control{executor.ControlFSRead, executor.ControlNetTCP, executor.ControlNetAllowList}}})).Instructions()
	assert.Contains(t, enforced, "Network: only these hosts, through the proxy")
	assert.Contains(t, enforced, "proxy.golang.org, *.github.com")
	assert.Contains(t, enforced, "asked of the user")

	local := f.open(t, workspace.WithNetworkAllowList(rules)).Instructions()
	assert.Contains(t, local, "does not enforce it")
	assert.NotContains(t, local, "through the proxy")

	_, err := workspace.Local(f.root, workspace.WithNetworkAllowList(policy.HostRules{Allow: []string{"*.*.x"}}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `network.allow[0] "*.*.x"`)
	_, err = workspace.Local(f.root, workspace.WithNetwork(policy.NetworkAllowList))
	require.Error(t, err, "WithNetwork takes none or full")
}
