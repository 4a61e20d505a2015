// Package netproxy is the host-side proxy behind the network allow-list
// (policy.NetworkAllowList): the only thing a sandboxed command can reach,
// deciding every connection by the policy.
//
// One port serves three protocols, told apart by the first byte a client
// sends: HTTP forward proxying (absolute-form "http://" requests), HTTP
// CONNECT tunnels (HTTPS and any TCP), and SOCKS5 CONNECT with domain
// names ("socks5h://"), without authentication. There is no TLS
// interception: a tunnel is decided by the host and port the client names.
//
// Each connection is decided by policy.Checker.DecideHost: network.deny,
// then network.allow, then network.unknown (ask goes to the Session's
// Ask, once per host:port for that Session's lifetime). An
// allowed name is then resolved by the proxy itself, and the proxy
// connects to the addresses it checked — never to a name the client
// resolves again — so a name that resolves, or rebinds, to a loopback,
// private (RFC 1918, unique-local, shared 100.64/10), link-local (cloud
// metadata included), multicast or unspecified address, to one of the
// host's own interface addresses (re-read every 10 s), or to a NAT64
// address embedding one of those, is refused unless an address or range
// entry of network.allow names it (the resolved-address guard). An IP
// literal is connected only when an address entry allows it.
//
// A refused HTTP request or CONNECT gets 403 with one line a model can act
// on (for CONNECT also as the status line's reason phrase, since clients
// do not show a failed tunnel's body):
//
//	cordon: example.net:443 refused (network.unknown (not in network.allow)); to allow it, add "example.net" to network.allow in the policy
//	cordon: upload.example.org:443 refused (network.deny[0] "upload.example.org"); the policy denies it: only the user can remove the entry from network.deny
//
// and a refused SOCKS request gets reply code 2 ("connection not allowed
// by ruleset"). Every decision is logged with log/slog and recorded for
// the Session that accepted the connection, so an executor reports the
// decisions each command caused.
//
// Asks are put to the Session's Ask (or Config.Ask) once per host:port per
// Session — asks for the same host:port wait for the first answer, others
// do not wait — so a command that names many unknown hosts causes one
// prompt per host. Answers are never shared between Sessions: an executor
// serves each command in a Session of its own, so an answer for one
// command (or one caller's command) never decides another's.
//
// A hostile client must not exhaust the host process: connections are
// capped per session — per command — (Config.MaxConns) and for the whole
// proxy (16 times that; one proxy serves every command of an executor),
// excess connections are closed at once, an idle keep-alive connection
// is closed after Config.HandshakeTimeout, request headers are limited to 64 KiB and must arrive within
// Config.HandshakeTimeout, a SOCKS handshake likewise, connects time out
// after Config.DialTimeout, and tunnels idle for Config.IdleTimeout are
// closed. Tunnel data is copied through a fixed 32 KiB buffer per
// direction. When the command ends (Session.Close), nothing it sent is
// dropped: connections still queued are accepted, and every tunnel and
// request forwards what the client sent before everything is closed, for
// at most Config.CloseGrace (2 s).
//
// The HTTP side is the standard library's net/http server and
// net/http/httputil.ReverseProxy (hop-by-hop headers removed, no
// X-Forwarded-For added). No maintained Go SOCKS5 server module is served
// here (github.com/things-go/go-socks5 is not; armon/go-socks5 has had no
// release since 2016), so the SOCKS5 handshake — RFC 1928 CONNECT with
// no authentication, about a hundred lines — is written here.
package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/internal/listenq"
	"github.com/cordon-sandbox/cordon/policy"
)

// Defaults for the zero fields of Config.
const (
	DefaultMaxConns         = 256
	DefaultDialTimeout      = 15 * time.Second
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultIdleTimeout      = 5 * time.Minute
	DefaultCloseGrace       = 2 * time.Second
)

