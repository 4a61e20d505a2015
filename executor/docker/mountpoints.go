package docker

import "github.com/cordon-sandbox/cordon/internal/mountpoints"

// mountPoints counts, process-wide, the containers using each placeholder
// mount point the container runtime creates on the host (see package
// internal/mountpoints), so that the last container to be removed
// removes it, and a profile derived while one exists keeps the
// placeholder (so the mounts, and with them the container, stay the same
// from one command to the next).
var mountPoints = mountpoints.New()
