// Package backend is what the sandbox backends (executor/bwrap,
// executor/landlock, executor/seatbelt, executor/docker,
// executor/kubernetes) share around one command: the request's compiled
// policy derived into a profile (Derive), the protected-path guard's use
// (Guard, BeginGuard), the plan's looser elements as executor gaps (Gap,
// Gaps, GroupedGaps) and best effort's log of them, internal/procgroup's
// results as executor Results and background processes whose end
// includes the guard's repair (Watch), and the registry of placeholder
// mount points a mount-based sandbox makes its tool create on the host
// (Registry, Default).
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