// Config configures a Proxy.
type Config struct {
	// Checker decides connections of sessions that bring none.
	Checker *policy.Checker
	// Ask is asked for a host:port the policy answers ask for, for
	// Sessions that bring none; its answer holds for the Session that
	// asked. Nil refuses every ask.
	Ask func(ctx context.Context, host string, port uint16) bool
	// Resolve resolves a host name; nil uses net.DefaultResolver. Tests
	// map test names to loopback addresses with it.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address the proxy checked; nil uses a
	// net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Logger receives one record per decision; nil discards them.
	Logger *slog.Logger
	// MaxConns caps the connections open at once; 0 means
	// DefaultMaxConns.
	MaxConns int
	// DialTimeout, HandshakeTimeout and IdleTimeout; 0 means the
	// defaults.
	DialTimeout, HandshakeTimeout, IdleTimeout time.Duration
	// CloseGrace bounds how long Session.Close lets open connections
	// forward what the command sent before it ended; 0 means
	// DefaultCloseGrace.
	CloseGrace time.Duration
}

// Event is one decision of the proxy.
type Event struct {
	// Time is when the decision was made.
	Time time.Time `json:"time"`
	// Protocol is "http", "connect" or "socks5".
	Protocol string `json:"protocol"`
	// Host and Port are what the client asked for (Host normalised).
	Host string `json:"host"`
	Port uint16 `json:"port"`
	// Decision is allow or deny (an ask is recorded with its answer).
	Decision policy.Decision `json:"decision"`
	// Rule names what decided (see policy.HostVerdict.Rule), or the
	// resolved-address guard.
	Rule string `json:"rule"`
	// Addr is the address connected to, when one was.
	Addr string `json:"addr,omitempty"`
	// Err says why an allowed connection failed.
	Err string `json:"error,omitempty"`
}

// String formats the event for a person: "deny example.net:443 (rule)".
func (e Event) String() string {
	s := fmt.Sprintf("%s %s (%s, %s)", e.Decision, net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), e.Rule, e.Protocol)
	if e.Err != "" {
		s += ": " + e.Err
	}
	return s
}

// Proxy is the allow-list proxy. It is safe for concurrent use.
type Proxy struct {
	cfg Config
	// sem caps the connections of all sessions together; each session
	// has its own cap too, so one command cannot starve the others.
	sem  chan struct{}
	tr   *http.Transport
	self func() map[netip.Addr]bool
}

// totalConnsFactor is how many sessions' worth of connections the proxy
// keeps open at most, all sessions together.
const totalConnsFactor = 16

// askEntry is one host:port's ask: asked once, answered for all.
type askEntry struct {
	once sync.Once
	yes  bool
}

// New returns a proxy deciding by cfg.Checker.
func New(cfg Config) (*Proxy, error) {
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.CloseGrace <= 0 {
		cfg.CloseGrace = DefaultCloseGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.Dial == nil {
		d := &net.Dialer{}
		cfg.Dial = d.DialContext
	}
	p := &Proxy{cfg: cfg, sem: make(chan struct{}, cfg.MaxConns*totalConnsFactor)}
	p.self = cachedFor(10*time.Second, ownAddrs)
	p.tr = &http.Transport{
		DialContext:            p.dialChecked,
		DisableKeepAlives:      true,
		ResponseHeaderTimeout:  cfg.IdleTimeout,
		MaxResponseHeaderBytes: 1 << 20,
	}
	return p, nil
}

// ownAddrs returns the host's own interface addresses.
func ownAddrs() map[netip.Addr]bool {
	m := map[netip.Addr]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return m
	}
	for _, a := range addrs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			m[pfx.Addr().Unmap()] = true
		}
	}
	return m
}

// cachedFor returns f's value, computed again when older than ttl (the
// host's addresses change: an interface comes up, DHCP renews).
func cachedFor[T any](ttl time.Duration, f func() T) func() T {
	var (
		mu   sync.Mutex
		v    T
		when time.Time
	)
	return func() T {
		mu.Lock()
		defer mu.Unlock()
		if when.IsZero() || time.Since(when) > ttl {
			v, when = f(), time.Now()
		}
		return v
	}
}

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
	// nat64 are the NAT64 prefixes (RFC 6052 well-known, RFC 8215
	// local-use) whose last 32 bits are an IPv4 address a translator
	// would reach.
	nat64 = []netip.Prefix{netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("64:ff9b:1::/48")}
)

