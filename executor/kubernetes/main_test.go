//go:build linux

package kubernetes_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/kubernetes"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// strayEnv makes the test binary act as a caller that dies without
// closing its executor: it runs one command with the root in the
// variable, prints the session pod's name and kills itself (SIGKILL).
const strayEnv = "CORDON_KUBE_TEST_STRAY"

// strayPendingEnv, set with strayEnv, makes the stray caller's session
// pod unschedulable (it asks for more CPU than any node has) and its
// start timeout StrayStartTimeout: the caller dies while the pod is
// pending, after printing its executor's ID.
const strayPendingEnv = "CORDON_KUBE_TEST_STRAY_PENDING"

// strayStartTimeout is the pending stray's Config.StartTimeout.
const strayStartTimeout = 5 * time.Second

func TestMain(m *testing.M) {
	probe.MaybeRun()
	if root := os.Getenv(strayEnv); root != "" {
		os.Exit(stray(root))
	}
	os.Exit(m.Run())
}

func stray(root string) int {
	kc, image, ns := testenv.Kube()
	cfg := kubernetes.Config{Kubeconfig: kc, Image: image, Namespace: ns, PullPolicy: corev1.PullNever}
	pending := os.Getenv(strayPendingEnv) != ""
	if pending {
		cfg.StartTimeout = strayStartTimeout
		cfg.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100000")}
	}
	x, err := kubernetes.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if pending {
		go x.Run(context.Background(), &executor.Request{Command: "true", Dir: root, Root: root, Policy: policy.Coding.Policy(), Timeout: time.Minute})
		time.Sleep(strayStartTimeout / 2) // the Job exists, its pod pends
		fmt.Println(x.ID())
		os.Stdout.Sync()
		p, _ := os.FindProcess(os.Getpid())
		p.Kill()
		select {}
	}
	_, err = x.Run(context.Background(), &executor.Request{Command: "true", Dir: root, Root: root, Policy: policy.Coding.Policy(), Timeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(x.PodName())
	os.Stdout.Sync()
	p, _ := os.FindProcess(os.Getpid())
	p.Kill() // no Close: the caller dies
	select {}
}

// strayCaller runs the test binary as a caller that dies with a session
// pod, and returns the pod's name (with strayPendingEnv in env: its
// executor's ID).
func strayCaller(t *testing.T, root string, env ...string) (string, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), strayEnv+"="+root), env...)
	out, err := cmd.Output()
	if len(out) > 0 {
		err = nil // it was killed, as it meant to be
	}
	return string(trimNL(out)), err
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// kubeConfig returns the Config of the private test cluster, skipping
// (or failing, when CORDON_REQUIRE names kubernetes) where make test
// brought up none.
func kubeConfig(t testing.TB) kubernetes.Config {
	t.Helper()
	kc, image, ns := testenv.Kube()
	testenv.Require(t, testenv.Kubernetes, kc != "" && image != "",
		"KUBECONFIG and CORDON_KUBE_IMAGE are not set (make test brings up a private single-node cluster as root on Linux: scripts/kube.sh up; set -a; . build/kube/env; set +a)")
	return kubernetes.Config{Kubeconfig: kc, Image: image, Namespace: ns, PullPolicy: corev1.PullNever}
}

// newExecutor returns an executor on the test cluster, closed at the end
// of the test.
func newExecutor(t testing.TB, cfg kubernetes.Config) *kubernetes.Executor {
	t.Helper()
	x, err := kubernetes.New(cfg)
	testenv.SkipUnavailable(t, testenv.Kubernetes, err)
	t.Cleanup(func() { x.Close() })
	return x
}
