//go:build linux

package docker_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/docker"
	"github.com/cordon-sandbox/cordon/executor/internal/backendtest"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestAllowList: each command in the session's container gets a proxy
// listener of its own inside the container's network namespace; the
// proxy variables name it, a refused CONNECT is reported in the Result,
// and the listener is gone once the command ended. Describe reports the
// allow-list as enforced only where the namespace can be entered.
func TestAllowList(t *testing.T) {
	x := newExecutor(t, docker.Config{})
	caps := x.Describe(t.Context())
	_, gap := caps.Gap(executor.ControlNetAllowList)
	if err := netallow.Check(); err != nil {
		assert.True(t, gap, "%v", caps.Gaps)
		_, rerr := x.Run(t.Context(), newWS(t).req("true", backendtest.AllowListPolicy()))
		var ue *executor.UnenforceableError
		require.True(t, errors.As(rerr, &ue), "strict mode refuses: %v", rerr)
		return
	}
	assert.False(t, gap, "%v", caps.Gaps)
	w := newWS(t)
	res := run(t, x, w.req(`echo "$HTTP_PROXY $ALL_PROXY [$NO_PROXY]"`, backendtest.AllowListPolicy()))
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	m := regexp.MustCompile(`^http://127\.0\.0\.1:(\d+) socks5h://127\.0\.0\.1:(\d+) \[\]\n$`).FindStringSubmatch(string(res.Stdout))
	require.NotNil(t, m, "%q", res.Stdout)
	assert.Equal(t, m[1], m[2])

	// nc (busybox or the host's) is not certain to exist: the shell's own
	// redirection cannot open TCP in dash, so use the probe-free route of
	// printing a CONNECT through /dev/tcp only when bash exists.
	script := `exec 3<>/dev/tcp/127.0.0.1/${HTTP_PROXY##*:} && printf 'CONNECT denied.example:443 HTTP/1.1\r\nHost: x\r\n\r\n' >&3 && head -c 12 <&3`
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "connect.sh"), []byte(script), 0o644))
	res = run(t, x, w.req("command -v bash >/dev/null || exit 42; bash connect.sh", backendtest.AllowListPolicy()))
	if res.ExitCode == 42 {
		t.Skip("skipped: no bash in this image")
	}
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	assert.Equal(t, "HTTP/1.1 403", string(res.Stdout))
	require.Len(t, res.Network, 1)
	assert.Equal(t, "denied.example", res.Network[0].Host)
	assert.Equal(t, policy.Deny, res.Network[0].Decision)

	// The previous command's listener is closed: its port refuses.
	old := m[1]
	res = run(t, x, w.req(`bash -c 'exec 3<>/dev/tcp/127.0.0.1/`+old+`' 2>/dev/null && echo open || echo closed`, backendtest.AllowListPolicy()))
	assert.Equal(t, "closed\n", string(res.Stdout), "%s", res.Stderr)
}