// special reports whether a resolved address is one a name may reach only
// when network.allow names the address: loopback, private, link-local,
// multicast, unspecified, shared address space, the host's own, or a
// NAT64 address embedding one of those.
func (p *Proxy) special(a netip.Addr) bool {
	a = a.Unmap()
	for _, pfx := range nat64 {
		if pfx.Contains(a) {
			b := a.As16()
			if p.special(netip.AddrFrom4([4]byte(b[12:16]))) {
				return true
			}
		}
	}
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || sharedSpace.Contains(a) ||
		!a.IsGlobalUnicast() || p.self()[a]
}

// decide judges host:port for s: the policy, then s's approver for an ask.
func (s *Session) decide(ctx context.Context, host string, port uint16) (*policy.HostVerdict, error) {
	sc := s.sc
	if sc.Checker == nil {
		return nil, errors.New("netproxy: no policy checker for this session")
	}
	v, err := sc.Checker.DecideHost(host, port)
	if err != nil {
		return nil, err
	}
	if v.Decision != policy.Ask {
		return v, nil
	}
	key := net.JoinHostPort(v.Host, strconv.Itoa(int(port)))
	s.askMu.Lock()
	e := s.asked[key]
	if e == nil {
		e = &askEntry{}
		s.asked[key] = e
	}
	s.askMu.Unlock()
	// Only asks for the same host:port wait for one another.
	e.once.Do(func() { e.yes = sc.Ask != nil && sc.Ask(ctx, v.Host, port) })
	if e.yes {
		v.Decision, v.Rule = policy.Allow, v.Rule+", approved for this session"
	} else {
		v.Decision, v.Rule = policy.Deny, v.Rule+", not approved"
	}
	return v, nil
}

// RefusedError reports a connection the proxy refused.
type RefusedError struct {
	Host string
	Port uint16
	// Rule names what refused it.
	Rule string
	// Advice says how the user could allow it.
	Advice string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("cordon: %s refused (%s); %s", net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), e.Rule, e.Advice)
}

// refusal explains a verdict that is not Allow.
func refusal(v *policy.HostVerdict) *RefusedError {
	e := &RefusedError{Host: v.Host, Port: v.Port, Rule: v.Rule}
	entry := v.Host
	if a, err := netip.ParseAddr(v.Host); err == nil {
		entry = netip.AddrPortFrom(a, v.Port).String()
	}
	switch {
	case strings.HasPrefix(v.Rule, "network.deny"):
		e.Advice = "the policy denies it: only the user can remove the entry from network.deny"
	case strings.HasPrefix(v.Rule, "network: none"):
		e.Advice = "the policy's network is none"
	case strings.HasSuffix(v.Rule, "not approved"):
		e.Advice = fmt.Sprintf("the user did not approve it; to allow it, ask the user to add %q to network.allow in the policy", entry)
	default:
		e.Advice = fmt.Sprintf("to allow it, add %q to network.allow in the policy", entry)
	}
	return e
}

