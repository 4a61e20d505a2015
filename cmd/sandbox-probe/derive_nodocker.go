//go:build nodocker

package main

import (
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// explainDocker: without the docker backend (-tags nodocker) derive shows
// the renderer's mounts.
func explainDocker(*workspaceSpec, string, []policy.Grant, bool, string) (*DockerRendering, *policyderive.Fidelity) {
	return nil, nil
}
