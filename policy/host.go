package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// HostRules is the network allow-list, used when Policy.Network is
// NetworkAllowList: which hosts commands may reach through the proxy.
//
// An entry is an exact host name ("example.com"), a subdomain wildcard
// ("*.example.org" matches a.example.org and a.b.example.org, not
// example.org), an IP address ("127.0.0.1", "::1") or a CIDR range
// ("10.0.0.0/8", "fd00::/8"), optionally followed by ":PORT" (IPv6
// addresses with a port in brackets: "[::1]:443"; ranges take no port).
// Names are compared case-insensitively after IDNA (punycode)
// normalisation, with a trailing dot removed.
type HostRules struct {
	// Allow lists the hosts commands may reach.
	Allow []string `yaml:"allow,omitempty" json:"allow,omitempty"`
	// Deny lists hosts refused even when Allow matches; it is checked first.
	Deny []string `yaml:"deny,omitempty" json:"deny,omitempty"`
	// Unknown decides a host neither list names: Deny (the zero value) or
	// Ask (the workspace's approver is asked, once per host:port per
	// command; an approver may remember answers for longer, as cordon
	// mcp's "allow for this session" does).
	Unknown Decision `yaml:"unknown,omitempty" json:"unknown,omitempty"`
}

// Clone returns a deep copy of r.
func (r HostRules) Clone() HostRules {
	return HostRules{Allow: append([]string(nil), r.Allow...), Deny: append([]string(nil), r.Deny...), Unknown: r.Unknown}
}

// HostPattern is one compiled entry of HostRules.
type HostPattern struct {
	// Name is the normalised host name ("" for an address or range).
	Name string
	// Wildcard is set for "*.name": subdomains of Name only.
	Wildcard bool
	// Prefix is the address or range (invalid for a name). A single
	// address is a full-length prefix.
	Prefix netip.Prefix
	// Port limits the entry to one port; 0 means any port.
	Port uint16
}

// Errors wrapped by *HostError.
var (
	// ErrHostSyntax reports a host entry that is neither a name, an
	// address nor a range.
	ErrHostSyntax = errors.New("not a host name, IP address or CIDR range")
	// ErrHostPort reports a port that is not 1-65535, or a port on a range.
	ErrHostPort = errors.New("invalid port")
)

// HostError reports a host entry or a host that cannot be used. List and
// Index locate the entry in the policy ("network.allow", 2); they are
// empty for a host being judged.
type HostError struct {
	List  string
	Index int
	Value string
	Err   error
}

func (e *HostError) Error() string {
	if e.List != "" {
		return fmt.Sprintf("%s[%d] %q: %v", e.List, e.Index, e.Value, e.Err)
	}
	return fmt.Sprintf("host %q: %v", e.Value, e.Err)
}

// Unwrap returns the cause.
func (e *HostError) Unwrap() error { return e.Err }

// hostProfile is IDNA's lookup profile (UTS #46 mapping, STD3 letters,
// digits and hyphens, the Bidi rule) with DNS lengths checked, so empty
// labels ("a..b") and over-long names are errors.
var hostProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.VerifyDNSLength(true))

// NormalizeHost returns the canonical form of a host name or address: an
// address in its standard text form (IPv4-mapped IPv6 unmapped), a name
// lower-cased, without a trailing dot, in IDNA ASCII (punycode) form.
func NormalizeHost(host string) (string, error) {
	h := strings.TrimSuffix(host, ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", &HostError{Value: host, Err: ErrHostSyntax}
		}
		return a.Unmap().String(), nil
	}
	if h == "" || !utf8.ValidString(h) || strings.HasSuffix(h, ".") || strings.ContainsAny(h, "\x00/ \t\r\n:[]@") {
		return "", &HostError{Value: host, Err: ErrHostSyntax}
	}
	a, err := hostProfile.ToASCII(h)
	if err == nil {
		// The ASCII form must be a fixed point, so that a name and its
		// normalised form are one name.
		var again string
		if again, err = hostProfile.ToASCII(a); err == nil && again != a {
			err = fmt.Errorf("%q normalises to %q", a, again)
		}
	}
	if err != nil {
		return "", &HostError{Value: host, Err: fmt.Errorf("%w: %v", ErrHostSyntax, err)}
	}
	return strings.ToLower(a), nil
}

// ParseHostPattern compiles one HostRules entry.
func ParseHostPattern(s string) (HostPattern, error) {
	bad := func(err error) (HostPattern, error) { return HostPattern{}, &HostError{Value: s, Err: err} }
	if pfx, err := netip.ParsePrefix(s); err == nil {
		if pfx.Addr().Zone() != "" {
			return bad(ErrHostSyntax)
		}
		return HostPattern{Prefix: pfx.Masked()}, nil
	}
	host, port := s, uint16(0)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		host, port = ap.Addr().String(), ap.Port()
		if port == 0 {
			return bad(ErrHostPort)
		}
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 && strings.Count(s, ":") == 1 {
		n, err := strconv.ParseUint(s[i+1:], 10, 16)
		if err != nil || n == 0 {
			return bad(ErrHostPort)
		}
		if strings.Contains(s[:i], "/") {
			return bad(ErrHostPort)
		}
		host, port = s[:i], uint16(n)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return bad(ErrHostSyntax)
		}
		a = a.Unmap()
		return HostPattern{Prefix: netip.PrefixFrom(a, a.BitLen()), Port: port}, nil
	}
	wild := strings.HasPrefix(host, "*.")
	if wild {
		host = host[2:]
	}
	if strings.Contains(host, "*") {
		return bad(ErrHostSyntax)
	}
	name, err := NormalizeHost(host)
	if err != nil {
		return bad(errors.Unwrap(err))
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return bad(ErrHostSyntax) // "*.1.2.3.4"
	}
	return HostPattern{Name: name, Wildcard: wild, Port: port}, nil
}

