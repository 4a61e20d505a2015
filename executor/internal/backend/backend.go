// Package backend is what the sandbox backends (executor/bwrap,
// executor/landlock, executor/seatbelt, executor/docker,
// executor/kubernetes) share around one command, and where their common
// per-command pipeline is written down. Every backend runs a command in
// these steps, the shared ones here, the backend's own in its package:
//
//  1. Admit: the request is well formed, the executor open, the context
//     live.
//  2. Derive: the profile, from the request's compiled policy
//     (executor.Request.Checker; nothing is compiled per command) and
//     the backend's policyderive.Deriver with its injected ScanCache.
//     The host state derivation depends on is passed in, never patched
//     onto its output: the tree itself, and for the mount-based
//     backends the placeholder mount points live in this process
//     (Registry.Derive, DeriveLive: derived again when that set changed
//     meanwhile).
//  3. Plan (the backend's): the profile rendered for the backend and
//     assessed on this host — one fidelity report, the backend's
//     mitigations and gaps included — cached by the profile's key. The
//     backend's Explain (and Assess, Args) returns this same plan, which
//     sandbox-probe derive prints.
//  4. Decide (BestEffortLog.Decide): strict mode refuses a plan with
//     blocking gaps; best effort notes them for Describe.
//  5. Guard and BeginGuard: the protected-path guard of the request's
//     protect rules over the plan's writable trees.
//  6. Start: the process, its group, cgroup, namespaces, network proxy
//     session. A backend whose sandbox is a process group on this host
//     (bwrap, landlock, seatbelt) prepares a Command — the process spec
//     and hooks saying how to let go of what only the start needed, how
//     to end, and how to judge the outcome — and Command.Run or
//     Command.Start drive steps 6 and 7 for it. docker and kubernetes
//     start in a container or pod through their engine's API and end it
//     with their own watchdog.
//  7. End: the backend kills what is left of the command, then the
//     guard's End repairs and reports; Watch turns a background process
//     into an executor.Process whose Done follows that end, and Result
//     turns procgroup's result into an executor.Result.
//
// Also here: the plan's looser elements as executor gaps (Gap, Gaps,
// GroupedGaps) and the registry of placeholder mount points a
// mount-based sandbox makes its tool create on the host (Registry,
// Default).
//
// It lives under executor/ because it imports executor and
// policyderive: nothing in the root internal/ points back up into them.
package backend

import (
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
)

// Result returns r as an executor.Result (no violations).
func Result(r *procgroup.Result) *executor.Result {
	return &executor.Result{
		ExitCode:  r.ExitCode,
		Signal:    r.Signal,
		Stdout:    r.Stdout,
		Stderr:    r.Stderr,
		TimedOut:  r.TimedOut,
		Truncated: r.Truncated,
		Duration:  r.Duration,
	}
}

// Process is a background command as an executor.Process: Done closes,
// and Wait and Kill return, only after its end step ran.
type Process struct {
	p          *procgroup.Process
	done       chan struct{}
	violations []string
	fix        func(*executor.Result)
}

var _ executor.Process = (*Process)(nil)

// Watch returns the Process for p. When p has exited, end runs with p's
// result (the repair: its return value becomes Result.Violations) and
// then Done closes. fix, if not nil, adjusts the Result Wait returns.
func Watch(p *procgroup.Process, end func(*procgroup.Result) []string, fix func(*executor.Result)) *Process {
	bp := &Process{p: p, done: make(chan struct{}), fix: fix}
	go func() {
		<-p.Done()
		bp.violations = end(p.Wait())
		close(bp.done)
	}()
	return bp
}

// ReadOutput returns the merged output not read before and whether older
// unread output was dropped.
func (bp *Process) ReadOutput() ([]byte, bool) { return bp.p.ReadOutput() }

// Done is closed when the command has exited and its end step ran.
func (bp *Process) Done() <-chan struct{} { return bp.done }

// Wait waits for Done and returns the command's result.
func (bp *Process) Wait() *executor.Result {
	<-bp.done
	res := Result(bp.p.Wait())
	res.Violations = bp.violations
	if bp.fix != nil {
		bp.fix(res)
	}
	return res
}

// Kill kills the command's whole tree and waits for Done.
func (bp *Process) Kill() error {
	err := bp.p.Kill()
	<-bp.done
	return err
}

// Pid returns the process id of the command's leader on the host.
func (bp *Process) Pid() int { return bp.p.Pid() }
