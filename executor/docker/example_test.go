//go:build unix

package docker_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cordon-sandbox/cordon/executor/docker"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// A workspace whose commands run in one Docker container per session, in
// host mode (the host's system paths bound read-only into an empty image,
// so no registry is needed). The engine is the one DOCKER_HOST names.
func Example() {
	x, err := docker.New(docker.Config{}) // Image "": host mode
	if err != nil {
		log.Fatal(err) // *executor.UnavailableError when no engine answers
	}
	defer x.Close() // removes the session's container

	ws, err := workspace.Local("/home/me/project", workspace.WithMode(policy.Coding), workspace.WithExecutor(x))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	s, err := ws.Open(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(ctx, "go test ./...", "", 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.ExitCode)
}
