package netproxy

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSpecial: the addresses a name may reach only when network.allow
// names them, and public ones it may reach.
func TestSpecial(t *testing.T) {
	p := &Proxy{self: func() map[netip.Addr]bool { return map[netip.Addr]bool{netip.MustParseAddr("203.0.113.7"): true} }}
	for _, a := range []string{"127.0.0.1", "127.9.9.9", "::1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "fe80::1",
		"fd00::1", "fc00::1", "100.64.0.1", "0.0.0.0", "::", "224.0.0.1", "ff02::1", "255.255.255.255", "::ffff:127.0.0.1",
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::a00:1", "203.0.113.7"} {
		assert.True(t, p.special(netip.MustParseAddr(a)), "%s must need an address entry", a)
	}
	for _, a := range []string{"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "64:ff9b::5db8:d822", "8.8.8.8"} {
		assert.False(t, p.special(netip.MustParseAddr(a)), "%s is public", a)
	}
}
