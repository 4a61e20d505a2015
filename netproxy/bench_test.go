package netproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// sink is a loopback server that discards what it reads and, for
// latency runs, answers one byte per connection.
func sink(b *testing.B) string {
	return loopbackServer(b, func(c net.Conn) {
		_, _ = c.Write([]byte{'!'})
		_, _ = io.Copy(io.Discard, c)
	})
}

// loopbackServer serves each connection to a new listener on 127.0.0.1
// with handle (which need not close it) until the test ends, and returns
// the listener's address.
func loopbackServer(tb testing.TB, handle func(net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	tb.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return l.Addr().String()
}

func benchFixture(b *testing.B, target string) *fixture {
	_, port, _ := net.SplitHostPort(target)
	return newFixtureTB(b, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:" + port}})
}

// dialVia opens a connection to target directly or through the proxy's
// CONNECT, and reads the server's first byte.
func dialVia(b *testing.B, proxy, target string) net.Conn {
	addr := target
	if proxy != "" {
		addr = proxy
	}
	c, err := net.Dial("tcp", addr)
	require.NoError(b, err)
	br := bufio.NewReader(c)
	if proxy != "" {
		_, port, _ := net.SplitHostPort(target)
		fmt.Fprintf(c, "CONNECT allowed.test:%s HTTP/1.1\r\nHost: x\r\n\r\n", port)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(b, err)
		require.Equal(b, 200, resp.StatusCode)
	}
	_, err = br.ReadByte()
	require.NoError(b, err)
	return c
}

// BenchmarkConnect is the latency of one connection to a loopback server
// that answers at once: direct, and through a CONNECT tunnel of the
// proxy (decision, resolution, dial). Compare the two in one run.
func BenchmarkConnect(b *testing.B) {
	target := sink(b)
	f := benchFixture(b, target)
	for _, via := range []struct{ name, proxy string }{{"direct", ""}, {"proxy", f.proxy}} {
		b.Run(via.name, func(b *testing.B) {
			for b.Loop() {
				dialVia(b, via.proxy, target).Close()
			}
		})
	}
}

// BenchmarkTunnel is the throughput of one connection copying 256 MiB to
// a loopback sink: direct, and through a CONNECT tunnel.
func BenchmarkTunnel(b *testing.B) {
	target := sink(b)
	f := benchFixture(b, target)
	buf := make([]byte, 1<<20)
	const total = 256 << 20
	for _, via := range []struct{ name, proxy string }{{"direct", ""}, {"proxy", f.proxy}} {
		b.Run(via.name, func(b *testing.B) {
			b.SetBytes(total)
			for b.Loop() {
				c := dialVia(b, via.proxy, target)
				for n := 0; n < total; n += len(buf) {
					_, err := c.Write(buf)
					require.NoError(b, err)
				}
				c.Close()
			}
		})
	}
}
