package workspace

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// Session is one agent's use of a Workspace: the file tools, the shell and
// the background processes it started. It is safe for concurrent use.
// Close kills and reaps every background process; any use after Close
// returns *ClosedError.
type Session struct {
	ws     *Workspace
	ctx    context.Context // cancelled by Close: ends running commands
	cancel context.CancelFunc
	caps   executor.Capabilities
	auto   AutoAllow // from caps and the policy, at Open
	closed atomic.Bool

	grants sessionGrants // session-scoped approvals

	mu     sync.Mutex
	procs  map[string]*bgProc
	nextID int
	onExit func(ProcessInfo) // NotifyProcessExit
}

// Workspace returns the session's workspace.
func (s *Session) Workspace() *Workspace { return s.ws }

// check returns *ClosedError after Close.
func (s *Session) check(op string) error {
	if s.closed.Load() {
		return &ClosedError{Op: op}
	}
	return nil
}

// Close kills every background process of the session, waits until each is
// reaped, and ends commands still running. Closing twice returns
// *ClosedError.
func (s *Session) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return &ClosedError{Op: "Close"}
	}
	s.cancel()
	s.mu.Lock()
	procs := s.procs
	s.procs = map[string]*bgProc{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, bp := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = bp.p.Kill()
			bp.release()
		}()
	}
	wg.Wait()
	s.ws.log.Debug("session closed", "root", s.ws.Root(), "killed", len(procs))
	return nil
}

// DecidePath returns the policy's verdict on op on path (relative paths are
// relative to the root) without performing or approving anything.
func (s *Session) DecidePath(path string, op policy.Op) (*policy.Verdict, error) {
	if err := s.check("DecidePath"); err != nil {
		return nil, err
	}
	return s.ws.checker.DecidePath(path, op)
}

// DecideCommand returns the policy's verdict on command run in cwd (""
// for the root; relative to the root otherwise) without running or
// approving anything.
func (s *Session) DecideCommand(command, cwd string) (*policy.CommandVerdict, error) {
	return s.decideCommand(command, cwd, "run")
}

// decideCommand is DecideCommand for op ("run" or "spawn"): under an
// exclusive auto-allow a spawn is never auto-allowed, and a run only
// while nothing else of the workspace runs (at the time of asking).
func (s *Session) decideCommand(command, cwd, op string) (*policy.CommandVerdict, error) {
	if err := s.check("DecideCommand"); err != nil {
		return nil, err
	}
	dir, err := s.resolveCwd(cwd)
	if err != nil {
		return nil, err
	}
	v, err := s.ws.checker.DecideCommand(command, dir)
	if err != nil {
		return nil, err
	}
	if s.auto.On && onlyShellDefault(v, s.ws.checker.Policy()) && (!s.auto.Exclusive || op == "run" && s.ws.gate.idle()) {
		v = autoAllowed(v, s.auto)
	}
	return v, nil
}

// AutoAllow says whether this session's sandbox auto-allows commands
// whose only ask comes from shell_default, and why (see
// WithSandboxAutoAllow).
func (s *Session) AutoAllow() AutoAllow { return s.auto }

// Instructions returns the "## Workspace" system-prompt section for this
// session (see Workspace.Instructions); it uses the executor capabilities
// read when the session was opened.
func (s *Session) Instructions() string {
	return s.ws.instructions(s.caps, s.auto)
}

// Capabilities returns what the executor reported it enforces when the
// session was opened.
func (s *Session) Capabilities() executor.Capabilities { return s.caps }

// merge returns a context that ends when ctx or the session ends.
func (s *Session) merge(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	return c, func() { stop(); cancel() }
}
