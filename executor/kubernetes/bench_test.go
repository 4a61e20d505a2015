//go:build linux

package kubernetes_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// BenchmarkKubernetesExecTrue compares, interleaved in one run, the
// latency of `true` through the executor (derivation, one request over
// the session's cordon-pod serve stream, the in-pod Landlock sandbox and
// its guard) with `kubectl exec POD -- true` into the same session pod,
// and reports the session's start-up (the first command: Job created,
// pod Running, serve Ready) as startup-ms.
//
//	scripts/kube.sh up && set -a && . build/kube/env && set +a
//	go test -run '^$' -bench KubernetesExecTrue -benchtime 30x ./executor/kubernetes/
func BenchmarkKubernetesExecTrue(b *testing.B) {
	cfg := kubeConfig(b)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		testenv.Skip(b, testenv.Kubernetes, "kubectl is not installed (the comparison runs kubectl exec)")
	}
	x := newExecutor(b, cfg)
	root := benchRoot(b)
	req := request(root, "true")
	ctx := context.Background()
	t0 := time.Now()
	if res, err := x.Run(ctx, req); err != nil || res.ExitCode != 0 { // starts the session
		b.Fatalf("first command: %v %+v", err, res)
	}
	startup := time.Since(t0)
	args := []string{"--kubeconfig", cfg.Kubeconfig, "-n", x.Namespace(), "exec", x.PodName(), "--", "true"}
	testenv.Interleave(b,
		testenv.Op{Name: "kubectl-exec", Run: func() error {
			if out, err := exec.Command(kubectl, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}},
		testenv.Op{Name: "executor", Base: "kubectl-exec", Run: func() error {
			res, err := x.Run(ctx, req)
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
			}
			return err
		}},
	)
	b.ReportMetric(float64(startup.Milliseconds()), "startup-ms")
}

func benchRoot(b *testing.B) string {
	b.Helper()
	root, err := os.MkdirTemp("/var/tmp", "cordon-kube-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(root) })
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		b.Fatal(err)
	}
	return root
}
