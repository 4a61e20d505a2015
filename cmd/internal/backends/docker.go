//go:build !nodocker

package backends

import (
	"errors"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/docker"
)

// dockerBackend is the docker backend's table entry.
var dockerBackend = Backend{
	Name: docker.Backend, Sandboxed: true,
	New: func(o Options) (executor.Executor, error) {
		return docker.New(docker.Config{Image: o.DockerImage, BestEffort: o.BestEffort, Logger: o.Logger})
	},
}

// DockerUnavailable summarises why the docker backend cannot run, or "".
func DockerUnavailable(err error) string {
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
