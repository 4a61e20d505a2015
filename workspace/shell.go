package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
)

// RunResult is the outcome of a foreground command.
type RunResult struct {
	Command string `json:"command"`
	// Cwd is the directory the command ran in, as the model sees paths.
	Cwd string `json:"cwd"`
	// ExitCode is -1 when a signal or the timeout killed the command.
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timed_out"`
	// Truncated is set when output beyond MaxShellOutputChars per stream
	// was dropped (the head and tail are kept, with an omission marker).
	Truncated  bool  `json:"truncated"`
	DurationMS int64 `json:"duration_ms"`
	// Violations lists what the command wrote on the host-run surface
	// (git control files, hooks, tool settings) and what the sandbox's
	// guard did about it: one line each, rule first.
	Violations []string `json:"violations,omitempty"`
	// Network lists the network allow-list proxy's decisions for the
	// connections the command asked for (refused ones name the rule).
	Network []netproxy.Event `json:"network,omitempty"`
	// Refusals is the violation report: what was refused or undone while
	// the command ran (guard repairs, proxy refusals, file accesses the
	// sandbox refused as the command's error output shows them; see
	// Refusal).
	Refusals []Refusal `json:"refusals,omitempty"`
	// Notice is Refusals in words for the model, ending with what to do
	// instead of retrying; empty when nothing was refused.
	Notice string `json:"notice,omitempty"`
}

// report fills r.Refusals and r.Notice from the executor's result.
func (s *Session) report(r *RunResult, dir string) {
	for _, v := range r.Violations {
		r.Refusals = append(r.Refusals, Refusal{Source: "guard", Op: "write", Detail: v})
	}
	for _, e := range r.Network {
		if e.Decision != policy.Allow {
			r.Refusals = append(r.Refusals, Refusal{Source: "proxy", Op: "connect", Target: hostKey(e.Host, e.Port), Rule: e.Rule,
				Detail: "the network allow-list's proxy refused the connection"})
		}
	}
	if s.caps.Sandboxed {
		r.Refusals = append(r.Refusals, s.osRefusals(r.Stderr, dir)...)
	}
	r.Notice = refusalNotice(r.Refusals)
}

// Status values of a background process.
const (
	StatusRunning = "running"
	StatusExited  = "exited"
	StatusKilled  = "killed"
)

// ProcessOutput is what ReadProcessOutput and KillProcess return.
type ProcessOutput struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	// Status is StatusRunning, StatusExited (ExitCode set) or StatusKilled
	// (killed by KillProcess, Close or a signal).
	Status   string `json:"status"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// Output is the merged stdout and stderr produced since the last read.
	Output string `json:"output"`
	// Dropped is set when older unread output was discarded because the
	// buffer (the newest MaxShellOutputChars bytes) was full.
	Dropped bool `json:"dropped"`
}

// ProcessInfo is the passive status of a background process.
type ProcessInfo struct {
	ID       string    `json:"id"`
	Command  string    `json:"command"`
	Cwd      string    `json:"cwd"`
	Pid      int       `json:"pid,omitempty"`
	Status   string    `json:"status"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Started  time.Time `json:"started"`
}

// bgProc is an entry of the session's process table.
type bgProc struct {
	id      string
	num     int
	command string
	cwd     string
	started time.Time
	p       executor.Process
	killed  atomic.Bool // by KillProcess
	// release gives back the process's place in the workspace's run
	// gate; called once it is known to have ended (idempotent).
	release func()
}

// resolveCwd resolves a command's working directory: the root when "",
// relative to the root otherwise.
func (s *Session) resolveCwd(cwd string) (string, error) {
	if cwd == "" {
		return s.ws.Root(), nil
	}
	dir, err := s.ws.checker.Resolve(s.ws.Root(), cwd)
	if err != nil {
		return "", &ArgumentError{Arg: "cwd", Value: cwd, Err: err}
	}
	return dir, nil
}

