package netproxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/policy"
)

// SOCKS5 (RFC 1928) constants.
const (
	socksVersion      = 5
	socksNoAuth       = 0
	socksNoAcceptable = 0xff
	socksConnect      = 1
	socksIPv4         = 1
	socksDomain       = 3
	socksIPv6         = 4

	socksSucceeded       = 0
	socksGeneralFailure  = 1
	socksNotAllowed      = 2
	socksNetUnreachable  = 3
	socksHostUnreachable = 4
	socksRefused         = 5
	socksCmdUnsupported  = 7
	socksAddrUnsupported = 8
)

// socks serves one SOCKS5 connection: the greeting (no authentication
// only), one CONNECT request, the decision, then the tunnel.
func (s *Session) socks(c *peekConn) {
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil || hdr[0] != socksVersion {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == socksNoAuth
	}
	if !noAuth {
		_, _ = c.Write([]byte{socksVersion, socksNoAcceptable})
		return
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return
	}
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil || req[0] != socksVersion {
		return
	}
	var host string
	switch req[3] {
	case socksIPv4, socksIPv6:
		b := make([]byte, map[byte]int{socksIPv4: 4, socksIPv6: 16}[req[3]])
		if _, err := io.ReadFull(c, b); err != nil {
			return
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case socksDomain:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		b := make([]byte, n[0])
		if _, err := io.ReadFull(c, b); err != nil {
			return
		}
		host = string(b)
	default:
		socksReply(c, socksAddrUnsupported)
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(c, pb[:]); err != nil {
		return
	}
	port := binary.BigEndian.Uint16(pb[:])
	if req[1] != socksConnect {
		socksReply(c, socksCmdUnsupported)
		return
	}
	if port == 0 {
		socksReply(c, socksNotAllowed)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	ctx := s.base
	v, err := s.decide(ctx, host, port)
	if err != nil {
		socksReply(c, socksAddrUnsupported)
		return
	}
	ev := Event{Protocol: "socks5", Host: v.Host, Port: port, Decision: v.Decision, Rule: v.Rule}
	if v.Decision != policy.Allow {
		s.record(ev)
		socksReply(c, socksNotAllowed)
		return
	}
	up, err := s.p.connect(ctx, s.sc.Checker, v)
	if err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			ev.Decision, ev.Rule = policy.Deny, re.Rule
			s.record(ev)
			socksReply(c, socksNotAllowed)
			return
		}
		ev.Err = err.Error()
		s.record(ev)
		socksReply(c, socksErrCode(err))
		return
	}
	ev.Addr = up.RemoteAddr().String()
	s.record(ev)
	if !socksReply(c, socksSucceeded) {
		_ = up.Close()
		return
	}
	s.pipe(c, c, up)
}

// socksReply sends a reply with a zero bound address.
func socksReply(c net.Conn, code byte) bool {
	_, err := c.Write([]byte{socksVersion, code, 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	return err == nil
}

func socksErrCode(err error) byte {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return socksRefused
	case errors.Is(err, syscall.ENETUNREACH):
		return socksNetUnreachable
	case errors.Is(err, syscall.EHOSTUNREACH):
		return socksHostUnreachable
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return socksHostUnreachable
	}
	return socksGeneralFailure
}
