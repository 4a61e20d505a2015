//go:build unix

package conformance

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/conformance/internal/canary"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

func netCases() []*caseDef {
	iso := func(id, title string, ctl executor.Control, verified string, run func(*caseRun)) *caseDef {
		return &caseDef{CaseInfo: CaseInfo{ID: id, Title: title, Layer: Network, Control: ctl, Isolation: true, Expected: Denied, Verified: verified}, probe: true, run: run}
	}
	return []*caseDef{
		iso("net-tcp-connect", "network none: TCP connect to loopback fails", executor.ControlNetTCP,
			"the probe connects to the host's loopback TCP canary and sends a token; the canary counts no connection. Twin: network full",
			func(c *caseRun) { c.netCase(c.fx.tcp.Addr(), "tcp-connect", true, canaryHit(c.fx.tcp)) }),
		iso("net-tcp-bind", "network none: a port bound on loopback is not reachable from the host", executor.ControlNetTCP,
			"the probe binds and listens on 127.0.0.1:PORT; the host tries to connect and read the probe's token. Twin: network full", caseTCPBind),
		iso("net-udp", "network none: UDP datagrams to loopback do not arrive", executor.ControlNetUDP,
			"the probe sends a datagram to the host's UDP canary; the canary counts none. Twin: network full",
			func(c *caseRun) { c.netCase(c.fx.udp.Addr(), "udp-send", true, canaryHit(c.fx.udp)) }),
		iso("net-unix-stream", "an outside pathname Unix stream socket cannot be reached", executor.ControlNetUnix,
			"the probe connects to s/stream.sock outside the root; the listener counts no connection. Twin: executor.Local",
			func(c *caseRun) {
				c.netCase(c.fx.unixStream.Addr(), "unix-connect", false, canaryHit(c.fx.unixStream))
			}),
		iso("socket-trusted-read", "under trusted mode, whose read of the whole disk exposes every socket's path, an outside Unix socket cannot be reached", executor.ControlNetUnix,
			"under mode trusted (network none) the probe connects to s/stream.sock outside the root, which the read of / makes visible and no search covers; the listener counts no connection. Twin: executor.Local",
			func(c *caseRun) {
				cmd := c.probeCmd("unix-connect", c.fx.unixStream.Addr(), token("net"))
				p := c.policyFor(policy.Trusted)
				p.Network = policy.NetworkNone
				c.isolate(canaryHit(c.fx.unixStream), c.act(cmd, p), c.twinLocal(cmd))
			}),
		iso("net-unix-dgram", "an outside pathname Unix datagram socket cannot be reached", executor.ControlNetUnix,
			"the probe sends to s/dgram.sock outside the root; the socket counts no datagram. Twin: executor.Local",
			func(c *caseRun) {
				c.netCase(c.fx.unixDgram.Addr(), "unixgram-send", false, canaryHit(c.fx.unixDgram))
			}),
		iso("socket-in-root", "a host daemon's Unix socket inside the writable root cannot be reached", executor.ControlNetUnix,
			"the host listens on run1/d.sock inside the root (a private daemon under build/, say); the probe connects and the listener counts no connection. Twin: executor.Local",
			func(c *caseRun) {
				cn, cmd := c.rootSocket()
				defer cn.Close()
				c.isolate(canaryHit(cn), c.act(cmd, nil), c.twinLocal(cmd))
			}),
		iso("socket-unlisted-dir", "a Unix socket inside the root, in a directory the user may enter but not list, cannot be reached", executor.ControlNetUnix,
			"the host listens on run2/d.sock inside the root and makes run2 0311 (searchable, not listable: a derivation that is not root cannot find the socket, while a command of the same user that knows its name could connect), protection off (the guard refuses a root it cannot list); the probe connects and the listener counts no connection. Twin: executor.Local",
			func(c *caseRun) {
				cn, cmd := c.rootSocketIn("run2")
				defer cn.Close()
				dir := filepath.Join(c.fx.root, "run2")
				if err := os.Chmod(dir, 0o311); err != nil {
					c.setupf("fixture: %v", err)
				}
				defer os.Chmod(dir, 0o755)
				// Without protection: the guard refuses a root it
				// cannot list (strict), which would hide what the
				// case checks.
				p := c.coding()
				p.Protect = policy.Protect{Disabled: true}
				c.isolate(canaryHit(cn), c.act(cmd, p), c.twinLocal(cmd))
			}),
		{CaseInfo: CaseInfo{ID: "socket-named", Title: "a Unix socket inside the root that a path rule names can be reached", Layer: Network, Control: executor.ControlNetUnix, Isolation: true, Expected: Allowed,
			Verified: "as socket-in-root, under a policy whose path rule allows run1/d.sock: the listener counts the probe's connection (landlock below ABI 9 refuses such a policy in strict mode: socket(AF_UNIX) cannot then be denied)"},
			probe: true, run: func(c *caseRun) {
				cn, cmd := c.rootSocket()
				defer cn.Close()
				named := c.coding()
				named.PathRules = append(named.PathRules, policy.PathRule{Pattern: "run1/d.sock", Action: policy.Allow})
				c.permit(canaryHit(cn), c.act(cmd, named))
			}},
		iso("net-abstract-unix", "an abstract Unix socket outside the sandbox cannot be reached", executor.ControlNetAbstract,
			"the probe connects to the host's abstract socket @TAG; the listener counts no connection. Twin: executor.Local. Linux only",
			func(c *caseRun) {
				if runtime.GOOS != "linux" {
					c.unsupportedf("abstract Unix sockets are Linux-only")
				}
				c.netCase(strings.TrimPrefix(c.fx.abstract.Addr(), "@"), "abstract-connect", false, canaryHit(c.fx.abstract))
			}),
	}
}

