//go:build !nodocker

package main

import (
	"context"
	"fmt"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/docker"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// explainDocker returns what the docker executor of this host would
// enforce for a command in cwd (Executor.Explain, planned in best effort
// so that a profile strict mode refuses is still shown): in host mode
// with hostSystem, in image mode with image; nil where there is no engine,
// or neither mode was asked for.
func explainDocker(ws *workspaceSpec, cwd string, grants []policy.Grant, hostSystem bool, image string) (*DockerRendering, *policyderive.Fidelity) {
	if !hostSystem && image == "" {
		return nil, nil
	}
	cfg := docker.Config{BestEffort: true}
	if !hostSystem {
		cfg.Image = image
	}
	x, err := docker.New(cfg)
	if err != nil {
		return nil, nil
	}
	defer x.Close()
	e, err := x.Explain(context.Background(), &executor.Request{Command: "true", Root: ws.root, Home: ws.home, Dir: cwd, Policy: ws.policy, Grants: grants})
	if err != nil {
		return nil, nil
	}
	return &DockerRendering{Source: "executor", HostSystem: hostSystem, Image: cfg.Image, EngineMounts: dockerMounts(e),
		Network: e.Network, AllowList: e.AllowList, Seccomp: e.Seccomp}, e.Fidelity
}

// dockerMounts is e's mounts as DockerRendering shows them.
func dockerMounts(e *docker.Explanation) []DockerMount {
	out := make([]DockerMount, 0, len(e.Mounts))
	for _, m := range e.Mounts {
		dm := DockerMount{Type: string(m.Type), Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly}
		if b := m.BindOptions; b != nil {
			dm.Propagation, dm.NonRecursive, dm.ReadOnlyNonRecursive = string(b.Propagation), b.NonRecursive, b.ReadOnlyNonRecursive
		}
		if t := m.TmpfsOptions; t != nil {
			dm.TmpfsSize = t.SizeBytes
			if t.Mode != 0 {
				dm.TmpfsMode = fmt.Sprintf("%#o", uint32(t.Mode))
			}
		}
		out = append(out, dm)
	}
	return out
}
