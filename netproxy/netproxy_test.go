package netproxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	xproxy "golang.org/x/net/proxy"

	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
)

// canary is a loopback HTTP server that counts the connections it accepts.
type canary struct {
	addr  netip.AddrPort
	conns atomic.Int64
}

func newCanary(t testing.TB) *canary {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &canary{addr: netip.MustParseAddrPort(l.Addr().String())}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "canary %s", r.URL.Path) }),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				c.conns.Add(1)
			}
		},
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return c
}

// resolver maps *.test names to loopback, as the conformance cases do.
func resolver(_ context.Context, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".test") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host (tests resolve only .test names)", Name: host, IsNotFound: true}
}

type fixture struct {
	canary *canary
	proxy  string // host:port of the proxy
	px     *netproxy.Proxy
	sess   *netproxy.Session
	asked  atomic.Int64
}

func newFixture(t *testing.T, rules policy.HostRules, answer bool, mut ...func(*netproxy.Config)) *fixture {
	t.Helper()
	return newFixtureAnswer(t, rules, answer, mut...)
}

func newFixtureTB(tb testing.TB, rules policy.HostRules) *fixture {
	return newFixtureAnswer(tb, rules, false)
}

func newFixtureAnswer(t testing.TB, rules policy.HostRules, answer bool, mut ...func(*netproxy.Config)) *fixture {
	t.Helper()
	f := &fixture{canary: newCanary(t)}
	for i, a := range rules.Allow {
		rules.Allow[i] = strings.ReplaceAll(a, "PORT", fmt.Sprint(f.canary.addr.Port()))
	}
	p := policy.Coding.Policy()
	p.Network = policy.NetworkAllowList
	p.Hosts = rules
	c, err := policy.NewChecker(p, t.TempDir(), "")
	require.NoError(t, err)
	cfg := netproxy.Config{Checker: c, Resolve: resolver, Ask: func(context.Context, string, uint16) bool {
		f.asked.Add(1)
		return answer
	}}
	for _, m := range mut {
		m(&cfg)
	}
	px, err := netproxy.New(cfg)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f.proxy = l.Addr().String()
	f.px = px
	f.sess = px.Serve(l, netproxy.SessionConfig{})
	t.Cleanup(func() { f.sess.Close() })
	return f
}

