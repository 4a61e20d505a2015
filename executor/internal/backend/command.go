package backend

import (
	"context"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
	"github.com/cordon-sandbox/cordon/netproxy"
)

// Command is the back half of the pipeline (steps 6 and 7) for a backend
// whose sandbox is a process group on this host (bwrap, landlock,
// seatbelt): Run and Start start it, end it and make its Result; the
// backend's prepared command says only how, in these fields.
type Command struct {
	// Spec is the process to start.
	Spec *procgroup.Spec
	// Launched, if not nil, runs once the start returned (err is its
	// error): it frees what only the start needed, and returns an error
	// when the sandbox did not come up after all (the command never ran).
	Launched func(err error) error
	// End runs once, after the command and everything it started in the
	// sandbox have ended (res is nil when it never started): the backend
	// kills what is left, removes what it made on the host and has the
	// guard repair. It returns the command's violations.
	End func(ctx context.Context, res *procgroup.Result) []string
	// Outcome, if not nil, judges Run's ended command: an error (the
	// sandbox tool's own failure, say) is returned instead of a Result.
	Outcome func(ctx context.Context, res *procgroup.Result) error
	// StartError turns an error of the start into the backend's.
	StartError func(error) error
	// Network, if not nil, returns the command's network decisions; it is
	// called after End.
	Network func() []netproxy.Event
	// Fix, if not nil, adjusts every Result (Run's and a background
	// process's Wait's).
	Fix func(*executor.Result)
}

// Run runs c to its end and returns its Result.
func (c *Command) Run(ctx context.Context) (*executor.Result, error) {
	res, err := procgroup.Run(ctx, c.Spec)
	if c.Launched != nil {
		if lerr := c.Launched(err); err == nil {
			err = lerr
		}
	}
	if err != nil {
		c.End(ctx, nil)
		return nil, c.StartError(err)
	}
	out := Result(res)
	out.Violations = c.End(ctx, res)
	if c.Network != nil {
		out.Network = c.Network()
	}
	if c.Outcome != nil {
		if err := c.Outcome(ctx, res); err != nil {
			return nil, err
		}
	}
	if c.Fix != nil {
		c.Fix(out)
	}
	return out, nil
}

// Start starts c in the background (its stdout and stderr merged, no
// timeout: Spec.Timeout is cleared; ctx governs only the start) and
// returns it as an executor.Process whose end step is c.End.
func (c *Command) Start(ctx context.Context) (executor.Process, error) {
	c.Spec.Timeout = 0
	p, err := procgroup.Start(ctx, c.Spec)
	if c.Launched != nil {
		if lerr := c.Launched(err); err == nil && lerr != nil {
			err = lerr
			p.Wait()
		}
	}
	if err != nil {
		c.End(ctx, nil)
		return nil, c.StartError(err)
	}
	return Watch(p, func(res *procgroup.Result) []string {
		return c.End(context.WithoutCancel(ctx), res)
	}, c.Fix), nil
}
