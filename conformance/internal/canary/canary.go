// Package canary provides listeners that count what reaches them: a
// loopback TCP server, a loopback UDP socket, pathname Unix stream and
// datagram sockets, and an abstract Unix socket. The conformance suite
// reads their counters from the host to decide whether a sandboxed
// command reached them, instead of trusting the command's exit status.
package canary

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// Canary is one counting listener.
type Canary struct {
	network, addr string

	mu       sync.Mutex
	hits     int
	payloads []string
	changed  chan struct{} // closed and replaced on every hit

	closeFn func() error
	wg      sync.WaitGroup
}

// Network returns "tcp", "udp", "unix", "unixgram" (pathname or abstract).
func (c *Canary) Network() string { return c.network }

// Addr returns the address to reach the canary: "127.0.0.1:PORT", a socket
// path, or "@name" for an abstract socket.
func (c *Canary) Addr() string { return c.addr }

// Hits returns the number of connections accepted (stream) or datagrams
// received so far.
func (c *Canary) Hits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

// Payloads returns the first bytes received on each connection or datagram.
func (c *Canary) Payloads() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.payloads...)
}

// WaitHits waits until Hits exceeds n or d has passed, and returns Hits.
// Connections complete in the kernel before the canary accepts them, so a
// reader should wait a moment before concluding that nothing arrived.
func (c *Canary) WaitHits(n int, d time.Duration) int {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		h, ch := c.hits, c.changed
		c.mu.Unlock()
		if h > n {
			return h
		}
		select {
		case <-ch:
		case <-deadline.C:
			return c.Hits()
		}
	}
}

// Close stops the canary and waits for its goroutines.
func (c *Canary) Close() error {
	err := c.closeFn()
	c.wg.Wait()
	return err
}

func (c *Canary) record(p []byte) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits++
	c.payloads = append(c.payloads, string(p))
	close(c.changed)
	c.changed = make(chan struct{})
	return len(c.payloads) - 1
}

// fill sets the payload of hit i, recorded empty, to bytes that came late.
func (c *Canary) fill(i int, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.payloads[i] = string(p)
	close(c.changed)
	c.changed = make(chan struct{})
}

func newCanary(network, addr string) *Canary {
	return &Canary{network: network, addr: addr, changed: make(chan struct{})}
}

// TCP listens on 127.0.0.1 at an ephemeral port.
func TCP() (*Canary, error) { return stream("tcp", "127.0.0.1:0") }

// Unix listens on a pathname stream socket at path, made world-accessible
// (0777) so that only a sandbox, not file permissions, keeps callers out.
func Unix(path string) (*Canary, error) {
	c, err := stream("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o777); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Abstract listens on the abstract stream socket @name (Linux).
func Abstract(name string) (*Canary, error) { return stream("unix", "@"+name) }

func stream(network, addr string) (*Canary, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	c := newCanary(network, ln.Addr().String())
	if network == "unix" {
		c.addr = addr
	}
	var conns sync.WaitGroup
	c.closeFn = func() error { err := ln.Close(); conns.Wait(); return err }
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer conn.Close()
				_ = conn.SetReadDeadline(time.Now().Add(time.Second))
				buf := make([]byte, 256)
				n, _ := conn.Read(buf)
				i := c.record(buf[:n])
				if n == 0 {
					// The hit counts after a second, as always; bytes
					// that arrive later (a proxy tunnel on a loaded
					// machine) still become its payload.
					_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
					if n, _ := conn.Read(buf); n > 0 {
						c.fill(i, buf[:n])
					}
				}
			}()
		}
	}()
	return c, nil
}

// TCPAt listens for TCP at addr.
func TCPAt(addr string) (*Canary, error) { return stream("tcp", addr) }

// UDPAt listens for UDP at addr.
func UDPAt(addr string) (*Canary, error) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, err
	}
	return packet(pc, "udp", pc.LocalAddr().String()), nil
}

// UDP listens on 127.0.0.1 at an ephemeral port.
func UDP() (*Canary, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return packet(pc, "udp", pc.LocalAddr().String()), nil
}

// Unixgram listens on a pathname datagram socket at path, made
// world-accessible (0777).
func Unixgram(path string) (*Canary, error) {
	pc, err := net.ListenPacket("unixgram", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o777); err != nil {
		pc.Close()
		return nil, err
	}
	return packet(pc, "unixgram", path), nil
}

func packet(pc net.PacketConn, network, addr string) *Canary {
	c := newCanary(network, addr)
	c.closeFn = pc.Close
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		buf := make([]byte, 2048)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			c.record(buf[:min(n, 256)])
		}
	}()
	return c
}
