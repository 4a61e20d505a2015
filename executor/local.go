package executor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/cordon-sandbox/cordon/internal/procgroup"
)

// Shell is the program every request's Command runs under, as Shell -c Command.
const Shell = "/bin/sh"

// ErrInvalidRequest is wrapped by *RequestError.
var ErrInvalidRequest = errors.New("invalid executor request")

// RequestError reports a Request an executor cannot run as given. It
// unwraps to ErrInvalidRequest.
type RequestError struct {
	Field, Value, Reason string
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("executor request: %s %q: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidRequest.
func (e *RequestError) Unwrap() error { return ErrInvalidRequest }

// Local runs commands on the host with cordon's process hygiene and no
// isolation at all: every path the user can reach, the command can reach.
// It ignores Request.Policy, Root, Home and Grants.
//
// The zero value is ready to use; NewLocal returns one. Commands are forked
// from the process-wide launcher thread (NO_NEW_PRIVS set on it only). A
// Local is safe for concurrent use.
type Local struct {
	// WaitDelay bounds how long output pipes are still read after the
	// command exited and its process group was killed, so a descendant
	// that escaped the kill and holds stdout cannot hang Run; 0 means one
	// second.
	WaitDelay time.Duration
}

var (
	_ Executor  = (*Local)(nil)
	_ Starter   = (*Local)(nil)
	_ Describer = (*Local)(nil)
)

// NewLocal returns a Local with default settings.
func NewLocal() *Local { return &Local{} }

// spec translates req into the plumbing's command spec: Shell -c Command.
func (l *Local) spec(req *Request) (*procgroup.Spec, error) {
	if req == nil {
		return nil, &RequestError{Field: "Request", Value: "<nil>", Reason: "no request"}
	}
	if req.Timeout < 0 {
		return nil, &RequestError{Field: "Timeout", Value: req.Timeout.String(), Reason: "negative timeout"}
	}
	if req.OutputLimit < 0 {
		return nil, &RequestError{Field: "OutputLimit", Value: fmt.Sprint(req.OutputLimit), Reason: "negative output limit"}
	}
	return &procgroup.Spec{
		Path:        Shell,
		Args:        []string{"sh", "-c", req.Command},
		Env:         req.Env,
		Dir:         req.Dir,
		Timeout:     req.Timeout,
		OutputLimit: req.OutputLimit, // 0: procgroup.DefaultOutputLimit
		WaitDelay:   l.WaitDelay,
		Stdio:       req.Stdio,
	}, nil
}

// Run runs req.Command under /bin/sh -c in req.Dir with exactly req.Env.
func (l *Local) Run(ctx context.Context, req *Request) (*Result, error) {
	spec, err := l.spec(req)
	if err != nil {
		return nil, err
	}
	res, err := procgroup.Run(ctx, spec)
	if err != nil {
		return nil, l.startError(err)
	}
	return convert(res), nil
}

// Start starts req.Command in the background; stdout and stderr are merged
// into a ring buffer keeping the newest OutputLimit bytes. Request.Timeout
// is ignored and ctx only governs the start: the process runs until it
// exits or is killed.
func (l *Local) Start(ctx context.Context, req *Request) (Process, error) {
	spec, err := l.spec(req)
	if err != nil {
		return nil, err
	}
	spec.Timeout = 0
	p, err := procgroup.Start(ctx, spec)
	if err != nil {
		return nil, l.startError(err)
	}
	return &localProcess{p: p}, nil
}

func (l *Local) startError(err error) error {
	if errors.Is(err, errors.ErrUnsupported) {
		return &UnavailableError{Backend: "local", Reason: fmt.Sprintf("no process-group plumbing on %s", runtime.GOOS), Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("local executor: %w", err)
}

// Describe reports Backend "local", Sandboxed false, and no controls
// enforced and no gaps declared: every isolation case is expected to leak.
func (l *Local) Describe(ctx context.Context) Capabilities {
	return Capabilities{
		Backend:   "local",
		Sandboxed: false,
		Enforced:  []Control{},
		Gaps:      []Gap{},
		Info: map[string]string{
			"isolation": "none: the policy is not enforced by the OS",
			"network":   "not enforced: commands share the host's network whatever the policy says; no allow-list proxy runs (network.allow is only judged by the gate, never enforced)",
			"hygiene":   "new session, stdin /dev/null, exact environment, descriptors 0-2 only, no_new_privs, tree kill on timeout",
		},
	}
}

func convert(r *procgroup.Result) *Result {
	return &Result{
		ExitCode:  r.ExitCode,
		Signal:    r.Signal,
		Stdout:    r.Stdout,
		Stderr:    r.Stderr,
		TimedOut:  r.TimedOut,
		Truncated: r.Truncated,
		Duration:  r.Duration,
	}
}

// localProcess adapts *procgroup.Process to Process.
type localProcess struct {
	p *procgroup.Process
}

func (lp *localProcess) ReadOutput() ([]byte, bool) { return lp.p.ReadOutput() }
func (lp *localProcess) Done() <-chan struct{}      { return lp.p.Done() }
func (lp *localProcess) Wait() *Result              { return convert(lp.p.Wait()) }
func (lp *localProcess) Kill() error                { return lp.p.Kill() }

// Pid returns the process id of the background command's leader.
func (lp *localProcess) Pid() int { return lp.p.Pid() }
