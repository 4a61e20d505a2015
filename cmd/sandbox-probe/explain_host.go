package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
)

// defaultExplainPort is the port --host judges when none is given.
const defaultExplainPort = 443

// hostVerdictJSON is explain --host's answer.
type hostVerdictJSON struct {
	Kind     string `json:"kind"` // "host"
	Host     string `json:"host"`
	Port     uint16 `json:"port"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	// Addresses are where the proxy would connect an allowed name (or
	// the address itself).
	Addresses []string `json:"addresses,omitempty"`
	// Refused says why an allowed host would still not be connected: the
	// resolved-address guard, or a failed resolution.
	Refused string `json:"refused,omitempty"`

	decision policy.Decision
}

// splitHostArg parses NAME[:PORT], [V6]:PORT or a bare IPv6 address.
func splitHostArg(s string) (string, uint16, error) {
	if s == "" {
		return "", 0, errors.New("empty host")
	}
	host, port := s, strconv.Itoa(defaultExplainPort)
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else if strings.Count(s, ":") > 1 || strings.HasPrefix(s, "[") {
		host = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	} else if strings.Contains(s, ":") {
		return "", 0, fmt.Errorf("%q: %v", s, err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("%q: invalid port %q", s, port)
	}
	return host, uint16(n), nil
}

// hostVerdictFor judges a connection to arg by c and, for an allowed
// host, resolves it as the proxy would.
func hostVerdictFor(c *policy.Checker, arg string) (*hostVerdictJSON, error) {
	host, port, err := splitHostArg(arg)
	if err != nil {
		return nil, err
	}
	v, err := c.DecideHost(host, port)
	if err != nil {
		return nil, err
	}
	out := &hostVerdictJSON{Kind: "host", Host: v.Host, Port: v.Port, Decision: v.Decision.String(), Rule: v.Rule, decision: v.Decision}
	if v.Decision == policy.Allow && c.Policy().Network == policy.NetworkAllowList {
		px, err := netproxy.New(netproxy.Config{Checker: c})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		addrs, err := px.Addresses(ctx, c, v)
		if err != nil {
			out.Refused = err.Error()
		}
		for _, a := range addrs {
			out.Addresses = append(out.Addresses, a.String())
		}
	}
	return out, nil
}

func (a *app) printHostVerdict(v *hostVerdictJSON) {
	p := newPalette(a.color, a.stdout)
	d := a.paintDecision(p, v.Decision)
	fmt.Fprintf(a.stdout, "%s connect %s\n", d.paint(d.text), net.JoinHostPort(v.Host, strconv.Itoa(int(v.Port))))
	t := &table{}
	t.addText("  rule:", v.Rule)
	if len(v.Addresses) > 0 {
		t.addText("  addresses:", strings.Join(v.Addresses, ", "))
	}
	if v.Refused != "" {
		t.addText("  refused:", v.Refused)
	}
	_ = t.write(a.stdout, p)
}