// authorizeCommand judges command in cwd, asks on Ask, and returns the
// request to run and the release of the command's place in the
// workspace's run gate, to call when the command (or background process)
// has ended.
func (s *Session) authorizeCommand(ctx context.Context, tool, op, command, cwd string) (_ *executor.Request, release func(), err error) {
	if strings.TrimSpace(command) == "" {
		return nil, nil, &ArgumentError{Arg: "command", Reason: "empty command"}
	}
	dir, err := s.resolveCwd(cwd)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.ws.checker.DecideCommand(command, dir)
	if err != nil {
		return nil, nil, &ArgumentError{Arg: "command", Value: clip(command, 200), Err: err}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		reason := "not a directory"
		if err != nil {
			reason = err.Error()
		}
		return nil, nil, &ArgumentError{Arg: "cwd", Value: s.ws.relOrAbs(dir), Reason: reason}
	}
	// held is an exclusive place in the run gate: released on every
	// error return (a named result would be overwritten by the return).
	var held func()
	if s.auto.On && onlyShellDefault(v, s.ws.checker.Policy()) {
		switch {
		case !s.auto.Exclusive:
			v = autoAllowed(v, s.auto)
		case op == "run":
			// Only while nothing else of the workspace runs; else it asks.
			if r, ok := s.ws.gate.exclusive(); ok {
				held = r
				v = autoAllowed(v, s.auto)
			}
		}
	}
	defer func() {
		if err != nil && held != nil {
			held()
		}
	}()
	var grants []policy.Grant
	switch v.Decision {
	case policy.Allow:
		s.ws.log.Debug(tool, "command", command, "cwd", dir, "decision", "allow", "rule", v.Rule)
	case policy.Ask:
		grants = grantsOf(v)
		req := &ApprovalRequest{Op: op, Command: command, Cwd: dir, CommandVerdict: v, Grants: grants}
		if err := s.ask(ctx, tool, req, commandScope(s.ws.Root(), dir, command, v), command, v.Rule, v.Reason); err != nil {
			return nil, nil, err
		}
	default:
		s.ws.log.Info(tool+" denied", "command", command, "cwd", dir, "rule", v.Rule)
		return nil, nil, &policy.DeniedError{Op: "run", Path: command, Rule: v.Rule, Decision: policy.Deny, Reason: v.Reason}
	}
	release = held
	if release == nil {
		// Wait while an exclusive auto-allowed command runs.
		if release, err = s.ws.gate.shared(ctx); err != nil {
			return nil, nil, err
		}
	}
	return &executor.Request{
		Command:     command,
		Dir:         dir,
		Env:         s.ws.commandEnv(s.caps.Sandboxed),
		Policy:      s.ws.checker.Policy(),
		Checker:     s.ws.checker,
		Root:        s.ws.Root(),
		Home:        s.ws.Home(),
		Grants:      grants,
		OutputLimit: s.ws.limits.MaxShellOutputChars,
		AskNetwork: func(pctx context.Context, host string, port uint16) bool {
			return s.askNetwork(callContext{pctx, ctx}, tool, command, host, port)
		},
	}, release, nil
}

// callContext is the context of a network ask: cancelled with the
// proxy's context, carrying the values of the tool call that started the
// command too, so an Approver can tell whose command asks.
type callContext struct {
	context.Context
	call context.Context
}

func (c callContext) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.call.Value(key)
}

// grantsOf turns the Ask path claims of an approved command into grants:
// one per path, a write grant winning over a read grant.
func grantsOf(v *policy.CommandVerdict) []policy.Grant {
	byPath := map[string]policy.Op{}
	var order []string
	for _, c := range v.Claims {
		cv := c.Verdict
		// An unresolved claim's Path is the word as written ("${e}nv"):
		// resolved later it could name anything a planted symbolic link
		// points to. It still asks; approving grants nothing for it.
		if cv == nil || cv.Decision != policy.Ask || cv.Path == "" || cv.Rule == policy.RuleUnresolvedPath || !filepath.IsAbs(cv.Path) {
			continue
		}
		op, seen := byPath[cv.Path]
		if !seen {
			order = append(order, cv.Path)
		}
		if !seen || cv.Op == policy.Write {
			op = cv.Op
		}
		byPath[cv.Path] = op
	}
	out := make([]policy.Grant, 0, len(order))
	for _, p := range order {
		out = append(out, policy.Grant{Path: p, Op: byPath[p]})
	}
	return out
}

// Run runs command in cwd ("" for the root) in the foreground, after the
// policy and, on ask, the approver. timeout 0 means the workspace's shell
// timeout; a longer one is clamped to it. A non-zero exit is a result, not
// an error.
func (s *Session) Run(ctx context.Context, command, cwd string, timeout time.Duration) (*RunResult, error) {
	if err := s.check("Run"); err != nil {
		return nil, err
	}
	if timeout < 0 {
		return nil, &ArgumentError{Arg: "timeout", Value: timeout.String(), Reason: "negative timeout"}
	}
	if timeout == 0 || timeout > s.ws.shellTimeout {
		timeout = s.ws.shellTimeout
	}
	return s.run(ctx, command, cwd, timeout, nil)
}

