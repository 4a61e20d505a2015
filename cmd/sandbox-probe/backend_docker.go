//go:build !nodocker

package main

import (
	"errors"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/docker"
)

// dockerBackend is the docker backend's table entry. Build with -tags
// nodocker to leave the backend (and the Docker client) out.
var dockerBackend = backend{
	name: docker.Backend, sandboxed: true,
	newExecutor: func(o backendOptions) (executor.Executor, error) {
		return docker.New(docker.Config{Image: o.dockerImage, BestEffort: o.bestEffort, Logger: o.logger})
	},
}

// dockerUnavailable summarises why the docker backend cannot run.
func dockerUnavailable(err error) string {
	switch {
	case errors.Is(err, docker.ErrNoEngine):
		return "engine not reachable"
	case errors.Is(err, docker.ErrNoImage):
		return "image not present"
	case errors.Is(err, docker.ErrEngine):
		return "engine cannot run cordon's containers"
	}
	return ""
}