func (f *fixture) httpGet(t *testing.T, host string) (int, string) {
	t.Helper()
	pu, _ := url.Parse("http://" + f.proxy)
	cl := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := cl.Get(fmt.Sprintf("http://%s:%d/x", host, f.canary.addr.Port()))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// connect sends CONNECT host:port and, when it succeeds, an HTTP request
// through the tunnel.
func (f *fixture) connect(t *testing.T, host string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", f.proxy)
	require.NoError(t, err)
	defer c.Close()
	target := fmt.Sprintf("%s:%d", host, f.canary.addr.Port())
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	fmt.Fprintf(c, "GET /tunnel HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
	inner, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(inner.Body)
	return 200, string(b)
}

func (f *fixture) socks(t *testing.T, host string) (string, error) {
	t.Helper()
	d, err := xproxy.SOCKS5("tcp", f.proxy, nil, &net.Dialer{Timeout: 10 * time.Second})
	require.NoError(t, err)
	c, err := d.Dial("tcp", fmt.Sprintf("%s:%d", host, f.canary.addr.Port()))
	if err != nil {
		return "", err
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /socks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	return string(b), nil
}

func TestAllowed(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:PORT"}}, false)
	code, body := f.httpGet(t, "allowed.test")
	assert.Equal(t, 200, code)
	assert.Equal(t, "canary /x", body)
	code, body = f.connect(t, "ALLOWED.test.")
	assert.Equal(t, 200, code)
	assert.Equal(t, "canary /tunnel", body)
	body, err := f.socks(t, "allowed.test")
	require.NoError(t, err)
	assert.Equal(t, "canary /socks", body)
	assert.Equal(t, int64(3), f.canary.conns.Load(), "one connection per protocol reached the canary")
	evs := f.sess.Events()
	require.Len(t, evs, 3)
	for i, p := range []string{"http", "connect", "socks5"} {
		assert.Equal(t, p, evs[i].Protocol)
		assert.Equal(t, policy.Allow, evs[i].Decision)
		assert.Equal(t, "allowed.test", evs[i].Host)
		assert.Equal(t, `network.allow[0] "allowed.test"`, evs[i].Rule)
		assert.Equal(t, f.canary.addr.String(), evs[i].Addr)
	}
	assert.Zero(t, f.asked.Load())
}

func TestRefused(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:PORT", "*.wild.test"}, Deny: []string{"denied.test", "up.wild.test"}}, false)
	for _, host := range []string{"denied.test", "unknown.test", "up.wild.test", "127.0.0.2"} {
		code, body := f.httpGet(t, host)
		assert.Equal(t, http.StatusForbidden, code, host)
		assert.Contains(t, body, "cordon: "+host, host)
		assert.Contains(t, body, "refused", host)
		code, body = f.connect(t, host)
		assert.Equal(t, http.StatusForbidden, code, host)
		if strings.Contains(host, "denied") || strings.HasPrefix(host, "up.") {
			assert.Contains(t, body, "only the user can remove the entry from network.deny", host)
		} else {
			assert.Contains(t, body, "to allow it, add", host)
		}
		_, err := f.socks(t, host)
		require.Error(t, err, host)
		assert.Contains(t, err.Error(), "not allowed", host)
	}
	assert.Zero(t, f.canary.conns.Load(), "no refused request reached the canary")
	code, body := f.httpGet(t, "denied.test")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, `network.deny[0] "denied.test"`)
	code, body = f.httpGet(t, "unknown.test")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "not in network.allow")
	for _, e := range f.sess.Events() {
		assert.Equal(t, policy.Deny, e.Decision, e.String())
	}
}

// TestRebinding: an allowed name that resolves to loopback is refused
// unless an address entry names the address; the twin allows it.
func TestRebinding(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test"}}, false)
	code, body := f.httpGet(t, "allowed.test")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "resolves to 127.0.0.1")
	code, _ = f.connect(t, "allowed.test")
	assert.Equal(t, http.StatusForbidden, code)
	_, err := f.socks(t, "allowed.test")
	require.Error(t, err)
	assert.Zero(t, f.canary.conns.Load())

	twin := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.0/8"}}, false)
	code, _ = twin.httpGet(t, "allowed.test")
	assert.Equal(t, 200, code)
	assert.Equal(t, int64(1), twin.canary.conns.Load())
}

func TestAskOncePerHostPort(t *testing.T) {
	yes := newFixture(t, policy.HostRules{Allow: []string{"127.0.0.1:PORT"}, Unknown: policy.Ask}, true)
	for range 3 {
		code, _ := yes.httpGet(t, "asked.test")
		assert.Equal(t, 200, code)
	}
	assert.Equal(t, int64(1), yes.asked.Load(), "asked once per host:port")
	assert.Equal(t, int64(3), yes.canary.conns.Load())
	assert.Contains(t, yes.sess.Events()[0].Rule, "approved for this session")

	no := newFixture(t, policy.HostRules{Allow: []string{"127.0.0.1:PORT"}, Unknown: policy.Ask}, false)
	for range 2 {
		code, body := no.connect(t, "asked.test")
		assert.Equal(t, http.StatusForbidden, code)
		assert.Contains(t, body, "not approved")
	}
	assert.Equal(t, int64(1), no.asked.Load())
	assert.Zero(t, no.canary.conns.Load())
}

