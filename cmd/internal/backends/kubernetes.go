package backends

import (
	"errors"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/kubernetes"
)

// kubernetesBackend is the kubernetes backend's table entry. It is never
// chosen by Auto: it runs commands on a cluster, which must be named.
var kubernetesBackend = Backend{
	Name: kubernetes.Backend, Sandboxed: true,
	New: func(o Options) (executor.Executor, error) {
		if o.KubeImage == "" {
			return nil, &executor.UnavailableError{Backend: kubernetes.Backend, Reason: "no image: the session pod needs one holding a shell and cordon-pod",
				Fix: "pass --kube-image (an image with cmd/cordon-pod at " + kubernetes.DefaultHelper + ") and point KUBECONFIG at the cluster", Err: errors.ErrUnsupported}
		}
		return kubernetes.New(kubernetes.Config{Image: o.KubeImage, Kubeconfig: o.Kubeconfig, Namespace: o.KubeNamespace,
			HostNetworkWhenFull: o.KubeHostNetwork, BestEffort: o.BestEffort, Logger: o.Logger})
	},
}
