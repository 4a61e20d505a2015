//go:build unix

package conformance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/conformance/internal/canary"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// testResolve resolves names under .test (RFC 2606: never in DNS) to
// 127.0.0.1 for the executors' allow-list proxies; other names go to the
// system's resolver.
func testResolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".test") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func proxyCases() []*caseDef {
	iso := func(id, title, verified string, run func(*caseRun)) *caseDef {
		return &caseDef{CaseInfo: CaseInfo{ID: id, Title: title, Layer: Network, Control: executor.ControlNetAllowList, Isolation: true, Expected: Denied, Verified: verified}, probe: true, run: run}
	}
	allowed := func(id, title, verified string, run func(*caseRun)) *caseDef {
		d := iso(id, title, verified, run)
		d.Expected = Allowed
		return d
	}
	return []*caseDef{
		allowed("net-proxy-allowed", "network allow-list: an allowed name is reached through the proxy by HTTP, CONNECT and SOCKS5",
			"the policy allows allowed.test (which the proxy resolves to 127.0.0.1) and 127.0.0.1:PORT; the probe fetches http://allowed.test:PORT/TOKEN through HTTP_PROXY, tunnels with CONNECT through HTTPS_PROXY and with SOCKS5 through ALL_PROXY, sending a token each; the host's TCP canary receives all three tokens",
			caseProxyAllowed),
		iso("net-proxy-denied", "network allow-list: a denied name and an unknown name are refused by the proxy",
			"the policy allows allowed.test and 127.0.0.1:PORT and denies denied.test; the probe asks for denied.test:PORT and unknown.test:PORT by HTTP, CONNECT and SOCKS5; the canary receives nothing. Twin: a policy that allows both names",
			caseProxyDenied),
		iso("net-proxy-bypass", "network allow-list: a direct connection that skips the proxy fails",
			"under an allow-list that allows the canary (allowed.test, 127.0.0.1:PORT), the probe connects straight to 127.0.0.1:PORT by TCP and sends a UDP datagram to a UDP canary, without the proxy; neither canary receives anything. Twin: network full",
			caseProxyBypass),
		iso("net-proxy-port-elsewhere", "network allow-list: another loopback address on the proxy's own port is unreachable",
			fmt.Sprintf("the host listens on 127.0.0.2:%d, the proxy's port; the probe connects there directly; the canary counts nothing (a port-only rule would let it through). Twin: network full", policyderive.ProxyPort),
			caseProxyPortElsewhere),
		iso("net-proxy-dns", "network allow-list: DNS (UDP and TCP port 53) cannot leave the sandbox",
			"the host listens on 127.0.0.1:53 by UDP and TCP (root only); the probe sends a datagram and connects; neither canary counts anything. Twin: network full",
			caseProxyDNS),
		iso("net-proxy-rebinding", "network allow-list: an allowed name that resolves to loopback is refused unless the address is allowed",
			"the policy allows rebind.test, which resolves to 127.0.0.1, but no address entry names 127.0.0.1; the probe asks for rebind.test:PORT by HTTP, CONNECT and SOCKS5; the canary receives nothing. Twin: the policy also allows 127.0.0.1:PORT",
			caseProxyRebinding),
		allowed("net-proxy-ask", "network allow-list: with unknown: ask the approver is asked once, and its yes opens the host",
			"unknown: ask; the approver (Request.AskNetwork) answers yes for ask-yes.test and no for ask-no.test; the probe connects twice to each through the proxy: the canary receives the two ask-yes.test tokens and none of ask-no.test, and the approver was asked once per host",
			caseProxyAsk),
	}
}

// allowList is coding mode with the network allow-list.
func (c *caseRun) allowList(rules policy.HostRules) *policy.Policy {
	p := c.coding()
	p.Network = policy.NetworkAllowList
	p.Hosts = rules
	return p
}

// tcpCanary listens on 127.0.0.1 for one case.
func (c *caseRun) tcpCanary() (*canary.Canary, string) {
	cn, err := canary.TCP()
	if err != nil {
		c.setupf("fixture: a TCP canary: %v", err)
	}
	_, port, _ := net.SplitHostPort(cn.Addr())
	return cn, port
}

