package landlock

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// netHandoff receives the proxy listener a command makes in its own
// network namespace, where this process cannot make one (not root: the
// namespace belongs to the command's user namespace, which only the
// command's child can enter). The child (cordon_spawn, or the sandbox
// helper) unshares the namespace with its user namespace, brings lo up,
// listens on 127.0.0.1:policyderive.ProxyPort and sends the listener over
// a socket pair; serve gets it before the command can run anything.
type netHandoff struct {
	parent, child *os.File
	// serve starts the proxy's session on the listener.
	serve func(net.Listener) error
}

// handoffTimeout bounds the wait for the child's listener; the child
// sends it before it executes the command, and closes its end at exec or
// exit, so the wait ends at once either way but for a hung child.
const handoffTimeout = 30

func newNetHandoff(serve func(net.Listener) error) (*netHandoff, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the proxy handoff's socket pair: %w", err)
	}
	return &netHandoff{parent: os.NewFile(uintptr(fds[0]), "netns-handoff"), child: os.NewFile(uintptr(fds[1]), "netns-handoff-child"), serve: serve}, nil
}

// receive closes the child's end (the started child has its own copy) and
// waits for the listener; it hands it to serve.
func (h *netHandoff) receive() error {
	h.child.Close()
	defer h.parent.Close()
	fd := int(h.parent.Fd()) // a blocking socket: os.NewFile did not make it pollable
	tv := unix.Timeval{Sec: handoffTimeout}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("the proxy handoff: %w", err)
	}
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return fmt.Errorf("the command's child did not hand over its proxy listener within %d s", handoffTimeout)
		case err != nil:
			return fmt.Errorf("waiting for the command's proxy listener: %w", err)
		}
		return h.adopt(n, oob[:oobn])
	}
}

func (h *netHandoff) adopt(n int, oob []byte) error {
	if n == 0 && len(oob) == 0 {
		return errors.New("the command's child ended before it made its proxy listener")
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return fmt.Errorf("the proxy handoff: no descriptor (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return fmt.Errorf("the proxy handoff: want one descriptor (%v)", err)
	}
	f := os.NewFile(uintptr(fds[0]), "proxy-listener")
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("the proxy handoff: %w", err)
	}
	if err := h.serve(l); err != nil {
		l.Close()
		return err
	}
	return nil
}

// close releases both ends (a start that never happened).
func (h *netHandoff) close() {
	if h == nil {
		return
	}
	h.child.Close()
	h.parent.Close()
}

// killStarted kills and reaps a command whose start could not be
// completed (its proxy listener never arrived).
func killStarted(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
	_, _ = p.Wait()
}