// TestAsksNotSharedBetweenSessions: an answer holds for the session that
// asked; another session of the same proxy (another command, perhaps
// another caller's) is asked again and gets its own answer.
func TestAsksNotSharedBetweenSessions(t *testing.T) {
	yes := newFixture(t, policy.HostRules{Allow: []string{"127.0.0.1:PORT"}, Unknown: policy.Ask}, true)
	code, _ := yes.httpGet(t, "asked.test")
	require.Equal(t, 200, code, "control: the first session's yes opens the host")
	require.Equal(t, int64(1), yes.asked.Load())

	var askedNo atomic.Int64
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	other := yes.px.Serve(l, netproxy.SessionConfig{Ask: func(context.Context, string, uint16) bool {
		askedNo.Add(1)
		return false
	}})
	defer other.Close()
	second := &fixture{canary: yes.canary, proxy: l.Addr().String(), px: yes.px, sess: other}
	conns := yes.canary.conns.Load()
	code, body := second.connect(t, "asked.test")
	assert.Equal(t, http.StatusForbidden, code, "the other session's no decides its connection: %s", body)
	assert.Equal(t, int64(1), askedNo.Load(), "the other session is asked itself")
	assert.Equal(t, conns, yes.canary.conns.Load(), "nothing reached the host through the other session")
	code, _ = yes.httpGet(t, "asked.test")
	assert.Equal(t, 200, code, "the first session keeps its own answer")
	assert.Equal(t, int64(1), yes.asked.Load())
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:PORT"}}, false)
	raw := func(req string) string {
		c, err := net.Dial("tcp", f.proxy)
		require.NoError(t, err)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(c, req)
		b, _ := io.ReadAll(c)
		return string(b)
	}
	assert.Contains(t, raw("GET /x HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n"), "400 Bad Request")
	assert.Contains(t, raw("CONNECT allowed.test HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n"), "400 Bad Request")
	assert.Contains(t, raw("CONNECT a%00b.test:80 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), "400 Bad Request")
	assert.Contains(t, raw("GET http://allowed.test/ HTTP/1.1\r\nHost: x\r\nX: "+strings.Repeat("a", 100<<10)+"\r\n\r\n"), "431")
	assert.Equal(t, "\x05\xff", raw("\x05\x01\x02"), "SOCKS without the no-auth method: no acceptable method, closed")
	assert.Equal(t, "\x05\x00\x05\x07\x00\x01\x00\x00\x00\x00\x00\x00", raw("\x05\x01\x00\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50"), "SOCKS BIND: command not supported")
	assert.Zero(t, f.canary.conns.Load())
	// The proxy still serves after the bad input.
	code, _ := f.httpGet(t, "allowed.test")
	assert.Equal(t, 200, code)
}

func TestConnectionLimit(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:PORT"}}, false, func(c *netproxy.Config) { c.MaxConns = 2 })
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", f.proxy)
		require.NoError(t, err)
		fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", f.canary.addr.Port())
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode)
		held = append(held, c)
	}
	c, err := net.Dial("tcp", f.proxy)
	require.NoError(t, err)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = c.Read(make([]byte, 1))
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(fmt.Sprint(err), "reset"), "%v", err)
	c.Close()
	for _, h := range held {
		h.Close()
	}
	// Released slots are reused.
	require.Eventually(t, func() bool {
		pu, _ := url.Parse("http://" + f.proxy)
		cl := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}, Timeout: 5 * time.Second}
		resp, err := cl.Get(fmt.Sprintf("http://allowed.test:%d/", f.canary.addr.Port()))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 10*time.Second, 50*time.Millisecond)
}

// TestCloseEndsTunnels: closing the session closes the tunnels it
// carried once the grace is over, so a command's connections end with
// the command even when a client is still there.
func TestCloseEndsTunnels(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:PORT"}}, false,
		func(c *netproxy.Config) { c.CloseGrace = 100 * time.Millisecond })
	c, err := net.Dial("tcp", f.proxy)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", f.canary.addr.Port())
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	evs := f.sess.Close()
	require.Len(t, evs, 1)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = br.ReadByte()
	require.Error(t, err)
	var ne net.Error
	assert.False(t, errors.As(err, &ne) && ne.Timeout(), "the tunnel was closed, not left open: %v", err)
	_, err = net.DialTimeout("tcp", f.proxy, time.Second)
	assert.Error(t, err, "the listener is closed")
}