// RunAttached runs command like Run (the same gate, approvals, sandbox
// and guard), connected to the caller's streams: input, output as it is
// produced, a terminal of the command's own, signals (executor.Stdio);
// the RunResult still holds the output's head and tail. It is for a
// program that wraps another (sandbox-probe run -- agent): there is no
// timeout unless one is given (ctx, Close or timeout end the command).
// An executor that cannot connect streams refuses with an
// *executor.RequestError before anything runs.
func (s *Session) RunAttached(ctx context.Context, command, cwd string, timeout time.Duration, stdio *executor.Stdio) (*RunResult, error) {
	if err := s.check("RunAttached"); err != nil {
		return nil, err
	}
	if timeout < 0 {
		return nil, &ArgumentError{Arg: "timeout", Value: timeout.String(), Reason: "negative timeout"}
	}
	if stdio == nil {
		return nil, &ArgumentError{Arg: "stdio", Value: "<nil>", Reason: "no streams to connect (use Run)"}
	}
	return s.run(ctx, command, cwd, timeout, stdio)
}

// run is Run and RunAttached after their arguments' checks.
func (s *Session) run(ctx context.Context, command, cwd string, timeout time.Duration, stdio *executor.Stdio) (*RunResult, error) {
	req, release, err := s.authorizeCommand(ctx, "shell", "run", command, cwd)
	if err != nil {
		return nil, err
	}
	defer release()
	req.Timeout = timeout
	req.Stdio = stdio
	rctx, cancel := s.merge(ctx)
	defer cancel()
	res, err := s.ws.exec.Run(rctx, req)
	if err != nil {
		if s.closed.Load() {
			return nil, &ClosedError{Op: "Run"}
		}
		return nil, fmt.Errorf("running %q: %w", clip(command, 200), err)
	}
	if res.TimedOut && s.closed.Load() && ctx.Err() == nil && (timeout == 0 || res.Duration < timeout) {
		// Close ended the command, not its timeout or the caller.
		return nil, &ClosedError{Op: "Run"}
	}
	s.ws.log.Debug("shell done", "command", command, "exit", res.ExitCode, "timed_out", res.TimedOut, "duration", res.Duration)
	rr := &RunResult{
		Command:    command,
		Cwd:        s.ws.relOrAbs(req.Dir),
		ExitCode:   res.ExitCode,
		Signal:     res.Signal,
		Stdout:     string(res.Stdout),
		Stderr:     string(res.Stderr),
		TimedOut:   res.TimedOut,
		Truncated:  res.Truncated,
		DurationMS: res.Duration.Milliseconds(),
		Violations: res.Violations,
		Network:    res.Network,
	}
	s.report(rr, req.Dir)
	return rr, nil
}

// Spawn starts command in cwd ("" for the root) in the background, under
// the same policy gate, approvals and executor as Run, and returns its id.
// The executor must implement executor.Starter, else Spawn returns
// *BackgroundUnsupportedError. The process runs until it exits, KillProcess
// or Close; it has no timeout.
func (s *Session) Spawn(ctx context.Context, command, cwd string) (*ProcessInfo, error) {
	if err := s.check("Spawn"); err != nil {
		return nil, err
	}
	st, ok := s.ws.exec.(executor.Starter)
	if !ok {
		return nil, &BackgroundUnsupportedError{Executor: fmt.Sprintf("%T", s.ws.exec)}
	}
	req, release, err := s.authorizeCommand(ctx, "spawn_process", "spawn", command, cwd)
	if err != nil {
		return nil, err
	}
	p, err := st.Start(ctx, req)
	if err != nil {
		release()
		return nil, fmt.Errorf("starting %q: %w", clip(command, 200), err)
	}
	go func() {
		<-p.Done()
		release()
	}()
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		_ = p.Kill()
		release()
		return nil, &ClosedError{Op: "Spawn"}
	}
	s.nextID++
	bp := &bgProc{id: "p" + strconv.Itoa(s.nextID), num: s.nextID, command: command, cwd: s.ws.relOrAbs(req.Dir), started: time.Now(), p: p, release: release}
	s.procs[bp.id] = bp
	s.mu.Unlock()
	s.ws.log.Debug("spawned", "id", bp.id, "command", command)
	go s.watchExit(bp)
	info := bp.info(false)
	return &info, nil
}

// NotifyProcessExit makes f be called once, on its own goroutine, for each
// background process of the session that exits on its own (or is killed
// by a signal from elsewhere) while still in the table: not for a process
// ended by KillProcess or Close, whose caller already knows. f receives
// the process's passive status; its output stays unread for
// ReadProcessOutput. A later call replaces f; nil stops the calls.
func (s *Session) NotifyProcessExit(f func(ProcessInfo)) {
	s.mu.Lock()
	s.onExit = f
	s.mu.Unlock()
}

