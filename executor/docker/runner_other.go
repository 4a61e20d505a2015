//go:build !linux

package docker

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/docker/docker/api/types/mount"

	"github.com/cordon-sandbox/cordon/executor"
)

// runnerSupported is false here: the command runner talks to the
// container through FIFOs, which need the engine on this host's kernel.
const runnerSupported = false

type runner struct{}

func (r *runner) close() {}

func (r *runner) alive() bool { return false }

func controlDir() (string, error) { return "", errors.ErrUnsupported }

func controlMount(string) mount.Mount { return mount.Mount{} }

func (x *Executor) startRunner(context.Context, *box) *runner { return nil }

var errNoFastPath = errors.New("no fast path for this command")

func (x *Executor) fastExec(context.Context, *box, *executor.Request, string, io.Writer, io.Writer,
	time.Duration, <-chan struct{}, <-chan struct{}, chan<- error) (*execOut, error) {
	return nil, errNoFastPath
}
