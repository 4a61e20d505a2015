package bwrap

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/listenq"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// relayArg is the first argument under which the executor runs the host
// program inside the sandbox as the allow-list's relay; Init recognises
// it.
const relayArg = "cordon-bwrap-relay-7c41e2"

// Paths inside the sandbox (on its private /tmp) of the relay program and
// of the proxy's Unix socket.
const (
	relayPath  = "/tmp/.cordon-relay"
	relaySock  = "/tmp/.cordon-proxy.sock"
	relayPort  = policyderive.ProxyPort
	relayWhyNo = "the network allow-list without root needs the host program to call bwrap.Init first thing in main (and in TestMain), so it can run inside the sandbox as the relay to the proxy"
)

var initCalled atomic.Bool

// Init is the entry point of the network allow-list's relay. A program
// that runs the bwrap executor without root and wants the allow-list must
// call it first thing in main (tests: in TestMain):
//
//	func main() {
//		bwrap.Init()
//		...
//	}
//
// In the program itself Init only records that it was called. Inside a
// sandbox — where the executor runs the program as its relay, when this
// process cannot make network namespaces (not root) — it never returns:
// it listens on 127.0.0.1:3128 in the sandbox's own network namespace,
// runs the command, relays each connection to the executor's proxy over
// a Unix socket bound into the sandbox, and exits with the command's
// status (128+N for a signal). Root needs no relay: the executor starts
// bwrap inside a private network namespace whose listener is the proxy.
func Init() {
	initCalled.Store(true)
	if len(os.Args) > 1 && os.Args[1] == relayArg {
		os.Exit(relayMain(os.Args[2:]))
	}
}

// relayMain is the relay: SOCK PORT PATH ARGV0 ARGS...
func relayMain(args []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "cordon: bwrap relay: %v\n", err)
		return 126
	}
	if len(args) < 4 {
		return fail(errors.New("usage: SOCK PORT PATH ARGV0 ARGS..."))
	}
	sock, path, argv := args[0], args[2], args[3:]
	port, err := strconv.Atoi(args[1])
	if err != nil {
		return fail(fmt.Errorf("bad port %q", args[1]))
	}
	l, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fail(err)
	}
	defer l.Close()
	cmd := &exec.Cmd{Path: path, Args: argv, Env: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	drain := relayServe(l, sock)
	err = cmd.Wait()
	drain()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return fail(err)
}

// relayGrace bounds how long the relay, once the command has ended,
// forwards what the command's connections sent; relaySweep is how long
// it accepts connections still queued.
const (
	relayGrace = 2 * time.Second
	relaySweep = 2 * time.Millisecond
)

// relayServe relays each connection l accepts to the proxy's socket
// until drain is called. drain, called once the command has ended,
// accepts the connections it opened that are still queued and waits (at
// most relayGrace) until every client has finished sending and its bytes
// are written to the proxy: a command that writes and exits at once
// loses nothing.
func relayServe(l net.Listener, sock string) (drain func()) {
	// sending counts connections whose client has not finished sending.
	var sending sync.WaitGroup
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed, or drain's sweep is over
			}
			sending.Add(1)
			go relayConn(c, sock, sending.Done)
		}
	}()
	return func() {
		if tl, ok := l.(*net.TCPListener); !ok || !listenq.Queued(l) || tl.SetDeadline(time.Now().Add(relaySweep)) != nil {
			_ = l.Close()
		}
		<-accepted
		sent := make(chan struct{})
		go func() {
			sending.Wait()
			close(sent)
		}()
		select {
		case <-sent:
		case <-time.After(relayGrace):
		}
	}
}

// relayConn copies c to and from a new connection to the proxy's socket;
// sent is called once c's bytes are all written to the proxy (or cannot
// be).
func relayConn(c net.Conn, sock string, sent func()) {
	defer c.Close()
	up, err := net.Dial("unix", sock)
	if err != nil {
		sent()
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		defer sent()
		_, _ = io.Copy(up, c)
		if u, ok := up.(*net.UnixConn); ok {
			_ = u.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(c, up)
	if t, ok := c.(*net.TCPConn); ok {
		_ = t.CloseWrite()
	}
	<-done
}

// relayExe returns the host program to bind into the sandbox as the
// relay, or why there is none.
func relayExe() (string, error) {
	if !initCalled.Load() {
		return "", errors.New(relayWhyNo)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the host program's path: %w", err)
	}
	fi, err := os.Stat(exe)
	if err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("the host program %s cannot be bound into the sandbox: %v", exe, err)
	}
	return exe, nil
}
