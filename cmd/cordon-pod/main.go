// Command cordon-pod is the kubernetes executor's helper inside the
// session pod: its PID 1 (init), the session every command runs over
// (serve) and the sandbox's own description (describe). See package
// executor/kubernetes/podhelper. It belongs in the pod's image at
// kubernetes.DefaultHelper, built with CGO_ENABLED=0:
//
//	CGO_ENABLED=0 go build -o rootfs/usr/local/bin/cordon-pod ./cmd/cordon-pod
package main

import (
	"github.com/cordon-sandbox/cordon/executor/kubernetes/podhelper"
	"github.com/cordon-sandbox/cordon/executor/landlock"
)

func main() {
	landlock.Init()
	podhelper.Main()
}