// MatchHost reports whether the pattern covers host (normalised, see
// NormalizeHost) on port. A name pattern matches names only, an address
// pattern addresses only.
func (hp HostPattern) MatchHost(host string, port uint16) bool {
	if hp.Port != 0 && hp.Port != port {
		return false
	}
	if hp.Name == "" {
		a, err := netip.ParseAddr(host)
		return err == nil && hp.Prefix.Contains(a.Unmap())
	}
	if hp.Wildcard {
		return strings.HasSuffix(host, "."+hp.Name)
	}
	return host == hp.Name
}

// MatchAddr reports whether the pattern names addr explicitly: an address
// or range entry containing it (on port, when the entry has one).
func (hp HostPattern) MatchAddr(addr netip.Addr, port uint16) bool {
	if hp.Name != "" || (hp.Port != 0 && hp.Port != port) {
		return false
	}
	return hp.Prefix.Contains(addr.Unmap())
}

// HostVerdict is the decision for one host and port.
type HostVerdict struct {
	// Host is the normalised host.
	Host string `json:"host"`
	// Port is the destination port.
	Port uint16 `json:"port"`
	// Decision is Allow, Ask or Deny.
	Decision Decision `json:"decision"`
	// Rule names what decided: `network.allow[2] "*.example.org"`,
	// `network.unknown`, `network: none`, `network: full`.
	Rule string `json:"rule"`
}

type hostRule struct {
	source string
	pat    HostPattern
}

func compileHostRules(r HostRules) (allow, deny []hostRule, err error) {
	var errs []error
	for _, l := range []struct {
		name string
		list []string
		out  *[]hostRule
	}{{"network.deny", r.Deny, &deny}, {"network.allow", r.Allow, &allow}} {
		for i, s := range l.list {
			hp, err := ParseHostPattern(s)
			if err != nil {
				var he *HostError
				if errors.As(err, &he) {
					he.List, he.Index = l.name, i
				}
				errs = append(errs, err)
				continue
			}
			*l.out = append(*l.out, hostRule{source: fmt.Sprintf("%s[%d] %q", l.name, i, s), pat: hp})
		}
	}
	return allow, deny, errors.Join(errs...)
}

// DecideHost judges a connection to host:port by the policy's network
// setting: with NetworkNone every host is denied, with NetworkFull every
// host is allowed, and with NetworkAllowList network.deny is tried first,
// then network.allow, and network.unknown decides the rest. The host is a
// name or an IP address; it is normalised first (a malformed host is a
// *HostError).
func (c *Checker) DecideHost(host string, port uint16) (*HostVerdict, error) {
	h, err := NormalizeHost(host)
	if err != nil {
		return nil, err
	}
	v := &HostVerdict{Host: h, Port: port}
	switch c.p.Network {
	case NetworkNone:
		v.Decision, v.Rule = Deny, "network: none"
		return v, nil
	case NetworkFull:
		v.Decision, v.Rule = Allow, "network: full"
		return v, nil
	}
	for _, r := range c.hostDeny {
		if r.pat.MatchHost(h, port) {
			v.Decision, v.Rule = Deny, r.source
			return v, nil
		}
	}
	for _, r := range c.hostAllow {
		if r.pat.MatchHost(h, port) {
			v.Decision, v.Rule = Allow, r.source
			return v, nil
		}
	}
	v.Decision, v.Rule = c.p.Hosts.Unknown, "network.unknown (not in network.allow)"
	return v, nil
}

// DeniesAddress reports whether an address or range entry of
// network.deny covers addr (on port), and which: the proxy applies it to
// the addresses a name resolves to, so a deny of 203.0.113.0/24 holds for
// every name that resolves there.
func (c *Checker) DeniesAddress(addr netip.Addr, port uint16) (string, bool) {
	if c.p.Network != NetworkAllowList {
		return "", false
	}
	for _, r := range c.hostDeny {
		if r.pat.MatchAddr(addr, port) {
			return r.source, true
		}
	}
	return "", false
}

// AllowsAddress reports whether network.allow names addr explicitly (an
// address or range entry, not a name), and which entry; network.deny
// entries naming it win. The proxy's resolved-address guard uses it: a
// name that resolves to a loopback, private, link-local or own address is
// connected only when the address itself is allowed.
func (c *Checker) AllowsAddress(addr netip.Addr, port uint16) (string, bool) {
	if c.p.Network != NetworkAllowList {
		return "", false
	}
	for _, r := range c.hostDeny {
		if r.pat.MatchAddr(addr, port) {
			return r.source, false
		}
	}
	for _, r := range c.hostAllow {
		if r.pat.MatchAddr(addr, port) {
			return r.source, true
		}
	}
	return "", false
}