// viaProxy returns probe invocations reaching host:port by each proxy
// protocol, one token each.
func viaProxy(host, port, label string) ([][]string, []string) {
	var inv [][]string
	var toks []string
	for _, a := range []string{"proxy-http", "proxy-connect", "proxy-socks"} {
		t := token(label)
		inv = append(inv, []string{a, net.JoinHostPort(host, port), t})
		toks = append(toks, t)
	}
	return inv, toks
}

// waitFor2s is how long to give a canary: a moment, longer when the probe
// claims success.
func waitFor2s(res *executor.Result) time.Duration {
	for _, r := range records(res) {
		if r.OK {
			return 2 * time.Second
		}
	}
	return 300 * time.Millisecond
}

// tokensReceived: the action took effect when the canary received want
// of the tokens (any of them when want is 0).
func tokensReceived(cn *canary.Canary, toks []string, want int) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		before := len(cn.Payloads())
		return func(res *executor.Result) (bool, string) {
			cn.WaitHits(before+max(want, 1), waitFor2s(res))
			got := 0
			for _, p := range cn.Payloads()[before:] {
				for _, t := range toks {
					if strings.Contains(p, t) {
						got++
						break
					}
				}
			}
			seen := fmt.Sprintf("the canary %s received %d of %d tokens", cn.Addr(), got, len(toks))
			if want == 0 {
				return got > 0, seen
			}
			return got >= want, seen
		}
	}
}