// resolve returns the addresses an allowed host may be connected at: an
// IP literal itself, a name's resolved addresses; every address that a
// network.deny entry covers is dropped, and so is every loopback,
// private, link-local or own address no address entry of network.allow
// names (the resolved-address guard) — for a literal too, which an
// approved ask may have allowed.
func (p *Proxy) resolve(ctx context.Context, c *policy.Checker, v *policy.HostVerdict) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(v.Host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if addrs, err = p.cfg.Resolve(ctx, v.Host); err != nil {
			return nil, fmt.Errorf("resolve %s: %w", v.Host, err)
		}
	}
	var ok []netip.Addr
	var refused *RefusedError
	for _, a := range addrs {
		a = a.Unmap()
		if rule, denied := c.DeniesAddress(a, v.Port); denied {
			refused = &RefusedError{Host: v.Host, Port: v.Port, Rule: fmt.Sprintf("resolves to %s, which %s denies", a, rule),
				Advice: "the policy denies it: only the user can remove the entry from network.deny"}
			continue
		}
		if p.special(a) {
			if _, allowed := c.AllowsAddress(a, v.Port); !allowed {
				if refused == nil {
					refused = &RefusedError{Host: v.Host, Port: v.Port,
						Rule:   fmt.Sprintf("resolves to %s, a loopback, private, link-local or own address that no address entry of network.allow names", a),
						Advice: fmt.Sprintf("to allow it, add %q to network.allow in the policy", netip.AddrPortFrom(a, v.Port).String())}
				}
				continue
			}
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 {
		if refused != nil {
			return nil, refused
		}
		return nil, fmt.Errorf("resolve %s: no addresses", v.Host)
	}
	return ok, nil
}

// connect resolves v (with the guard) and dials the checked addresses.
func (p *Proxy) connect(ctx context.Context, c *policy.Checker, v *policy.HostVerdict) (net.Conn, error) {
	addrs, err := p.resolve(ctx, c, v)
	if err != nil {
		return nil, err
	}
	return p.dial(ctx, addrs, v.Port)
}

// dial connects to the checked addresses in order.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port uint16) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	var errs []error
	for _, a := range addrs {
		c, err := p.cfg.Dial(ctx, "tcp", netip.AddrPortFrom(a, port).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

type checkedKey struct{}

// checked are the addresses the handler resolved and checked for an
// allowed request, carried in the forwarded request's context to the
// transport's dialer, which connects to them and nowhere else (no second
// resolution that could rebind).
type checked struct {
	addrs []netip.Addr
	port  uint16
}

// dialChecked is the HTTP transport's dialer.
func (p *Proxy) dialChecked(ctx context.Context, _, _ string) (net.Conn, error) {
	ck, ok := ctx.Value(checkedKey{}).(checked)
	if !ok || len(ck.addrs) == 0 {
		return nil, errors.New("netproxy: dial without checked addresses")
	}
	return p.dial(ctx, ck.addrs, ck.port)
}

// Session is the proxy serving one listener — one command's — and
// recording the decisions made for it.
type Session struct {
	p    *Proxy
	sc   SessionConfig
	l    net.Listener
	srv  *http.Server
	ch   chan net.Conn
	wg   sync.WaitGroup
	mu   sync.Mutex
	evs  []Event
	open map[net.Conn]struct{}
	// sem caps this session's connections (Config.MaxConns).
	sem chan struct{}
	// draining is closed when Close begins: no new connections, the open
	// ones forward what the client sent and end. done is closed when the
	// grace is over and everything is closed.
	draining, done chan struct{}
	// accepted is closed when the accept loop has returned.
	accepted chan struct{}
	// idle receives a value when the last open connection is released.
	idle chan struct{}
	// closeOnce runs Close once.
	closeOnce sync.Once
	// base ends when the session is closed.
	base   context.Context
	cancel context.CancelFunc
	// asked holds this session's asks, per host:port.
	askMu sync.Mutex
	asked map[string]*askEntry
}

// maxEvents bounds the events kept per session; later ones are logged
// only.
const maxEvents = 1000

// SessionConfig is what one session decides by; zero fields fall back to
// the proxy's Config.
type SessionConfig struct {
	// Checker decides this session's connections.
	Checker *policy.Checker
	// Ask is asked for this session's asks (the answer is remembered by
	// the session, per host:port).
	Ask func(ctx context.Context, host string, port uint16) bool
}

// Serve serves l in the background until the Session is closed.
func (p *Proxy) Serve(l net.Listener, sc SessionConfig) *Session {
	if sc.Checker == nil {
		sc.Checker = p.cfg.Checker
	}
	if sc.Ask == nil {
		sc.Ask = p.cfg.Ask
	}
	s := &Session{p: p, l: l, sc: sc, ch: make(chan net.Conn), open: map[net.Conn]struct{}{}, asked: map[string]*askEntry{},
		draining: make(chan struct{}), done: make(chan struct{}), accepted: make(chan struct{}), idle: make(chan struct{}, 1), sem: make(chan struct{}, p.cfg.MaxConns)}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: p.cfg.HandshakeTimeout,
		// An idle keep-alive connection holds a slot: close it soon.
		IdleTimeout:    p.cfg.HandshakeTimeout,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(p.cfg.Logger.Handler(), slog.LevelDebug),
		ConnState: func(c net.Conn, st http.ConnState) {
			if st == http.StateClosed {
				s.release(c)
			}
		},
	}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(chanListener{s})
	}()
	go func() {
		defer s.wg.Done()
		defer close(s.accepted)
		s.accept()
	}()
	return s
}

func (s *Session) record(e Event) {
	e.Time = time.Now()
	lvl := slog.LevelInfo
	if e.Decision != policy.Allow || e.Err != "" {
		lvl = slog.LevelWarn
	}
	s.p.cfg.Logger.Log(context.Background(), lvl, "netproxy decision", "protocol", e.Protocol, "host", e.Host, "port", e.Port,
		"decision", e.Decision.String(), "rule", e.Rule, "addr", e.Addr, "error", e.Err)
	s.mu.Lock()
	if len(s.evs) < maxEvents {
		s.evs = append(s.evs, e)
	}
	s.mu.Unlock()
}

// Events returns the decisions recorded so far.
func (s *Session) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.evs...)
}

