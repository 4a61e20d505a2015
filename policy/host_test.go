package policy

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestParseHostPattern(t *testing.T) {
	tests := []struct {
		in   string
		want HostPattern
	}{
		{"example.com", HostPattern{Name: "example.com"}},
		{"Example.COM.", HostPattern{Name: "example.com"}},
		{"*.example.org", HostPattern{Name: "example.org", Wildcard: true}},
		{"api.example.net:443", HostPattern{Name: "api.example.net", Port: 443}},
		{"bücher.example", HostPattern{Name: "xn--bcher-kva.example"}},
		{"127.0.0.1:8080", HostPattern{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 8080}},
		{"::1", HostPattern{Prefix: netip.MustParsePrefix("::1/128")}},
		{"[::1]:443", HostPattern{Prefix: netip.MustParsePrefix("::1/128"), Port: 443}},
		{"::ffff:10.1.2.3", HostPattern{Prefix: netip.MustParsePrefix("10.1.2.3/32")}},
		{"10.0.0.0/8", HostPattern{Prefix: netip.MustParsePrefix("10.0.0.0/8")}},
		{"10.1.2.3/8", HostPattern{Prefix: netip.MustParsePrefix("10.0.0.0/8")}},
		{"fd00::/8", HostPattern{Prefix: netip.MustParsePrefix("fd00::/8")}},
	}
	for _, tt := range tests {
		got, err := ParseHostPattern(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	for _, bad := range []string{"", "*", "*.", "a*.example.com", "*.*.example.com", "example.com:0", "example.com:65536", "example.com:http",
		"10.0.0.0/8:443", "a b", "exa\x00mple.com", "http://example.com", "user@example.com", "*.10.0.0.1", "fe80::1%eth0", "[::1]:0", "example.com/path", "-bad-.example", "a..b"} {
		_, err := ParseHostPattern(bad)
		var he *HostError
		require.ErrorAs(t, err, &he, "%q", bad)
		assert.Equal(t, bad, he.Value)
	}
}

func TestHostPatternMatch(t *testing.T) {
	must := func(s string) HostPattern {
		hp, err := ParseHostPattern(s)
		require.NoError(t, err)
		return hp
	}
	tests := []struct {
		pat, host string
		port      uint16
		want      bool
	}{
		{"example.com", "example.com", 443, true},
		{"example.com", "www.example.com", 443, false},
		{"example.com", "notexample.com", 443, false},
		{"*.example.org", "a.example.org", 80, true},
		{"*.example.org", "a.b.example.org", 80, true},
		{"*.example.org", "example.org", 80, false},
		{"*.example.org", "evilexample.org", 80, false},
		{"api.example.net:443", "api.example.net", 443, true},
		{"api.example.net:443", "api.example.net", 80, false},
		{"127.0.0.1:8080", "127.0.0.1", 8080, true},
		{"127.0.0.1:8080", "127.0.0.1", 8081, false},
		{"10.0.0.0/8", "10.200.1.1", 22, true},
		{"10.0.0.0/8", "11.0.0.1", 22, false},
		{"10.0.0.0/8", "ten.example", 22, false},
		{"example.com", "93.184.216.34", 443, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, must(tt.pat).MatchHost(tt.host, tt.port), "%s vs %s:%d", tt.pat, tt.host, tt.port)
	}
}

func allowListChecker(t *testing.T, rules HostRules) *Checker {
	t.Helper()
	p := Coding.Policy()
	p.Network = NetworkAllowList
	p.Hosts = rules
	c, err := NewChecker(p, t.TempDir(), "")
	require.NoError(t, err)
	return c
}

func TestDecideHost(t *testing.T) {
	c := allowListChecker(t, HostRules{
		Allow: []string{"example.com", "*.example.org", "api.example.net:443", "127.0.0.1:8080", "10.0.0.0/8"},
		Deny:  []string{"upload.example.org", "10.9.0.0/16"},
	})
	tests := []struct {
		host string
		port uint16
		want Decision
		rule string
	}{
		{"example.com", 443, Allow, `network.allow[0] "example.com"`},
		{"EXAMPLE.com.", 80, Allow, `network.allow[0] "example.com"`},
		{"www.example.org", 443, Allow, `network.allow[1] "*.example.org"`},
		{"upload.example.org", 443, Deny, `network.deny[0] "upload.example.org"`},
		{"UPLOAD.example.org.", 443, Deny, `network.deny[0] "upload.example.org"`},
		{"example.org", 443, Deny, "network.unknown (not in network.allow)"},
		{"api.example.net", 443, Allow, `network.allow[2] "api.example.net:443"`},
		{"api.example.net", 22, Deny, "network.unknown (not in network.allow)"},
		{"127.0.0.1", 8080, Allow, `network.allow[3] "127.0.0.1:8080"`},
		{"10.1.1.1", 5432, Allow, `network.allow[4] "10.0.0.0/8"`},
		{"10.9.1.1", 5432, Deny, `network.deny[1] "10.9.0.0/16"`},
		{"[::ffff:10.1.1.1]", 5432, Allow, `network.allow[4] "10.0.0.0/8"`},
	}
	for _, tt := range tests {
		v, err := c.DecideHost(tt.host, tt.port)
		require.NoError(t, err)
		assert.Equal(t, tt.want, v.Decision, "%s:%d", tt.host, tt.port)
		assert.Equal(t, tt.rule, v.Rule, "%s:%d", tt.host, tt.port)
	}
	_, err := c.DecideHost("a\x00b", 80)
	var he *HostError
	require.ErrorAs(t, err, &he)

	rule, ok := c.AllowsAddress(netip.MustParseAddr("127.0.0.1"), 8080)
	assert.True(t, ok)
	assert.Equal(t, `network.allow[3] "127.0.0.1:8080"`, rule)
	_, ok = c.AllowsAddress(netip.MustParseAddr("127.0.0.1"), 8081)
	assert.False(t, ok, "the port limits the address entry")
	_, ok = c.AllowsAddress(netip.MustParseAddr("10.9.0.1"), 80)
	assert.False(t, ok, "network.deny wins over a range in network.allow")

	ask := allowListChecker(t, HostRules{Unknown: Ask})
	v, err := ask.DecideHost("anything.test", 443)
	require.NoError(t, err)
	assert.Equal(t, Ask, v.Decision)

	for _, n := range []Network{NetworkNone, NetworkFull} {
		p := Coding.Policy()
		p.Network = n
		c, err := NewChecker(p, t.TempDir(), "")
		require.NoError(t, err)
		v, err := c.DecideHost("example.com", 443)
		require.NoError(t, err)
		assert.Equal(t, map[Network]Decision{NetworkNone: Deny, NetworkFull: Allow}[n], v.Decision)
		assert.Equal(t, "network: "+n.String(), v.Rule)
		_, ok := c.AllowsAddress(netip.MustParseAddr("127.0.0.1"), 80)
		assert.False(t, ok)
	}
}

func TestLoadNetworkAllowList(t *testing.T) {
	p, err := Load(strings.NewReader("mode: coding\nnetwork:\n  allow: [\"example.com\", \"*.example.org\"]\n  deny: [upload.example.org]\n  unknown: ask\n"))
	require.NoError(t, err)
	assert.Equal(t, NetworkAllowList, p.Network)
	assert.Equal(t, HostRules{Allow: []string{"example.com", "*.example.org"}, Deny: []string{"upload.example.org"}, Unknown: Ask}, p.Hosts)

	p, err = Load(strings.NewReader("network:\n  allow: [example.com]\n"))
	require.NoError(t, err)
	assert.Equal(t, Deny, p.Hosts.Unknown, "unknown defaults to deny")

	p, err = Load(strings.NewReader("mode: trusted\nnetwork: full\n"))
	require.NoError(t, err)
	assert.Equal(t, NetworkFull, p.Network)
	assert.Empty(t, p.Hosts.Allow)

	for src, want := range map[string]string{
		"network:\n  allow: [example.com, 'a b']\n":       `network.allow[1] "a b"`,
		"network:\n  deny: ['*']\n":                       `network.deny[0] "*"`,
		"network:\n  allow: [x.test]\n  unknown: allow\n": `network.unknown "allow"`,
		"network:\n  alow: [x.test]\n":                    `unknown field "alow"`,
		"network:\n  unknown: maybe\n":                    `invalid decision "maybe"`,
		"network: [a]\n":                                  "expected none, full or a mapping",
	} {
		_, err := Load(strings.NewReader(src))
		require.Error(t, err, src)
		assert.Contains(t, err.Error(), want, src)
	}
}

func TestHostsWithoutAllowList(t *testing.T) {
	p := Coding.Policy()
	p.Hosts.Allow = []string{"example.com"}
	err := p.Validate()
	require.True(t, errors.Is(err, ErrHostsWithoutAllowList), "%v", err)
}

func TestNetworkSpecRoundTrip(t *testing.T) {
	for _, ns := range []NetworkSpec{
		{Access: NetworkNone},
		{Access: NetworkFull},
		{Access: NetworkAllowList, Hosts: HostRules{Allow: []string{"example.com"}, Deny: []string{"x.example.com"}, Unknown: Ask}},
	} {
		b, err := json.Marshal(ns)
		require.NoError(t, err)
		var got NetworkSpec
		require.NoError(t, json.Unmarshal(b, &got), string(b))
		assert.Equal(t, ns, got, string(b))

		y, err := yaml.Marshal(ns)
		require.NoError(t, err)
		got = NetworkSpec{}
		require.NoError(t, yaml.Unmarshal(y, &got), string(y))
		assert.Equal(t, ns, got, string(y))
	}
	var ns NetworkSpec
	require.Error(t, json.Unmarshal([]byte(`{"alow":["x"]}`), &ns))
}

// FuzzHost: host normalisation is idempotent, a normalised name is a
// name the patterns judge consistently, and nothing panics on arbitrary
// input (the proxy feeds it what a sandboxed command sends).
func FuzzHost(f *testing.F) {
	for _, s := range []string{"example.com", "EXAMPLE.com.", "*.example.org", "api.example.net:443", "bücher.example", "127.0.0.1:8080",
		"[::1]:443", "::ffff:10.1.2.3", "10.0.0.0/8", "a..b", "xn--bcher-kva.example", "\x00", strings.Repeat("a.", 200)} {
		f.Add(s)
	}
	c := &Checker{p: &Policy{Network: NetworkAllowList, Hosts: HostRules{Unknown: Deny}}}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseHostPattern(s)
		n, err := NormalizeHost(s)
		if err != nil {
			return
		}
		n2, err := NormalizeHost(n)
		if err != nil || n2 != n {
			t.Fatalf("NormalizeHost(%q) = %q, then %q, %v", s, n, n2, err)
		}
		hp, err := ParseHostPattern(n)
		if err == nil && !hp.MatchHost(n, 443) {
			t.Fatalf("the pattern %q does not match its own normalised host %q", s, n)
		}
		v, err := c.DecideHost(s, 443)
		if err != nil || v.Decision != Deny || v.Host != n {
			t.Fatalf("DecideHost(%q) = %+v, %v", s, v, err)
		}
	})
}
