//go:build !linux

package docker

import "context"

// sweepSupported is false here: the container's processes are not in
// this host's /proc.
const sweepSupported = false

// initProc is the host's view of a container's init (Linux only).
type initProc struct{}

func (x *Executor) sweep(context.Context, *box) string { return "" }

func (x *Executor) runnerPid(context.Context, *box, int) (int, error) { return 0, nil }