// Close stops serving and returns the decisions. It takes no new
// connection, but first accepts those the command opened before it ended
// (they wait in the listener's queue) and lets every open connection
// forward to its upstream what the client sent — a command that writes
// and exits at once loses nothing — for at most Config.CloseGrace; then
// it closes every connection and waits for its goroutines. A tunnel whose
// client has finished sending ends at once: the upstream's answer has
// nobody left to read it.
func (s *Session) Close() []Event {
	s.closeOnce.Do(func() {
		close(s.draining)
		// Accept what is queued: a deadline a moment away lets the accept
		// loop take the queued connections, then time out and return.
		// With nothing queued (the usual case) there is nothing to wait
		// for.
		if dl, ok := s.l.(interface{ SetDeadline(time.Time) error }); !ok || !listenq.Queued(s.l) || dl.SetDeadline(time.Now().Add(acceptSweep)) != nil {
			_ = s.l.Close()
		}
		grace := time.NewTimer(s.p.cfg.CloseGrace)
		defer grace.Stop()
		select {
		case <-s.accepted:
		case <-grace.C:
		}
		_ = s.l.Close()
	wait:
		for {
			s.mu.Lock()
			n := len(s.open)
			s.mu.Unlock()
			if n == 0 {
				break
			}
			select {
			case <-s.idle:
			case <-grace.C:
				break wait
			}
		}
		close(s.done)
		s.cancel()
		_ = s.srv.Close()
		s.mu.Lock()
		for c := range s.open {
			_ = c.Close()
		}
		s.mu.Unlock()
	})
	s.wg.Wait()
	return s.Events()
}

// acceptSweep is how long Close keeps accepting: connections the command
// opened are already queued (connect returns once the kernel queued
// them), so the sweep only has to outlast the accept calls that take them.
const acceptSweep = 2 * time.Millisecond

func (s *Session) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return false
	default:
	}
	s.open[c] = struct{}{}
	return true
}

func (s *Session) release(c net.Conn) {
	s.mu.Lock()
	_, ok := s.open[c]
	delete(s.open, c)
	if ok && len(s.open) == 0 {
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
	if ok {
		<-s.sem
		<-s.p.sem
	}
}

func (s *Session) accept() {
	for {
		c, err := s.l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				select {
				case <-s.draining:
					return // the queue is swept
				default:
					continue
				}
			}
			return
		}
		if !s.acquire() {
			_ = c.Close()
			continue
		}
		pc := &peekConn{Conn: c, r: bufio.NewReaderSize(c, 4096)}
		if !s.track(pc) {
			<-s.sem
			<-s.p.sem
			_ = c.Close()
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.sniff(pc)
		}()
	}
}