// watchExit waits for bp to exit and reports it to the NotifyProcessExit
// callback unless KillProcess or Close ended it.
func (s *Session) watchExit(bp *bgProc) {
	select {
	case <-bp.p.Done():
	case <-s.ctx.Done():
		return
	}
	s.mu.Lock()
	f := s.onExit
	current := s.procs[bp.id] == bp
	s.mu.Unlock()
	if f == nil || !current || bp.killed.Load() || s.closed.Load() {
		return
	}
	f(bp.info(true))
}

// lookup finds a process or returns *UnknownProcessError; s.mu is held.
func (s *Session) lookup(id string) (*bgProc, error) {
	bp, ok := s.procs[id]
	if !ok {
		return nil, &UnknownProcessError{ID: id, Live: s.idsLocked()}
	}
	return bp, nil
}

func (s *Session) idsLocked() []string {
	ps := make([]*bgProc, 0, len(s.procs))
	for _, bp := range s.procs {
		ps = append(ps, bp)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].num < ps[j].num })
	ids := make([]string, len(ps))
	for i, bp := range ps {
		ids[i] = bp.id
	}
	return ids
}

// exited reports whether the process has exited, without blocking.
func (bp *bgProc) exited() bool {
	select {
	case <-bp.p.Done():
		return true
	default:
		return false
	}
}

// status fills the status fields from a finished process's result.
func (bp *bgProc) finalStatus() (status string, code *int, signal string) {
	res := bp.p.Wait()
	if bp.killed.Load() || res.Signal != "" || res.ExitCode < 0 {
		return StatusKilled, nil, res.Signal
	}
	c := res.ExitCode
	return StatusExited, &c, ""
}

func (bp *bgProc) info(passive bool) ProcessInfo {
	pi := ProcessInfo{ID: bp.id, Command: bp.command, Cwd: bp.cwd, Status: StatusRunning, Started: bp.started}
	if p, ok := bp.p.(interface{ Pid() int }); ok {
		pi.Pid = p.Pid()
	}
	if passive && bp.exited() {
		pi.Status, pi.ExitCode, _ = bp.finalStatus()
	}
	return pi
}

// ReadProcessOutput returns the output the process produced since the
// last read and its status. Reading a process that has exited returns the
// rest of its output and its exit code, and removes it from the table (a
// later read reports an unknown id). An unknown id is an
// *UnknownProcessError listing the known ids.
func (s *Session) ReadProcessOutput(id string) (*ProcessOutput, error) {
	if err := s.check("ReadProcessOutput"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	bp, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	done := bp.exited()
	if done {
		delete(s.procs, id)
	}
	s.mu.Unlock()
	out := &ProcessOutput{ID: bp.id, Command: bp.command, Status: StatusRunning}
	if done {
		out.Status, out.ExitCode, out.Signal = bp.finalStatus()
	}
	b, dropped := bp.p.ReadOutput()
	out.Output, out.Dropped = string(b), dropped
	return out, nil
}

// KillProcess kills the process's whole group, waits until it is reaped,
// removes it from the table and returns its last unread output. A process
// that had already exited reports StatusExited and its code.
func (s *Session) KillProcess(id string) (*ProcessOutput, error) {
	if err := s.check("KillProcess"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	bp, err := s.lookup(id)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	delete(s.procs, id)
	if !bp.exited() {
		bp.killed.Store(true)
	}
	s.mu.Unlock()
	if err := bp.p.Kill(); err != nil {
		return nil, fmt.Errorf("killing background process %s: %w", id, err)
	}
	bp.release()
	out := &ProcessOutput{ID: bp.id, Command: bp.command}
	out.Status, out.ExitCode, out.Signal = bp.finalStatus()
	b, dropped := bp.p.ReadOutput()
	out.Output, out.Dropped = string(b), dropped
	s.ws.log.Debug("killed", "id", id)
	return out, nil
}

// BackgroundProcesses returns the status of every process in the table,
// in start order. It consumes no output and removes nothing.
func (s *Session) BackgroundProcesses() ([]ProcessInfo, error) {
	if err := s.check("BackgroundProcesses"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	ps := make([]*bgProc, 0, len(s.procs))
	for _, bp := range s.procs {
		ps = append(ps, bp)
	}
	s.mu.Unlock()
	slices.SortFunc(ps, func(a, b *bgProc) int { return a.num - b.num })
	out := make([]ProcessInfo, len(ps))
	for i, bp := range ps {
		out[i] = bp.info(true)
	}
	return out, nil
}

// clip shortens s to n bytes for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