// TestAskedLiteralIsGuarded: an approved ask for an IP literal does not
// open a loopback address (nor the host's own): the resolved-address
// guard applies to literals too. The twin names the address in
// network.allow.
func TestAskedLiteralIsGuarded(t *testing.T) {
	f := newFixture(t, policy.HostRules{Unknown: policy.Ask}, true)
	code, body := f.connect(t, "127.0.0.1")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "resolves to 127.0.0.1")
	assert.Contains(t, body, fmt.Sprintf(`add "127.0.0.1:%d"`, f.canary.addr.Port()))
	_, err := f.socks(t, "127.0.0.1")
	require.Error(t, err)
	assert.Zero(t, f.canary.conns.Load())
	assert.Equal(t, int64(1), f.asked.Load(), "it was asked, and approved")

	twin := newFixture(t, policy.HostRules{Allow: []string{"127.0.0.1:PORT"}, Unknown: policy.Ask}, true)
	code, _ = twin.connect(t, "127.0.0.1")
	assert.Equal(t, 200, code)
	assert.Equal(t, int64(1), twin.canary.conns.Load())
	assert.Zero(t, twin.asked.Load())
}

// TestDenyAddressCoversNames: an address or range in network.deny holds
// for every name that resolves into it. The twin has no such entry.
func TestDenyAddressCoversNames(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"*.test", "127.0.0.0/8"}, Deny: []string{"127.0.0.1"}}, false)
	code, body := f.connect(t, "x.test")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, `resolves to 127.0.0.1, which network.deny[0] "127.0.0.1" denies`)
	code, _ = f.httpGet(t, "x.test")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Zero(t, f.canary.conns.Load())

	twin := newFixture(t, policy.HostRules{Allow: []string{"*.test", "127.0.0.0/8"}}, false)
	code, _ = twin.connect(t, "x.test")
	assert.Equal(t, 200, code)
}

// TestConnectReasonPhrase: a refused CONNECT carries the refusal in its
// status line too, where clients that hide the body show it.
func TestConnectReasonPhrase(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test"}}, false)
	c, err := net.Dial("tcp", f.proxy)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT nope.test:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	assert.Equal(t, 403, resp.StatusCode)
	assert.Contains(t, resp.Status, `403 cordon: nope.test:443 refused (network.unknown`)
	assert.Contains(t, resp.Status, `add "nope.test" to network.allow`)
}

// TestSessionsCappedApart: one command holding every connection its cap
// allows does not lock another command out of the same proxy.
func TestSessionsCappedApart(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:PORT"}}, false, func(c *netproxy.Config) { c.MaxConns = 2 })
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", f.proxy)
		require.NoError(t, err)
		held = append(held, c)
		fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", f.canary.addr.Port())
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := policy.Coding.Policy()
	p.Network = policy.NetworkAllowList
	p.Hosts = policy.HostRules{Allow: []string{"allowed.test", fmt.Sprintf("127.0.0.1:%d", f.canary.addr.Port())}}
	ck, err := policy.NewChecker(p, t.TempDir(), "")
	require.NoError(t, err)
	other := f.px.Serve(l, netproxy.SessionConfig{Checker: ck})
	defer other.Close()
	g := &fixture{canary: f.canary, proxy: l.Addr().String(), sess: other}
	code, body := g.connect(t, "allowed.test")
	assert.Equal(t, 200, code, "the other session still connects: %s", body)
}

// TestIdleKeepAliveClosed: an idle keep-alive connection does not hold
// its slot for long: it is closed after HandshakeTimeout.
func TestIdleKeepAliveClosed(t *testing.T) {
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:PORT"}}, false, func(c *netproxy.Config) { c.HandshakeTimeout = 300 * time.Millisecond })
	c, err := net.Dial("tcp", f.proxy)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", f.canary.addr.Port())
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = br.ReadByte()
	require.Error(t, err)
	var ne net.Error
	assert.False(t, errors.As(err, &ne) && ne.Timeout(), "the proxy closed the idle connection: %v", err)
}

