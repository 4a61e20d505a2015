//go:build linux

package bwrap

import "github.com/cordon-sandbox/cordon/internal/mountpoints"

// mountPoints counts, process-wide, the sandboxes using each placeholder
// mount point that bwrap creates on the host (see package
// internal/mountpoints), so that the last one to end removes it, and
// concurrent sandboxes share one mount point and see the same thing.
var mountPoints = mountpoints.New()
