package backendtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// AllowListPolicy is the coding preset under the network allow-list,
// allowing example.com only.
func AllowListPolicy() *policy.Policy {
	p := policy.Coding.Policy()
	p.Network = policy.NetworkAllowList
	p.Hosts = policy.HostRules{Allow: []string{"example.com"}}
	return p
}

// BenchAllowList interleaves `true` under network none (req) and under
// AllowListPolicy on x, reporting allowlist/none — the allow-list's
// per-command cost ratio the README reports for each backend.
func BenchAllowList(b *testing.B, x executor.Executor, req *executor.Request) {
	b.Helper()
	al := *req
	al.Policy = AllowListPolicy()
	ctx := context.Background()
	run := func(req *executor.Request) func() error {
		return func() error {
			res, err := x.Run(ctx, req)
			if err == nil && res.ExitCode != 0 {
				b.Fatalf("%s: exit %d signal %q: %s", req.Policy.Network, res.ExitCode, res.Signal, res.Stderr)
			}
			return err
		}
	}
	testenv.Interleave(b, testenv.Op{Name: "none", Run: run(req)}, testenv.Op{Name: "allowlist", Base: "none", Run: run(&al)})
}

// CheckAllowList checks a backend whose commands get a private network
// namespace under the allow-list (landlock, bwrap). Where Describe
// declares the net-allowlist gap, strict mode (x) must refuse the policy
// and best effort (be) must run it with no proxy variables. Elsewhere
// net-allowlist is enforced, and five commands that outlive their start
// by 300 ms exit 0 with the proxy variables naming 127.0.0.1:3128 — a
// command must not die with the thread that started it (a parent-death
// signal follows the forking thread, and bwrap sets one) — and a refused
// CONNECT comes back as 403 and in Result.Network with its rule. req
// builds a request in the workspace root.
func CheckAllowList(t *testing.T, x interface {
	executor.Executor
	executor.Describer
}, be executor.Executor, req func(cmd string, p *policy.Policy) *executor.Request, root string) {
	t.Helper()
	caps := x.Describe(t.Context())
	if _, gap := caps.Gap(executor.ControlNetAllowList); gap {
		assert.NotContains(t, caps.Enforced, executor.ControlNetAllowList)
		_, err := x.Run(t.Context(), req("true", AllowListPolicy()))
		var ue *executor.UnenforceableError
		require.True(t, errors.As(err, &ue), "strict mode refuses: %v", err)
		assert.Contains(t, err.Error(), "net-allowlist")
		res, err := be.Run(t.Context(), req(`echo "[$HTTP_PROXY]"`, AllowListPolicy()))
		require.NoError(t, err)
		assert.Equal(t, "[]\n", string(res.Stdout), "best effort: no network and no proxy variables")
		return
	}
	assert.Contains(t, caps.Enforced, executor.ControlNetAllowList)
	assert.Contains(t, caps.Info["network_allowlist"], "network namespace")
	for range 5 {
		res, err := x.Run(t.Context(), req(`sleep 0.3; echo "$HTTP_PROXY $ALL_PROXY no_proxy=[$NO_PROXY]"`, AllowListPolicy()))
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, "signal %q: %s", res.Signal, res.Stderr)
		assert.Equal(t, "http://127.0.0.1:3128 socks5h://127.0.0.1:3128 no_proxy=[]\n", string(res.Stdout))
	}
	script := `exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT denied.example:443 HTTP/1.1\r\nHost: x\r\n\r\n' >&3 && head -c 12 <&3`
	require.NoError(t, os.WriteFile(filepath.Join(root, "connect.sh"), []byte(script), 0o644))
	res, err := x.Run(t.Context(), req("bash connect.sh", AllowListPolicy()))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	assert.Equal(t, "HTTP/1.1 403", string(res.Stdout))
	require.Len(t, res.Network, 1)
	assert.Equal(t, "denied.example", res.Network[0].Host)
	assert.Equal(t, policy.Deny, res.Network[0].Decision)
	assert.Contains(t, res.Network[0].Rule, "network.unknown")

	// Eight commands at once: each has its own namespace and proxy
	// session, so each Result names its own request only.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			host := fmt.Sprintf("denied%d.example", i)
			script := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'CONNECT %s:443 HTTP/1.1\r\nHost: x\r\n\r\n' >&3 && head -c 12 <&3`, host)
			name := fmt.Sprintf("connect%d.sh", i)
			if err := os.WriteFile(filepath.Join(root, name), []byte(script), 0o644); err != nil {
				t.Error(err)
				return
			}
			res, err := x.Run(t.Context(), req("bash "+name, AllowListPolicy()))
			if !assert.NoError(t, err) {
				return
			}
			assert.Equal(t, "HTTP/1.1 403", string(res.Stdout), "%s: %s", host, res.Stderr)
			if assert.Len(t, res.Network, 1, host) {
				assert.Equal(t, host, res.Network[0].Host)
			}
		}()
	}
	wg.Wait()
}
