//go:build !linux

package bwrap

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// Executor runs commands under bubblewrap, which exists only on Linux:
// elsewhere New always fails.
type Executor struct{}

var (
	_ executor.Executor  = (*Executor)(nil)
	_ executor.Starter   = (*Executor)(nil)
	_ executor.Describer = (*Executor)(nil)
)

func unavailable() error {
	return &executor.UnavailableError{Backend: Backend,
		Reason: fmt.Sprintf("bubblewrap is Linux-only: not implemented on %s/%s", runtime.GOOS, runtime.GOARCH),
		Fix:    "use the seatbelt backend on macOS or the docker backend", Err: errors.ErrUnsupported}
}

// New fails with *executor.UnavailableError: bubblewrap is Linux-only.
func New(cfg Config) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return nil, unavailable()
}

// Path returns "".
func (x *Executor) Path() string { return "" }

// Version returns "".
func (x *Executor) Version() string { return "" }

// Close does nothing.
func (x *Executor) Close() error { return nil }

// Run fails with *executor.UnavailableError.
func (x *Executor) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	return nil, unavailable()
}

// Start fails with *executor.UnavailableError.
func (x *Executor) Start(ctx context.Context, req *executor.Request) (executor.Process, error) {
	return nil, unavailable()
}

// Args fails with *executor.UnavailableError.
func (x *Executor) Args(ctx context.Context, req *executor.Request) ([]string, error) {
	return nil, unavailable()
}

// Explain fails with *executor.UnavailableError.
func (x *Executor) Explain(ctx context.Context, req *executor.Request) ([]string, *policyderive.Fidelity, error) {
	return nil, nil, unavailable()
}

// Describe reports an executor that enforces nothing here.
func (x *Executor) Describe(ctx context.Context) executor.Capabilities {
	return executor.Capabilities{Backend: Backend, Enforced: []executor.Control{}, Gaps: []executor.Gap{},
		Info: map[string]string{"error": unavailable().Error()}}
}
