// Package podhelper is cordon-pod, the kubernetes executor's helper
// inside the session pod (cmd/cordon-pod is its main). It is the pod's
// defence in depth: every command runs under cordon's own Landlock and
// seccomp sandbox (executor/landlock, derived from the same policy inside
// the pod), so the file rules and network: none hold even on a cluster
// that enforces no NetworkPolicy and whatever volumes the pod has.
//
// Three subcommands:
//
//   - init: the pod's PID 1. It reaps orphans and exits on SIGTERM or
//     SIGINT, or when no lease attached within -lease-timeout. When it
//     exits, the kernel kills every process of the pod's PID namespace,
//     and the pod's Job finishes (and is deleted by its TTL).
//   - lease: held by the executor as an exec whose standard input stays
//     open for the session. It tells PID 1 it attached (SIGUSR1) and,
//     when its input ends — the executor closed it, or the connection
//     dropped because the caller died — sends PID 1 SIGTERM: a session
//     never outlives its caller.
//   - run: one command, by the protocol of package wire.
package podhelper

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/kubernetes/internal/wire"
	"github.com/cordon-sandbox/cordon/executor/landlock"
)

// Main runs the subcommand named by os.Args[1] and exits. Call
// landlock.Init first thing in main, before Main.
func Main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cordon-pod init|lease|run|describe")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "init":
		fs := flag.NewFlagSet("init", flag.ExitOnError)
		timeout := fs.Duration("lease-timeout", 2*time.Minute, "exit when no lease attached within this time")
		_ = fs.Parse(os.Args[2:])
		err = initMain(*timeout)
	case "lease":
		err = leaseMain(os.Stdin)
	case "run":
		os.Exit(runMain(os.Stdin, os.Stdout))
	case "describe":
		err = describeMain(os.Stdout)
	default:
		err = fmt.Errorf("unknown subcommand %q (want init, lease or run)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cordon-pod:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// describeMain prints what the sandbox layer enforces in this pod, as
// JSON executor.Capabilities.
func describeMain(out io.Writer) error {
	x, err := landlock.New(landlock.Config{})
	if err != nil {
		return err
	}
	defer x.Close()
	return json.NewEncoder(out).Encode(x.Describe(context.Background()))
}

// runMain serves one command: it reads the request line, runs the
// command in the background under the landlock executor, kills it on a
// kill line or the end of the input, and writes the answer.
func runMain(in io.Reader, out io.Writer) int {
	br := bufio.NewReader(in)
	enc := json.NewEncoder(out)
	var mu sync.Mutex
	send := func(m wire.Message) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m)
	}
	fail := func(kind string, err error) int {
		e := &wire.Error{Kind: kind, Message: err.Error()}
		var ue *executor.UnenforceableError
		if errors.As(err, &ue) {
			e.Kind, e.Gaps = wire.KindUnenforceable, ue.Gaps
		}
		send(wire.Message{Final: &wire.Final{Error: e}})
		return 0
	}
	line, err := br.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return fail(wire.KindInvalid, fmt.Errorf("reading the request: %w", err))
	}
	var req wire.Request
	if err := json.Unmarshal(line, &req); err != nil {
		return fail(wire.KindInvalid, fmt.Errorf("decoding the request: %w", err))
	}
	if req.Version != wire.Version {
		return fail(wire.KindInvalid, fmt.Errorf("protocol version %d, this cordon-pod speaks %d (the image's cordon-pod was built from other sources)", req.Version, wire.Version))
	}
	x, err := landlock.New(landlock.Config{BestEffort: req.BestEffort})
	if err != nil {
		return fail(wire.KindFailed, err)
	}
	defer x.Close()
	ereq := &executor.Request{
		Command: req.Command, Dir: req.Dir, Env: req.Env, Timeout: req.Timeout,
		Policy: req.Policy.Build(), Root: req.Root, Home: req.Home,
		Grants: req.Grants, OutputLimit: req.OutputLimit,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A kill line, or the end of the input, kills the command: a
	// foreground one by cancelling its context, a background one by
	// Kill.
	var kill func()
	var once sync.Once
	killed := make(chan struct{})
	go func() {
		for {
			l, err := br.ReadString('\n')
			if strings.TrimSpace(l) == wire.KillLine || err != nil {
				once.Do(func() { close(killed) })
				return
			}
		}
	}()
	if !req.Background {
		go func() {
			<-killed
			cancel()
		}()
		send(wire.Message{Started: &wire.Started{}})
		res, err := x.Run(ctx, ereq)
		if err != nil {
			return fail(wire.KindFailed, err)
		}
		send(wire.Message{Final: &wire.Final{Result: res}})
		return 0
	}
	p, err := x.Start(ctx, ereq)
	if err != nil {
		return fail(wire.KindFailed, err)
	}
	kill = func() { _ = p.Kill() }
	go func() {
		<-killed
		kill()
	}()
	send(wire.Message{Started: &wire.Started{}})
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
loop:
	for {
		select {
		case <-p.Done():
			break loop
		case <-tick.C:
		}
		if b, dropped := p.ReadOutput(); len(b) > 0 || dropped {
			send(wire.Message{Output: b, Dropped: dropped})
		}
	}
	res := p.Wait()
	send(wire.Message{Final: &wire.Final{Result: res}})
	return 0
}
