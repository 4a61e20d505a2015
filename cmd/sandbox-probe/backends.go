package main

import (
	"context"

	"github.com/cordon-sandbox/cordon/cmd/internal/backends"
	"github.com/cordon-sandbox/cordon/executor"
)

// The backend table lives in cmd/internal/backends, shared with cmd/cordon;
// these names keep sandbox-probe's code short.
type (
	backend        = backends.Backend
	backendOptions = backends.Options
	availability   = backends.Availability
)

func backendNames() []string { return backends.Names() }

// lookupBackend returns the backend called name; an unknown name is a
// usage error.
func lookupBackend(name string) (*backend, error) {
	b, err := backends.Lookup(name)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return b, nil
}

// parseBackends parses a --backend list; a bad one is a usage error.
func parseBackends(list []string) ([]*backend, error) {
	out, err := backends.Parse(list)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return out, nil
}

func checkBackends(ctx context.Context, list []*backend, o backendOptions) []*availability {
	return backends.CheckAll(ctx, list, o)
}

func explainUnavailable(err error) (reason, fix string) { return backends.ExplainUnavailable(err) }

func dockerUnavailable(err error) string { return backends.DockerUnavailable(err) }

func closeExecutor(x executor.Executor) { backends.Close(x) }
