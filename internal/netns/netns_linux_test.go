package netns_test

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/netns"
)

func needNetNS(t *testing.T) {
	t.Helper()
	if err := netns.Check(); err != nil {
		if os.Getenv("CORDON_REQUIRE_NETNS") != "" {
			t.Fatalf("CORDON_REQUIRE_NETNS: %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
}

// TestPrivate: a process started in the namespace reaches the listener
// made there, and no host listener; the host reaches the namespace's
// listener only through its descriptor, not by address.
func TestPrivate(t *testing.T) {
	needNetNS(t)
	host, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer host.Close()
	var hostConns atomic.Int64
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			hostConns.Add(1)
			c.Close()
		}
	}()

	ns, err := netns.New()
	require.NoError(t, err)
	defer ns.Close()
	l, err := ns.Listen(netns.ProxyPort)
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "inside\n")
			c.Close()
		}
	}()

	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("skipped: no bash for /dev/tcp")
	}
	run := func(script string) (string, error) {
		var out []byte
		var rerr error
		err := ns.Do(func() error {
			out, rerr = exec.Command(bash, "-c", script).CombinedOutput()
			return nil
		})
		require.NoError(t, err)
		return string(out), rerr
	}
	out, err := run("exec 3<>/dev/tcp/127.0.0.1/3128 && cat <&3")
	require.NoError(t, err, out)
	assert.Equal(t, "inside\n", out, "the command reaches the namespace's listener")

	_, hostPort, _ := net.SplitHostPort(host.Addr().String())
	out, err = run("exec 3<>/dev/tcp/127.0.0.1/" + hostPort)
	require.Error(t, err, "a host loopback listener is unreachable: %s", out)
	assert.Contains(t, out, "refused")
	out, err = run("ip -o link 2>/dev/null || cat /proc/net/dev")
	require.NoError(t, err, out)
	assert.NotContains(t, out, "eth", "only loopback exists: %s", out)

	// The twin: the same address from the host reaches the host listener.
	c, err := net.DialTimeout("tcp4", host.Addr().String(), 5*time.Second)
	require.NoError(t, err)
	c.Close()
	require.Eventually(t, func() bool { return hostConns.Load() == 1 }, 5*time.Second, 10*time.Millisecond)

	// This process is back in its own namespace on every thread.
	b, err := os.ReadFile("/proc/net/dev")
	require.NoError(t, err)
	assert.True(t, strings.Count(string(b), "\n") >= 3)
}

func TestDoError(t *testing.T) {
	needNetNS(t)
	ns, err := netns.New()
	require.NoError(t, err)
	want := errors.New("boom")
	assert.Equal(t, want, ns.Do(func() error { return want }))
	require.NoError(t, ns.Close())
	assert.Error(t, ns.Do(func() error { return nil }), "a closed namespace")
}

func BenchmarkNew(b *testing.B) {
	if err := netns.Check(); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		ns, err := netns.New()
		if err != nil {
			b.Fatal(err)
		}
		l, err := ns.Listen(netns.ProxyPort)
		if err != nil {
			b.Fatal(err)
		}
		l.Close()
		ns.Close()
	}
}