func caseProxyAllowed(c *caseRun) {
	cn, port := c.tcpCanary()
	defer cn.Close()
	inv, toks := viaProxy("allowed.test", port, "allowed")
	p := c.allowList(policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:" + port}})
	c.permit(tokensReceived(cn, toks, len(toks)), c.act(c.probes(inv...), p))
}

func caseProxyDenied(c *caseRun) {
	cn, port := c.tcpCanary()
	defer cn.Close()
	inv, toks := viaProxy("denied.test", port, "denied")
	inv2, toks2 := viaProxy("unknown.test", port, "unknown")
	inv, toks = append(inv, inv2...), append(toks, toks2...)
	cmd := c.probes(inv...)
	p := c.allowList(policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:" + port}, Deny: []string{"denied.test"}})
	twin := c.allowList(policy.HostRules{Allow: []string{"denied.test", "unknown.test", "127.0.0.1:" + port}})
	c.isolate(tokensReceived(cn, toks, 0), c.act(cmd, p), c.twinPolicy("both names allowed", cmd, twin))
}

func caseProxyBypass(c *caseRun) {
	cn, port := c.tcpCanary()
	defer cn.Close()
	udp, err := canary.UDP()
	if err != nil {
		c.setupf("fixture: a UDP canary: %v", err)
	}
	defer udp.Close()
	tt, ut := token("bypass"), token("bypass")
	cmd := c.probes([]string{"tcp-connect", cn.Addr(), tt}, []string{"udp-send", udp.Addr(), ut})
	p := c.allowList(policy.HostRules{Allow: []string{"allowed.test", "127.0.0.1:" + port}})
	obs := func(c *caseRun) func(*executor.Result) (bool, string) {
		a, b := tokensReceived(cn, []string{tt}, 0)(c), canaryHit(udp)(c)
		return func(res *executor.Result) (bool, string) {
			ta, sa := a(res)
			tb, sb := b(res)
			return ta || tb, sa + "; " + sb
		}
	}
	c.isolate(obs, c.act(cmd, p), c.twinPolicy("network full", cmd, c.fullNetwork()))
}

func caseProxyPortElsewhere(c *caseRun) {
	// The address is fixed, so suites running at the same time (the
	// test packages of several backends) take turns: a busy port is
	// waited for, briefly, before the case gives up as unsupported.
	addr := net.JoinHostPort("127.0.0.2", strconv.Itoa(policyderive.ProxyPort))
	cn, err := canary.TCPAt(addr)
	for deadline := time.Now().Add(90 * time.Second); errors.Is(err, syscall.EADDRINUSE) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		cn, err = canary.TCPAt(addr)
	}
	if err != nil {
		c.unsupportedf("listening on 127.0.0.2:%d on the host: %v", policyderive.ProxyPort, err)
	}
	defer cn.Close()
	cmd := c.probeCmd("tcp-connect", cn.Addr(), token("port"))
	p := c.allowList(policy.HostRules{Allow: []string{"allowed.test"}})
	c.isolate(canaryHit(cn), c.act(cmd, p), c.twinPolicy("network full", cmd, c.fullNetwork()))
}

func caseProxyDNS(c *caseRun) {
	tcp, err := canary.TCPAt("127.0.0.1:53")
	if err != nil {
		c.unsupportedf("listening on 127.0.0.1:53 on the host (root only): %v", err)
	}
	defer tcp.Close()
	udp, err := canary.UDPAt("127.0.0.1:53")
	if err != nil {
		c.unsupportedf("listening on 127.0.0.1:53/udp on the host (root only): %v", err)
	}
	defer udp.Close()
	cmd := c.probes([]string{"udp-send", "127.0.0.1:53", token("dns")}, []string{"tcp-connect", "127.0.0.1:53", token("dns")})
	p := c.allowList(policy.HostRules{Allow: []string{"allowed.test"}})
	obs := func(c *caseRun) func(*executor.Result) (bool, string) {
		a, b := canaryHit(udp)(c), canaryHit(tcp)(c)
		return func(res *executor.Result) (bool, string) {
			ta, sa := a(res)
			tb, sb := b(res)
			return ta || tb, sa + "; " + sb
		}
	}
	c.isolate(obs, c.act(cmd, p), c.twinPolicy("network full", cmd, c.fullNetwork()))
}

func caseProxyRebinding(c *caseRun) {
	cn, port := c.tcpCanary()
	defer cn.Close()
	inv, toks := viaProxy("rebind.test", port, "rebind")
	cmd := c.probes(inv...)
	p := c.allowList(policy.HostRules{Allow: []string{"rebind.test"}})
	twin := c.allowList(policy.HostRules{Allow: []string{"rebind.test", "127.0.0.1:" + port}})
	c.isolate(tokensReceived(cn, toks, 0), c.act(cmd, p), c.twinPolicy("the address allowed too", cmd, twin))
}

func caseProxyAsk(c *caseRun) {
	cn, port := c.tcpCanary()
	defer cn.Close()
	var yes, no [2]string
	var inv [][]string
	for i := range 2 {
		yes[i], no[i] = token("askyes"), token("askno")
		inv = append(inv, []string{"proxy-http", net.JoinHostPort("ask-yes.test", port), yes[i]},
			[]string{"proxy-connect", net.JoinHostPort("ask-no.test", port), no[i]})
	}
	var askedYes, askedNo atomic.Int64
	p := c.allowList(policy.HostRules{Allow: []string{"127.0.0.1:" + port}, Unknown: policy.Ask})
	a := c.act(c.probes(inv...), p)
	a.req.AskNetwork = func(_ context.Context, host string, _ uint16) bool {
		switch host {
		case "ask-yes.test":
			askedYes.Add(1)
			return true
		case "ask-no.test":
			askedNo.Add(1)
		}
		return false
	}
	check := tokensReceived(cn, yes[:], 2)(c)
	res := c.perform(a, roleAct)
	took, seen := check(res)
	c.logf("host: %s; the approver was asked %d time(s) for ask-yes.test and %d for ask-no.test", seen, askedYes.Load(), askedNo.Load())
	if len(records(res)) == 0 {
		c.setupf("the probe did not run inside the sandbox (no probe record in its output)")
	}
	noTokens := 0
	for _, pl := range cn.Payloads() {
		for _, t := range no {
			if strings.Contains(pl, t) {
				noTokens++
			}
		}
	}
	proxied := askedYes.Load()+askedNo.Load() > 0
	switch {
	case !took:
		c.end(Denied, "the approved host was not reached")
	case proxied && (askedYes.Load() != 1 || askedNo.Load() != 1):
		c.brokenf("the approver must be asked once per host:port; it was asked %d and %d times", askedYes.Load(), askedNo.Load())
	case proxied && noTokens > 0:
		c.brokenf("the host the approver refused was reached (%d tokens)", noTokens)
	}
	c.end(Allowed, "")
}
