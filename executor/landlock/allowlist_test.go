//go:build linux

package landlock_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/policy"
)

func allowListPolicy() *policy.Policy {
	p := policy.Coding.Policy()
	p.Network = policy.NetworkAllowList
	p.Hosts = policy.HostRules{Allow: []string{"example.com"}}
	return p
}

// TestAllowListCommandsLive: a command under the allow-list is started
// from a launcher thread of its own in the private network namespace; it
// must not die when that thread would (a parent-death signal follows the
// thread that forked, and bwrap sets one). Each command outlives its
// start by 300 ms and must exit 0; the proxy variables point at the
// proxy and the decisions come back in the Result.
func TestAllowListCommandsLive(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	if _, gap := x.Describe(t.Context()).Gap(executor.ControlNetAllowList); gap {
		t.Skipf("skipped: the allow-list is a declared gap here: %s", x.Describe(t.Context()).Info["network_allowlist"])
	}
	w := newWS(t)
	for range 5 {
		res := run(t, x, w.req("sleep 0.3; echo \"$HTTP_PROXY $ALL_PROXY no_proxy=[$NO_PROXY]\"", allowListPolicy()))
		require.Equal(t, 0, res.ExitCode, "signal %q: %s", res.Signal, res.Stderr)
		assert.Equal(t, "http://127.0.0.1:3128 socks5h://127.0.0.1:3128 no_proxy=[]\n", string(res.Stdout))
	}
	// A refused request is reported in Result.Network with its rule.
	script := `exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT denied.example:443 HTTP/1.1\r\nHost: x\r\n\r\n' >&3 && head -c 12 <&3`
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "connect.sh"), []byte(script), 0o644))
	res := run(t, x, w.req("bash connect.sh", allowListPolicy()))
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	assert.Equal(t, "HTTP/1.1 403", string(res.Stdout))
	require.Len(t, res.Network, 1)
	assert.Equal(t, "denied.example", res.Network[0].Host)
	assert.Equal(t, policy.Deny, res.Network[0].Decision)
	assert.Contains(t, res.Network[0].Rule, "network.unknown")
}

// TestAllowListDescribed: Describe reports the allow-list as enforced
// where private network namespaces can be made, else as a gap that strict
// mode refuses and best effort runs with no network.
func TestAllowListDescribed(t *testing.T) {
	x := newExecutor(t, landlock.Config{})
	caps := x.Describe(t.Context())
	_, gap := caps.Gap(executor.ControlNetAllowList)
	if err := netallow.Check(); err != nil && gap {
		assert.True(t, gap, "%v", caps.Gaps)
		_, rerr := x.Run(t.Context(), newWS(t).req("true", allowListPolicy()))
		var ue *executor.UnenforceableError
		require.True(t, errors.As(rerr, &ue), "strict mode refuses: %v", rerr)
		assert.True(t, strings.Contains(rerr.Error(), "net-allowlist"), "%v", rerr)
		be := newExecutor(t, landlock.Config{BestEffort: true})
		w := newWS(t)
		res := run(t, be, w.req("echo \"[$HTTP_PROXY]\"", allowListPolicy()))
		assert.Equal(t, "[]\n", string(res.Stdout), "best effort: no network and no proxy variables")
		return
	}
	assert.False(t, gap, "%v", caps.Gaps)
	assert.Contains(t, caps.Enforced, executor.ControlNetAllowList)
	assert.Contains(t, caps.Info["network_allowlist"], "network namespace")
	if os.Geteuid() != 0 {
		// Not root: the commands' children make their namespaces.
		assert.Contains(t, caps.Info["network_allowlist"], "user namespace:")
	}
}