// rootSocket listens on run1/d.sock inside the root and returns the
// listener and the probe command that connects to it.
func (c *caseRun) rootSocket() (*canary.Canary, string) {
	return c.rootSocketIn("run1")
}

// rootSocketIn listens on DIR/d.sock inside the root and returns the
// canary and the probe command that connects to it.
func (c *caseRun) rootSocketIn(dir string) (*canary.Canary, string) {
	sock := filepath.Join(c.fx.root, dir, "d.sock")
	if err := os.Mkdir(filepath.Dir(sock), 0o755); err != nil {
		c.setupf("fixture: %v", err)
	}
	cn, err := canary.Unix(sock)
	if err != nil {
		c.setupf("fixture: listening on %s: %v", sock, err)
	}
	return cn, c.probeCmd("unix-connect", sock, token("net"))
}

// fullNetwork is coding mode with network full.
func (c *caseRun) fullNetwork() *policy.Policy {
	p := c.coding()
	p.Network = policy.NetworkFull
	return p
}

// netCase runs "probe ACTION ADDR TOKEN" under network none; the twin is
// network full (policyTwin) or executor.Local.
func (c *caseRun) netCase(addr, action string, policyTwin bool, obs observer) {
	cmd := c.probeCmd(action, addr, token("net"))
	twin := c.twinLocal(cmd)
	if policyTwin {
		twin = c.twinPolicy("network full", cmd, c.fullNetwork())
	}
	c.isolate(obs, c.act(cmd, nil), twin)
}

func caseTCPBind(c *caseRun) {
	seq := 0
	var reached bool
	var seen string
	attemptWith := func(label string, p *policy.Policy) attempt {
		seq++
		port, err := freePort()
		if err != nil {
			c.setupf("picking a free port: %v", err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		dir := filepath.Join(c.fx.root, fmt.Sprintf("listen%d", seq))
		if err := os.Mkdir(dir, 0o755); err != nil {
			c.setupf("fixture: %v", err)
		}
		tok := token("listen")
		a := attempt{label: label, x: c.x, req: c.req(c.probeCmd("tcp-listen", addr, dir, tok), p)}
		a.during = func(finished <-chan struct{}) {
			defer os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
			bound := waitFor(c.ctx, 15*time.Second, finished, func() bool { _, err := os.Stat(filepath.Join(dir, "bound")); return err == nil })
			if !bound {
				seen = "the probe did not bind " + addr
				return
			}
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				seen = fmt.Sprintf("the probe bound %s in its sandbox; the host cannot connect: %v", addr, err)
				return
			}
			defer conn.Close()
			_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			b, _ := io.ReadAll(conn)
			reached = bytes.Contains(b, []byte(tok))
			seen = fmt.Sprintf("the host connected to %s and read %q (the probe's token: %v)", addr, clip(string(b), 80), reached)
		}
		return a
	}
	obs := func(c *caseRun) func(*executor.Result) (bool, string) {
		reached, seen = false, ""
		return func(*executor.Result) (bool, string) { return reached, seen }
	}
	act := attemptWith("action", nil)
	twin := attemptWith("twin (network full)", c.fullNetwork())
	c.isolate(obs, act, twin)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