// TestForwardResolvesOnce: a forwarded HTTP request is connected to the
// addresses the guard checked, not to a second resolution that could
// rebind (a resolver that answers loopback once, then a public address,
// is asked once per request).
func TestForwardResolvesOnce(t *testing.T) {
	var calls atomic.Int64
	f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:PORT"}}, false, func(c *netproxy.Config) {
		c.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			if calls.Add(1) > 1 {
				return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil // would be dialled on a second lookup
			}
			return resolver(ctx, host)
		}
	})
	code, body := f.httpGet(t, "allowed.test")
	assert.Equal(t, 200, code, body)
	assert.Equal(t, int64(1), calls.Load())
	assert.Equal(t, int64(1), f.canary.conns.Load())
}

// byteSink is a loopback TCP server that keeps everything each connection
// sends until it ends.
type byteSink struct {
	addr netip.AddrPort
	got  chan []byte
}

func newSink(t *testing.T) *byteSink {
	t.Helper()
	s := &byteSink{got: make(chan []byte, 100)}
	s.addr = netip.MustParseAddrPort(loopbackServer(t, func(c net.Conn) {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		b, _ := io.ReadAll(c)
		s.got <- b
	}))
	return s
}

// TestCloseDeliversWhatWasSent: a command that writes through a tunnel
// and exits at once, with the session closed right after, loses nothing —
// Close lets the tunnels forward what the client sent (the conformance
// canary once saw 2 of 3 tokens: the last tunnel was closed under its
// bytes). Each protocol is tried many times, since the loss is a race.
func TestCloseDeliversWhatWasSent(t *testing.T) {
	payload := []byte(strings.Repeat("0123456789abcdef", 1<<14)) // 256 KiB: several reads
	for _, proto := range []string{"connect", "socks"} {
		t.Run(proto, func(t *testing.T) {
			sk := newSink(t)
			for i := range 20 {
				f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:" + fmt.Sprint(sk.addr.Port())}}, false)
				target := fmt.Sprintf("allowed.test:%d", sk.addr.Port())
				var c net.Conn
				if proto == "connect" {
					var err error
					c, err = net.Dial("tcp", f.proxy)
					require.NoError(t, err)
					fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", target)
					br := bufio.NewReader(c)
					resp, err := http.ReadResponse(br, nil)
					require.NoError(t, err)
					require.Equal(t, 200, resp.StatusCode)
				} else {
					d, err := xproxy.SOCKS5("tcp", f.proxy, nil, &net.Dialer{Timeout: 10 * time.Second})
					require.NoError(t, err)
					c, err = d.Dial("tcp", target)
					require.NoError(t, err)
				}
				tok := fmt.Sprintf("token-%s-%d", proto, i)
				_, err := c.Write(append(append([]byte(nil), payload...), tok...))
				require.NoError(t, err)
				require.NoError(t, c.Close())
				f.sess.Close()
				select {
				case b := <-sk.got:
					require.Equal(t, len(payload)+len(tok), len(b), "run %d: the upstream received every byte", i)
					require.True(t, strings.HasSuffix(string(b), tok), "run %d", i)
				case <-time.After(20 * time.Second):
					t.Fatalf("run %d: the upstream saw no connection end", i)
				}
			}
		})
	}
}

// TestCloseDeliversPipelinedRequest: a plain-HTTP request the client
// sends and hangs up on, without waiting for the answer, still reaches
// the upstream although the session is closed at once — it waits in the
// listener's queue, and the request outlives the client.
func TestCloseDeliversPipelinedRequest(t *testing.T) {
	for i := range 20 {
		f := newFixture(t, policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:PORT"}}, false)
		before := f.canary.conns.Load()
		c, err := net.Dial("tcp", f.proxy)
		require.NoError(t, err)
		fmt.Fprintf(c, "GET http://allowed.test:%d/pipelined-%d HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", f.canary.addr.Port(), i)
		require.NoError(t, c.Close())
		f.sess.Close()
		assert.Equal(t, before+1, f.canary.conns.Load(), "run %d: the request reached the upstream before Close returned", i)
	}
}
