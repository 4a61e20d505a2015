//go:build unix

package probe

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// proxyFrom returns host:port of the proxy named by the first set
// variable of names with one of the schemes, or "" when none is set.
func proxyFrom(schemes []string, names ...string) (string, error) {
	for _, n := range names {
		v := os.Getenv(n)
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil {
			return "", fmt.Errorf("%s=%q: %w", n, v, err)
		}
		for _, s := range schemes {
			if u.Scheme == s {
				return u.Host, nil
			}
		}
		return "", fmt.Errorf("%s=%q: scheme %q is not one of %v", n, v, u.Scheme, schemes)
	}
	return "", nil
}

// directTarget maps a host under .test (RFC 2606: never in DNS) to
// 127.0.0.1, as the suite's proxies do, for a connection without a proxy.
func directTarget(target string) string {
	host, port, err := net.SplitHostPort(target)
	if err == nil && strings.HasSuffix(host, ".test") {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return target
}

// proxyAction connects to target through the proxy the environment names
// (how), or directly when none is set, then sends token. A proxy's
// refusal is an error carrying its status or reply code.
func proxyAction(action, target, token string, how func(c net.Conn, br *bufio.Reader) error, schemes []string, vars ...string) Record {
	px, err := proxyFrom(schemes, vars...)
	if err != nil {
		return result(action, target, err)
	}
	if px == "" {
		r := send(action, "tcp", directTarget(target), token)
		r.Values = map[string]string{"via": "direct (no proxy variable set)"}
		return r
	}
	c, err := net.DialTimeout("tcp", px, dialTimeout)
	if err != nil {
		return result(action, target, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * dialTimeout))
	br := bufio.NewReader(c)
	if err := how(c, br); err != nil {
		r := result(action, target, err)
		r.Values = map[string]string{"via": px}
		return r
	}
	_, err = c.Write([]byte(token))
	r := result(action, target, err)
	r.Values = map[string]string{"via": px}
	return r
}

// actProxyHTTP sends "GET http://TARGET/TOKEN" to HTTP_PROXY (or TOKEN
// directly); the canary counts the request, which holds the token.
func actProxyHTTP(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	target, token := args[0], args[1]
	px, err := proxyFrom([]string{"http"}, "HTTP_PROXY", "http_proxy")
	if err != nil || px == "" {
		if err == nil {
			r := send("proxy-http", "tcp", directTarget(target), token)
			r.Values = map[string]string{"via": "direct (no proxy variable set)"}
			p.emit(r)
			return nil
		}
		p.emit(result("proxy-http", target, err))
		return nil
	}
	c, err := net.DialTimeout("tcp", px, dialTimeout)
	if err != nil {
		p.emit(result("proxy-http", target, err))
		return nil
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * dialTimeout))
	fmt.Fprintf(c, "GET http://%s/%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, token, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusForbidden {
			err = fmt.Errorf("proxy refused: %s", resp.Status)
		}
	}
	r := result("proxy-http", target, err)
	r.Values = map[string]string{"via": px}
	if resp != nil {
		r.Values["status"] = resp.Status
	}
	p.emit(r)
	return nil
}

// actProxyConnect tunnels to TARGET with CONNECT through HTTPS_PROXY and
// sends TOKEN.
func actProxyConnect(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	target := args[0]
	p.emit(proxyAction("proxy-connect", target, args[1], func(c net.Conn, br *bufio.Reader) error {
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("proxy refused: %s", resp.Status)
		}
		return nil
	}, []string{"http"}, "HTTPS_PROXY", "https_proxy"))
	return nil
}

// actProxySocks connects to TARGET through the SOCKS5 proxy of ALL_PROXY
// (socks5h: the proxy resolves the name) and sends TOKEN.
func actProxySocks(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	target := args[0]
	p.emit(proxyAction("proxy-socks", target, args[1], func(c net.Conn, br *bufio.Reader) error {
		host, port, err := net.SplitHostPort(target)
		if err != nil {
			return err
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || len(host) > 255 {
			return fmt.Errorf("bad target %q", target)
		}
		req := []byte{5, 1, 0, 5, 1, 0, 3, byte(len(host))}
		req = append(req, host...)
		req = binary.BigEndian.AppendUint16(req, uint16(n))
		if _, err := c.Write(req); err != nil {
			return err
		}
		var rep [12]byte // method choice (2), reply header and IPv4 bound address (10)
		if _, err := io.ReadFull(br, rep[:]); err != nil {
			return err
		}
		if rep[1] != 0 {
			return fmt.Errorf("socks: no acceptable method")
		}
		if rep[3] != 0 {
			return fmt.Errorf("socks: proxy refused: reply code %d", rep[3])
		}
		return nil
	}, []string{"socks5h", "socks5"}, "ALL_PROXY", "all_proxy"))
	return nil
}
