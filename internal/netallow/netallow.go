// Package netallow gives the commands of a sandboxing executor the
// network allow-list (policy.NetworkAllowList): each command starts in a
// private network namespace whose only listener is the executor's proxy
// (package netproxy), and its environment points every proxy variable
// there. Nothing else is reachable from the namespace, so a program that
// ignores the proxy variables fails closed. Three ways in:
//
//   - Begin: this process (root) makes the namespace (package netns) and
//     listens on 127.0.0.1:netns.ProxyPort in it; the command starts in
//     it (landlock, bwrap).
//   - Adopt: the command's child made the namespace in its own user
//     namespace and handed its listener over (landlock, not root).
//   - BeginIn: an existing namespace (a docker container's) gets a
//     listener of the command's own on a free port.
//
// One proxy serves every command of an executor (asks are remembered per
// host:port for the executor's lifetime); each command's listener is a
// session of its own, so the decisions its connections caused are its
// own, and its tunnels are closed when it ends.
package netallow

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cordon-sandbox/cordon/internal/netns"
	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
)

// Check reports whether the allow-list can be enforced here: nil, or why
// not (private network namespaces need CAP_SYS_ADMIN).
func Check() error { return netns.Check() }

// Gate is one executor's proxy.
type Gate struct {
	log   *slog.Logger
	once  sync.Once
	proxy *netproxy.Proxy
	err   error
	// mu guards ck, the checker of the last network setting (ckKey).
	mu    sync.Mutex
	ck    *policy.Checker
	ckKey string
}

// NewGate returns a gate whose proxy logs to log (nil: discarded); the
// proxy is made on first use.
func NewGate(log *slog.Logger) *Gate { return &Gate{log: log} }

// Command is one command's namespace and proxy session.
type Command struct {
	// NS is the namespace the command must start in (nil from BeginIn:
	// the command's container is in it already).
	NS   *netns.Namespace
	sess *netproxy.Session
	// port is the proxy's port inside the namespace.
	port int
}

// Begin makes the command's namespace and starts serving its proxy
// listener, deciding by p's network setting; ask answers asks
// (nil refuses them).
func (g *Gate) Begin(p *policy.Policy, ask func(ctx context.Context, host string, port uint16) bool) (*Command, error) {
	ns, err := netns.New()
	if err != nil {
		return nil, fmt.Errorf("network allow-list: %w", err)
	}
	c, err := g.serve(ns, netns.ProxyPort, p, ask)
	if err != nil {
		ns.Close()
		return nil, err
	}
	c.NS = ns
	return c, nil
}

// BeginIn starts serving a proxy listener for one command inside an
// existing namespace (a container's), on a port of its own; the command's
// Env names that port.
func (g *Gate) BeginIn(ns *netns.Namespace, p *policy.Policy, ask func(ctx context.Context, host string, port uint16) bool) (*Command, error) {
	return g.serve(ns, 0, p, ask)
}

// Adopt serves a proxy listener a command's child made in its own
// network namespace (on netns.ProxyPort) and handed over.
func (g *Gate) Adopt(l net.Listener, p *policy.Policy, ask func(ctx context.Context, host string, port uint16) bool) (*Command, error) {
	sess, err := g.session(l, p, ask)
	if err != nil {
		return nil, err
	}
	return &Command{sess: sess, port: netns.ProxyPort}, nil
}

func (g *Gate) session(l net.Listener, p *policy.Policy, ask func(ctx context.Context, host string, port uint16) bool) (*netproxy.Session, error) {
	g.once.Do(func() { g.proxy, g.err = netproxy.New(netproxy.Config{Logger: g.log, Resolve: resolve}) })
	if g.err != nil {
		return nil, g.err
	}
	c, err := g.checker(p)
	if err != nil {
		return nil, err
	}
	return g.proxy.Serve(l, netproxy.SessionConfig{Checker: c, Ask: ask}), nil
}

// checker returns a checker for p's network setting, compiled once per
// distinct setting (the proxy decides by Network and Hosts alone, so the
// rest of the policy, the root and the home need no compiling per
// command). The key is the setting's content, not the pointer, so a
// policy changed in place gets a new checker.
func (g *Gate) checker(p *policy.Policy) (*policy.Checker, error) {
	key := fmt.Sprintf("%d\x00%q\x00%q\x00%d", p.Network, p.Hosts.Allow, p.Hosts.Deny, p.Hosts.Unknown)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ck != nil && g.ckKey == key {
		return g.ck, nil
	}
	net := &policy.Policy{Network: p.Network, Hosts: p.Hosts.Clone(), Secrets: []string{}, Protect: policy.Protect{Disabled: true}}
	c, err := policy.NewChecker(net, "/", "")
	if err != nil {
		return nil, err
	}
	g.ck, g.ckKey = c, key
	return c, nil
}

func (g *Gate) serve(ns *netns.Namespace, port int, p *policy.Policy, ask func(ctx context.Context, host string, port uint16) bool) (*Command, error) {
	l, err := ns.Listen(port)
	if err != nil {
		return nil, fmt.Errorf("network allow-list: the proxy listener: %w", err)
	}
	sess, err := g.session(l, p, ask)
	if err != nil {
		l.Close()
		return nil, err
	}
	return &Command{sess: sess, port: l.Addr().(*net.TCPAddr).Port}, nil
}

// resolver replaces the system's resolver for every gate's proxy when
// set (SetResolver).
var resolver atomic.Pointer[func(ctx context.Context, host string) ([]netip.Addr, error)]

// SetResolver makes every gate's proxy in this process resolve names with
// r (nil: the system's resolver again). The conformance suite uses it to
// map names under .test (RFC 2606: never in DNS) to loopback canaries.
func SetResolver(r func(ctx context.Context, host string) ([]netip.Addr, error)) {
	if r == nil {
		resolver.Store(nil)
		return
	}
	resolver.Store(&r)
}

func resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if r := resolver.Load(); r != nil {
		return (*r)(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// proxyVars are the variables Env sets; each is replaced, in any case.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"}

// Env returns env with every proxy variable pointing at the command's
// proxy (SOCKS with remote name resolution for ALL_PROXY) and NO_PROXY
// empty.
func (c *Command) Env(env []string) []string { return EnvPort(env, c.port) }

// EnvPort is Command.Env for a proxy on 127.0.0.1:port.
func EnvPort(env []string, port int) []string {
	out := make([]string, 0, len(env)+len(proxyVars))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(proxyVars, k) {
			out = append(out, kv)
		}
	}
	hp := "http://127.0.0.1:" + strconv.Itoa(port)
	socks := "socks5h://127.0.0.1:" + strconv.Itoa(port)
	return append(out,
		"HTTP_PROXY="+hp, "HTTPS_PROXY="+hp, "ALL_PROXY="+socks, "NO_PROXY=",
		"http_proxy="+hp, "https_proxy="+hp, "all_proxy="+socks, "no_proxy=")
}

// End closes the command's proxy session (its listener and tunnels) and
// the namespace's descriptor, and returns the decisions made for it.
func (c *Command) End() []netproxy.Event {
	if c == nil {
		return nil
	}
	evs := c.sess.Close()
	if c.NS != nil {
		c.NS.Close()
	}
	return evs
}
