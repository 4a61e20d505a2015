package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/executor/seatbelt"
)

// backendOptions configure every backend sandbox-probe builds.
type backendOptions struct {
	// bestEffort opts into running despite gaps (never the default).
	bestEffort bool
	// dockerImage is the docker backend's image; "" is host mode.
	dockerImage string
	logger      *slog.Logger
}

// backend is one executor backend: how to build it and whether it is an
// OS sandbox. This table is the only place that names backend packages.
type backend struct {
	name string
	// sandboxed is false for local, which enforces nothing.
	sandboxed bool
	// goos lists the operating systems the backend runs on (nil: all).
	goos []string
	// newExecutor builds a fresh executor. nil means the backend is not
	// built into this program yet (its package does not exist).
	newExecutor func(o backendOptions) (executor.Executor, error)
	// missing says why newExecutor is nil; rebuild how to get it.
	missing, rebuild string
}

// backends is every backend, in the order tables show them. Planned
// backends whose packages have not landed have newExecutor nil: they are
// listed (and reported as not built in) but never run.
var backends = []backend{
	{
		name: landlock.Backend, sandboxed: true, goos: []string{"linux"},
		newExecutor: func(o backendOptions) (executor.Executor, error) {
			return landlock.New(landlock.Config{BestEffort: o.bestEffort, Logger: o.logger})
		},
	},
	{
		name: bwrap.Backend, sandboxed: true, goos: []string{"linux"},
		newExecutor: func(o backendOptions) (executor.Executor, error) {
			return bwrap.New(bwrap.Config{BestEffort: o.bestEffort, Logger: o.logger})
		},
	},
	dockerBackend,
	{
		name: seatbelt.Backend, sandboxed: true, goos: []string{"darwin"},
		newExecutor: func(o backendOptions) (executor.Executor, error) {
			return seatbelt.New(seatbelt.Config{BestEffort: o.bestEffort, Logger: o.logger})
		},
	},
	{
		name: "local", sandboxed: false,
		newExecutor: func(o backendOptions) (executor.Executor, error) {
			return executor.NewLocal(), nil
		},
	},
}

// backendNames returns the names of every backend.
func backendNames() []string {
	names := make([]string, len(backends))
	for i, b := range backends {
		names[i] = b.name
	}
	return names
}

// lookupBackend returns the backend called name.
func lookupBackend(name string) (*backend, error) {
	for i := range backends {
		if backends[i].name == name {
			return &backends[i], nil
		}
	}
	return nil, usageErrorf("unknown backend %q (known: %s)", name, strings.Join(backendNames(), ", "))
}

// parseBackends parses a --backend list ("landlock,bwrap"); repeated
// flags and commas both separate names. Duplicates are dropped.
func parseBackends(list []string) ([]*backend, error) {
	var out []*backend
	for _, item := range list {
		for _, name := range strings.Split(item, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			b, err := lookupBackend(name)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 && len(list) > 0 {
		return nil, usageErrorf("--backend names no backend (known: %s)", strings.Join(backendNames(), ", "))
	}
	return out, nil
}

// availability is what building a backend on this host showed.
type availability struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Sandboxed bool   `json:"sandboxed"`
	// Reason says why the backend is unavailable; Fix how to get it.
	Reason string `json:"reason,omitempty"`
	Fix    string `json:"fix,omitempty"`
	// Capabilities is the backend's Describe, when it could be built.
	Capabilities *executor.Capabilities `json:"capabilities,omitempty"`

	err error
}

// check builds the backend once, asks it what it enforces and closes it.
// A backend is available when it could be built and, for an OS sandbox,
// when its Describe says it sandboxes (landlock builds on a kernel without
// Landlock but then enforces nothing).
func (b *backend) check(ctx context.Context, o backendOptions) *availability {
	av := &availability{Name: b.name, Sandboxed: b.sandboxed}
	if len(b.goos) > 0 && !slices.Contains(b.goos, runtime.GOOS) {
		av.Reason = fmt.Sprintf("%s runs only on %s, not on %s", b.name, strings.Join(b.goos, ", "), runtime.GOOS)
		av.err = &executor.UnavailableError{Backend: b.name, Reason: av.Reason, Err: errors.ErrUnsupported}
		return av
	}
	if b.newExecutor == nil {
		av.Reason = b.missing
		av.Fix = b.rebuild
		if av.Fix == "" {
			av.Fix = "rebuild sandbox-probe from a cordon version that includes executor/" + b.name
		}
		av.err = &executor.UnavailableError{Backend: b.name, Reason: av.Reason, Fix: av.Fix}
		return av
	}
	x, err := b.newExecutor(o)
	if err != nil {
		av.err = err
		av.Reason, av.Fix = explainUnavailable(err)
		return av
	}
	defer closeExecutor(x)
	if d, ok := x.(executor.Describer); ok {
		caps := d.Describe(ctx)
		av.Capabilities = &caps
		if b.sandboxed && !caps.Sandboxed {
			av.Reason = b.name + " enforces nothing on this host"
			if t := caps.Info["troubleshooting"]; t != "" {
				av.Reason += ": " + t
			}
			av.err = &executor.UnavailableError{Backend: b.name, Reason: av.Reason}
			return av
		}
	}
	av.Available = true
	return av
}

// explainUnavailable splits a constructor's error into a reason and a fix.
func explainUnavailable(err error) (reason, fix string) {
	var ue *executor.UnavailableError
	if errors.As(err, &ue) {
		reason = ue.Reason
		if ue.Err != nil {
			reason += ": " + ue.Err.Error()
		}
		return oneLine(reason), oneLine(ue.Fix)
	}
	return oneLine(err.Error()), ""
}

// closeExecutor closes x when it holds resources.
func closeExecutor(x executor.Executor) {
	if c, ok := x.(io.Closer); ok {
		_ = c.Close()
	}
}

// availableBackends checks every backend (or the given ones) and returns
// the results in table order.
func checkBackends(ctx context.Context, list []*backend, o backendOptions) []*availability {
	if list == nil {
		for i := range backends {
			list = append(list, &backends[i])
		}
	}
	out := make([]*availability, len(list))
	for i, b := range list {
		out[i] = b.check(ctx, o)
	}
	return out
}