// acquire takes a slot of the session's and of the proxy's connection
// caps, or reports that one is full.
func (s *Session) acquire() bool {
	select {
	case s.sem <- struct{}{}:
	default:
		s.p.cfg.Logger.Warn("netproxy: the command's connection limit is reached; connection closed", "max", s.p.cfg.MaxConns)
		return false
	}
	select {
	case s.p.sem <- struct{}{}:
		return true
	default:
		<-s.sem
		s.p.cfg.Logger.Warn("netproxy: the proxy's connection limit is reached; connection closed", "max", cap(s.p.sem))
		return false
	}
}

// sniff tells SOCKS5 (first byte 5) from HTTP and hands the connection on.
func (s *Session) sniff(c *peekConn) {
	_ = c.SetReadDeadline(time.Now().Add(s.p.cfg.HandshakeTimeout))
	b, err := c.r.Peek(1)
	if err != nil {
		s.closeConn(c)
		return
	}
	if b[0] == 5 {
		s.socks(c)
		s.closeConn(c)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	select {
	case s.ch <- c:
	case <-s.done:
		s.closeConn(c)
	}
}

func (s *Session) closeConn(c net.Conn) {
	_ = c.Close()
	s.release(c)
}

// peekConn is a connection whose first bytes were read into r.
type peekConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite half-closes the connection where the transport can.
func (c *peekConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// chanListener hands sniffed HTTP connections to the http.Server.
type chanListener struct{ s *Session }

func (l chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.s.ch:
		return c, nil
	case <-l.s.done:
		return nil, net.ErrClosed
	}
}
func (l chanListener) Close() error   { return nil }
func (l chanListener) Addr() net.Addr { return l.s.l.Addr() }

func splitPort(hostport, defPort string) (string, uint16, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defPort
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("invalid port in %q", hostport)
	}
	return host, uint16(n), nil
}

func (s *Session) serveHTTP(w http.ResponseWriter, r *http.Request) {
	proto := "http"
	var hostport, defPort string
	switch {
	case r.Method == http.MethodConnect:
		proto, hostport, defPort = "connect", r.Host, ""
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		hostport, defPort = r.URL.Host, "80"
	default:
		http.Error(w, "cordon: this is a forward proxy: send an absolute-form http:// request, or CONNECT host:port (for https)", http.StatusBadRequest)
		return
	}
	host, port, err := splitPort(hostport, defPort)
	if err != nil {
		http.Error(w, "cordon: "+err.Error(), http.StatusBadRequest)
		return
	}
	v, err := s.decide(r.Context(), host, port)
	if err != nil {
		http.Error(w, "cordon: "+err.Error(), http.StatusBadRequest)
		return
	}
	ev := Event{Protocol: proto, Host: v.Host, Port: port, Decision: v.Decision, Rule: v.Rule}
	if v.Decision != policy.Allow {
		s.record(ev)
		s.forbid(w, proto, refusal(v))
		return
	}
	if proto == "http" {
		s.forward(w, r, v, ev)
		return
	}
	up, err := s.p.connect(r.Context(), s.sc.Checker, v)
	if err != nil {
		s.refuseOrFail(w, ev, err)
		return
	}
	ev.Addr = up.RemoteAddr().String()
	s.record(ev)
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "cordon: cannot tunnel over this connection", http.StatusInternalServerError)
		return
	}
	c, rw, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	// The hijacked connection is the one accept tracked; the server no
	// longer closes it.
	defer s.closeConn(c)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = up.Close()
		return
	}
	var client io.Reader = c
	if n := rw.Reader.Buffered(); n > 0 {
		b, _ := rw.Reader.Peek(n)
		client = io.MultiReader(bytes.NewReader(bytes.Clone(b)), c)
	}
	s.pipe(c, client, up)
}

