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
//     SIGINT, or when no session attached within -attach-timeout. When it
//     exits, the kernel kills every process of the pod's PID namespace,
//     and the pod's Job finishes (and is deleted by its TTL).
//   - serve: held by the executor as one exec for the whole session; it
//     runs every command by the protocol of package wire, under one
//     landlock executor, so the protected-path guard's state and the
//     plan and ruleset caches span the session. It tells PID 1 it
//     attached (SIGUSR1) and, when its input ends — the executor closed
//     it, or the connection dropped because the caller died — kills every
//     command, lets the guard repair, and sends PID 1 SIGTERM: a session
//     never outlives its caller. It is a child subreaper
//     (landlock.Config.ReapOrphans): a process that double-forks out of
//     its command's tree is reparented to it, not to PID 1, and is killed
//     when any command ends, before the guard runs.
//   - describe: what the sandbox layer enforces here, as JSON.
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
		fmt.Fprintln(os.Stderr, "usage: cordon-pod init|serve|describe")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "init":
		fs := flag.NewFlagSet("init", flag.ExitOnError)
		timeout := fs.Duration("attach-timeout", 2*time.Minute, "exit when no session attached within this time")
		_ = fs.Parse(os.Args[2:])
		err = initMain(*timeout)
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		bestEffort := fs.Bool("best-effort", false, "run commands the pod cannot sandbox as strictly as the policy says")
		_ = fs.Parse(os.Args[2:])
		err = serveMain(os.Stdin, os.Stdout, *bestEffort)
	case "describe":
		err = describeMain(os.Stdout)
	default:
		err = fmt.Errorf("unknown subcommand %q (want init, serve or describe)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cordon-pod:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// describeMain prints what the sandbox layer enforces in this pod, as
// JSON executor.Capabilities: the executor is configured as serve's is
// (a child subreaper; this process starts nothing else).
func describeMain(out io.Writer) error {
	x, err := landlock.New(landlock.Config{ReapOrphans: true})
	if err != nil {
		return err
	}
	defer x.Close()
	return json.NewEncoder(out).Encode(x.Describe(context.Background()))
}

// server is one serve session: one landlock executor for every command,
// so its plans, rulesets and protected-path guard span the session.
type server struct {
	x    *landlock.Executor
	enc  *json.Encoder
	emu  sync.Mutex
	wg   sync.WaitGroup
	mu   sync.Mutex
	kill map[uint64]func() // running commands by ID
}

func (s *server) send(m wire.Message) {
	s.emu.Lock()
	defer s.emu.Unlock()
	_ = s.enc.Encode(m)
}

func (s *server) fail(id uint64, kind string, err error) {
	e := &wire.Error{Kind: kind, Message: err.Error()}
	var ue *executor.UnenforceableError
	if errors.As(err, &ue) {
		e.Kind, e.Gaps = wire.KindUnenforceable, ue.Gaps
	}
	s.send(wire.Message{ID: id, Final: &wire.Final{Error: e}})
}

// serveMain holds the session: it tells PID 1 it attached (SIGUSR1),
// answers Ready and serves Calls until its input ends; then it kills
// every command, waits for their ends (the guard's repair included) and
// sends PID 1 SIGTERM: a session never outlives its caller. It is the
// pod's child subreaper (landlock.Config.ReapOrphans): a process that
// leaves its command's tree is killed when any command ends.
func serveMain(in io.Reader, out io.Writer, bestEffort bool) error {
	if err := attach(); err != nil {
		return err
	}
	defer detach()
	x, err := landlock.New(landlock.Config{BestEffort: bestEffort, ReapOrphans: true})
	if err != nil {
		return err
	}
	defer x.Close()
	s := &server{x: x, enc: json.NewEncoder(out), kill: map[uint64]func(){}}
	s.send(wire.Message{Ready: &wire.Ready{Version: wire.Version}})
	br := bufio.NewReaderSize(in, 64<<10)
	var rerr error
	for {
		line, err := wire.ReadLine(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rerr = fmt.Errorf("reading calls: %w", err)
			}
			break
		}
		var c wire.Call
		if err := json.Unmarshal(line, &c); err != nil {
			rerr = fmt.Errorf("decoding a call: %w", err)
			break
		}
		switch {
		case c.Request != nil:
			s.start(c.ID, c.Request)
		case c.Kill:
			s.mu.Lock()
			k := s.kill[c.ID]
			s.mu.Unlock()
			if k != nil {
				k()
			}
		}
	}
	s.mu.Lock()
	for _, k := range s.kill {
		k()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return rerr
}

// start runs one command in the background of the serve loop.
func (s *server) start(id uint64, req *wire.Request) {
	ereq := &executor.Request{
		Command: req.Command, Dir: req.Dir, Env: req.Env, Timeout: req.Timeout,
		Policy: req.Policy.Build(), Root: req.Root, Home: req.Home,
		Grants: req.Grants, OutputLimit: req.OutputLimit,
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		once sync.Once
		pmu  sync.Mutex
		proc executor.Process
	)
	kill := func() {
		once.Do(func() {
			cancel() // a foreground command, or one still starting
			pmu.Lock()
			if proc != nil {
				_ = proc.Kill()
			}
			pmu.Unlock()
		})
	}
	s.mu.Lock()
	if _, dup := s.kill[id]; dup {
		s.mu.Unlock()
		s.fail(id, wire.KindInvalid, fmt.Errorf("command %d is already running", id))
		cancel()
		return
	}
	s.kill[id] = kill
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.kill, id)
			s.mu.Unlock()
			cancel()
		}()
		if !req.Background {
			s.send(wire.Message{ID: id, Started: &wire.Started{}})
			res, err := s.x.Run(ctx, ereq)
			if err != nil {
				s.fail(id, wire.KindFailed, err)
				return
			}
			s.send(wire.Message{ID: id, Final: &wire.Final{Result: res}})
			return
		}
		p, err := s.x.Start(ctx, ereq)
		if err != nil {
			s.fail(id, wire.KindFailed, err)
			return
		}
		pmu.Lock()
		proc = p
		pmu.Unlock()
		if ctx.Err() != nil { // killed while starting
			_ = p.Kill()
		}
		s.send(wire.Message{ID: id, Started: &wire.Started{}})
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for done := false; !done; {
			select {
			case <-p.Done():
				done = true
			case <-tick.C:
			}
			if b, dropped := p.ReadOutput(); len(b) > 0 || dropped {
				s.send(wire.Message{ID: id, Output: b, Dropped: dropped})
			}
		}
		s.send(wire.Message{ID: id, Final: &wire.Final{Result: p.Wait()}})
	}()
}
