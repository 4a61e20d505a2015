package backend

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cordon-sandbox/cordon/executor"
)

// Admit is the first step of every backend's per-command pipeline: the
// request is well formed (executor.Request.ValidateSandboxed: a
// *executor.RequestError otherwise), the executor is not closed (closed
// returns the error, wrapping executor.ErrClosed, once it is) and ctx is
// not done. Nothing has been derived or started when it fails. It returns
// the request the rest of the pipeline uses: req itself when it carries
// its compiled policy (a workspace's do), else a copy compiled once here
// (executor.Request.Compile: Policy, Root and Home become the checker's
// normalised policy and resolved paths), so that no later step compiles
// it again.
func Admit(ctx context.Context, req *executor.Request, closed func() error) (*executor.Request, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, err
	}
	if err := closed(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Checker != nil {
		return req, nil
	}
	cp := *req
	if err := cp.Compile(); err != nil {
		return nil, err
	}
	return &cp, nil
}

// Closed returns Admit's closed func for the named executor whose Close
// closes ch.
func Closed(name string, ch <-chan struct{}) func() error {
	return func() error {
		select {
		case <-ch:
			return fmt.Errorf("%s executor: %w", name, executor.ErrClosed)
		default:
			return nil
		}
	}
}

// Decide is strict mode's verdict on a plan's blocking gaps, the step
// after derivation and planning in every backend's pipeline: none, nil;
// in strict mode, an *executor.UnenforceableError naming them (nothing is
// started); in best effort (bestEffort), they are noted in l (Describe
// reports them; a warning is logged once per new gap) and the command
// runs.
func (l *BestEffortLog) Decide(log *slog.Logger, name string, bestEffort bool, blocking []executor.Gap) error {
	if len(blocking) == 0 {
		return nil
	}
	if !bestEffort {
		return &executor.UnenforceableError{Backend: name, Gaps: blocking}
	}
	l.Note(log, name, blocking)
	return nil
}