// forbid answers 403 with the refusal as the body — and, for CONNECT,
// whose body clients do not show, as the status line's reason phrase too
// (Python's "Tunnel connection failed: 403 ..." prints it).
func (s *Session) forbid(w http.ResponseWriter, proto string, re *RefusedError) {
	msg := re.Error()
	if proto == "connect" {
		if hj, ok := w.(http.Hijacker); ok {
			if c, rw, err := hj.Hijack(); err == nil {
				defer s.closeConn(c)
				phrase := strings.Map(func(r rune) rune {
					if r < 0x20 || r == 0x7f {
						return ' '
					}
					return r
				}, msg)
				fmt.Fprintf(rw, "HTTP/1.1 403 %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n", phrase, len(msg)+1, msg)
				_ = rw.Flush()
				return
			}
		}
	}
	http.Error(w, msg, http.StatusForbidden)
}

// refuseOrFail answers an allowed request whose connection failed: 403
// when the resolved-address guard refused it, else 502.
func (s *Session) refuseOrFail(w http.ResponseWriter, ev Event, err error) {
	var re *RefusedError
	if errors.As(err, &re) {
		ev.Decision, ev.Rule = policy.Deny, re.Rule
		s.record(ev)
		s.forbid(w, ev.Protocol, re)
		return
	}
	ev.Err = err.Error()
	s.record(ev)
	http.Error(w, "cordon: "+net.JoinHostPort(ev.Host, strconv.Itoa(int(ev.Port)))+" allowed, but the connection failed: "+err.Error(), http.StatusBadGateway)
}

func (s *Session) forward(w http.ResponseWriter, r *http.Request, v *policy.HostVerdict, ev Event) {
	// Resolve and check before the transport dials, so a guard refusal is
	// a 403 rather than a transport error.
	addrs, err := s.p.resolve(r.Context(), s.sc.Checker, v)
	if err != nil {
		s.refuseOrFail(w, ev, err)
		return
	}
	ev.Addr = netip.AddrPortFrom(addrs[0], v.Port).String()
	s.record(ev)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.Host
		},
		Transport: s.p.tr,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "cordon: "+ev.Host+" allowed, but the request failed: "+err.Error(), http.StatusBadGateway)
		},
		ErrorLog: slog.NewLogLogger(s.p.cfg.Logger.Handler(), slog.LevelDebug),
	}
	// The request outlives a client that hangs up without waiting for the
	// answer (it was sent; the upstream receives it) but not the session.
	ctx, stop := context.WithCancel(context.WithoutCancel(r.Context()))
	defer stop()
	defer context.AfterFunc(s.base, stop)()
	rp.ServeHTTP(w, r.WithContext(context.WithValue(ctx, checkedKey{}, checked{addrs, v.Port})))
}

// pipe copies both ways until both sides end or one is idle for
// IdleTimeout; once the session drains, it ends as soon as the client has
// finished sending.
func (s *Session) pipe(client net.Conn, clientR io.Reader, up net.Conn) {
	idle := s.p.cfg.IdleTimeout
	copyOne := func(dst net.Conn, src io.Reader, srcConn net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			_ = srcConn.SetReadDeadline(time.Now().Add(idle))
			n, err := src.Read(buf)
			if n > 0 {
				_ = dst.SetWriteDeadline(time.Now().Add(idle))
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	sent, answered := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sent)
		copyOne(up, clientR, client)
	}()
	go func() {
		defer close(answered)
		copyOne(client, up, up)
	}()
	select {
	case <-sent:
		select {
		case <-answered:
		case <-s.draining:
		}
	case <-answered:
		select {
		case <-sent:
		case <-s.done:
		}
	}
	// Closing up ends the copy that reads it; once done, Close has closed
	// the client, which ends the other.
	_ = up.Close()
	<-answered
	<-sent
}

// Addresses returns the addresses the proxy would connect to for an
// allowed verdict v of c: an IP literal itself, a name's resolved
// addresses that pass the resolved-address guard; a *RefusedError when
// the guard refuses every address.
func (p *Proxy) Addresses(ctx context.Context, c *policy.Checker, v *policy.HostVerdict) ([]netip.Addr, error) {
	return p.resolve(ctx, c, v)
}
