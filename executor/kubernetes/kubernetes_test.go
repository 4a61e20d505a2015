//go:build linux

package kubernetes_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/kubernetes"
	"github.com/cordon-sandbox/cordon/policy"
)

var gitEnv = conformance.WithEnv("GIT_CONFIG_GLOBAL=/dev/null")

// TestConformance runs the shared suite through session pods on the
// private cluster.
func TestConformance(t *testing.T) {
	cfg := kubeConfig(t)
	// The suite's canaries listen on the host's loopback: network full
	// must mean the node's network, as in the docker backend.
	cfg.HostNetworkWhenFull = true
	conformance.Run(t, func(t *testing.T) executor.Executor { return newExecutor(t, cfg) }, gitEnv)
}

// client returns a clientset of the test cluster.
func client(t *testing.T, cfg kubernetes.Config) k8s.Interface {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	require.NoError(t, err)
	cs, err := k8s.NewForConfig(rc)
	require.NoError(t, err)
	return cs
}

func workspace(t *testing.T) string {
	t.Helper()
	root, err := os.MkdirTemp("/var/tmp", "cordon-kube-test-")
	require.NoError(t, err)
	root, err = filepath.EvalSymlinks(root)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	return root
}

func request(root, command string) *executor.Request {
	return &executor.Request{Command: command, Dir: root, Root: root, Policy: policy.Coding.Policy(),
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Timeout: time.Minute}
}

// readUntil reads p's output until it holds want, or for 30 s.
func readUntil(p executor.Process, want string) string {
	var out []byte
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(string(out), want) && time.Now().Before(deadline) {
		b, _ := p.ReadOutput()
		out = append(out, b...)
		time.Sleep(20 * time.Millisecond)
	}
	return string(out)
}

// podGone waits until the API has no pod of that name.
func podGone(t *testing.T, cs k8s.Interface, ns, name string, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		_, err := cs.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// TestCloseDeletesSession: Close removes the session's pod and Job, seen
// through the API; while the executor is open, they stay.
func TestCloseDeletesSession(t *testing.T) {
	cfg := kubeConfig(t)
	x := newExecutor(t, cfg)
	cs := client(t, cfg)
	root := workspace(t)
	res, err := x.Run(t.Context(), request(root, "echo hello > out.txt"))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	b, err := os.ReadFile(filepath.Join(root, "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(b), "the command's write reached the host's root")
	pod := x.PodName()
	require.NotEmpty(t, pod)
	ns := x.Namespace()
	// The twin: the pod stays while the executor is open.
	time.Sleep(2 * time.Second)
	p, err := cs.CoreV1().Pods(ns).Get(t.Context(), pod, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "Running", string(p.Status.Phase))
	assert.Equal(t, x.ID(), p.Labels[kubernetes.LabelExecutor])

	require.NoError(t, x.Close())
	assert.True(t, podGone(t, cs, ns, pod, 30*time.Second), "pod %s still exists after Close", pod)
	jobs, err := cs.BatchV1().Jobs(ns).List(t.Context(), metav1.ListOptions{LabelSelector: kubernetes.LabelExecutor + "=" + x.ID()})
	require.NoError(t, err)
	assert.Empty(t, jobs.Items)
	nps, err := cs.NetworkingV1().NetworkPolicies(ns).List(t.Context(), metav1.ListOptions{LabelSelector: kubernetes.LabelExecutor + "=" + x.ID()})
	require.NoError(t, err)
	assert.Empty(t, nps.Items)
	_, err = x.Run(t.Context(), request(root, "true"))
	assert.ErrorIs(t, err, kubernetes.ErrClosed)
	assert.ErrorIs(t, err, executor.ErrClosed, "as every executor's")
}

// TestKilledCaller: a caller killed with SIGKILL, with no Close, leaves
// no pod: the session's exec ends, PID 1 exits, the Job finishes and its TTL
// deletes it and the pod. Checked with the API.
func TestKilledCaller(t *testing.T) {
	cfg := kubeConfig(t)
	newExecutor(t, cfg) // skips where there is no cluster
	cs := client(t, cfg)
	root := workspace(t)
	pod, err := strayCaller(t, root)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(pod, "cordon-"), "the stray caller printed %q", pod)
	assert.True(t, podGone(t, cs, cfg.Namespace, pod, 90*time.Second), "pod %s of a killed caller still exists", pod)
}

// TestKilledCallerPending: a caller killed while its session pod is
// still pending (unschedulable) leaves no Job: the Job's start deadline
// fails it and its TTL deletes it, checked through the API. The twin:
// the Job existed when the caller died.
func TestKilledCallerPending(t *testing.T) {
	cfg := kubeConfig(t)
	newExecutor(t, cfg) // skips where there is no cluster
	cs := client(t, cfg)
	root := workspace(t)
	id, err := strayCaller(t, root, strayPendingEnv+"=1")
	require.NoError(t, err)
	require.NotEmpty(t, id, "the stray caller printed no executor ID")
	sel := kubernetes.LabelExecutor + "=" + id
	jobs := func() int {
		l, err := cs.BatchV1().Jobs(cfg.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: sel})
		require.NoError(t, err)
		return len(l.Items)
	}
	require.Equal(t, 1, jobs(), "the stray caller's Job did not exist when it died (fixture)")
	deadline := time.Now().Add(strayStartTimeout + 90*time.Second)
	for jobs() > 0 && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
	}
	assert.Equal(t, 0, jobs(), "the Job of a caller killed while its pod was pending is still there")
	pods, err := cs.CoreV1().Pods(cfg.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: sel})
	require.NoError(t, err)
	for _, p := range pods.Items {
		assert.True(t, podGone(t, cs, cfg.Namespace, p.Name, 60*time.Second), "pod %s of the pending session is still there", p.Name)
	}
}

// TestCancelKillsTree: a cancelled context kills the command's whole
// process tree in the pod, seen from the host: a background heartbeat
// started by the command stops growing. The twin: it grew before.
func TestCancelKillsTree(t *testing.T) {
	cfg := kubeConfig(t)
	x := newExecutor(t, cfg)
	root := workspace(t)
	hb := filepath.Join(root, "hb")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := x.Run(ctx, request(root, "(while :; do echo x >> hb; sleep 0.1; done) & sleep 600"))
		done <- err
	}()
	size := func() int64 {
		fi, err := os.Stat(hb)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	deadline := time.Now().Add(60 * time.Second)
	for size() < 10 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	require.GreaterOrEqual(t, size(), int64(10), "the heartbeat never started (twin)")
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	time.Sleep(500 * time.Millisecond)
	before := size()
	time.Sleep(1500 * time.Millisecond)
	assert.Equal(t, before, size(), "the heartbeat went on after the cancellation: the tree survived")
}

// TestBackground: Start runs a command in the background; its output
// arrives through ReadOutput and Wait, and Kill ends it.
func TestBackground(t *testing.T) {
	cfg := kubeConfig(t)
	x := newExecutor(t, cfg)
	root := workspace(t)
	p, err := x.Start(t.Context(), request(root, "echo started; sleep 600"))
	require.NoError(t, err)
	assert.Contains(t, readUntil(p, "started"), "started")
	require.NoError(t, p.Kill())
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Kill did not end the background command")
	}
	res := p.Wait()
	assert.NotEqual(t, 0, res.ExitCode)
}

// TestMissingImage: a session pod whose image the node lacks (never
// pulled) fails the command with an error naming the image's problem,
// and leaves no pod.
func TestMissingImage(t *testing.T) {
	cfg := kubeConfig(t)
	cfg.Image = "cordon.local/no-such-image:1"
	x := newExecutor(t, cfg)
	cs := client(t, cfg)
	root := workspace(t)
	_, err := x.Run(t.Context(), request(root, "true"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ErrImageNeverPull")
	require.NoError(t, x.Close())
	deadline := time.Now().Add(30 * time.Second)
	for {
		pods, err := cs.CoreV1().Pods(x.Namespace()).List(t.Context(), metav1.ListOptions{LabelSelector: kubernetes.LabelExecutor + "=" + x.ID()})
		require.NoError(t, err)
		if len(pods.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pods left", len(pods.Items))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAllowListRefused: strict mode refuses a network allow-list (no
// proxy in the pod) with a typed error naming the control.
func TestAllowListRefused(t *testing.T) {
	cfg := kubeConfig(t)
	x := newExecutor(t, cfg)
	root := workspace(t)
	req := request(root, "true")
	req.Policy.Network = policy.NetworkAllowList
	req.Policy.Hosts = policy.HostRules{Allow: []string{"example.com"}}
	_, err := x.Run(t.Context(), req)
	var ue *executor.UnenforceableError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Equal(t, executor.ControlNetAllowList, ue.Gaps[0].Control)
	assert.Empty(t, x.PodName(), "no pod for a refused command")
}

func TestConfigValidate(t *testing.T) {
	assert.ErrorIs(t, kubernetes.Config{}.Validate(), kubernetes.ErrInvalidConfig)
	assert.ErrorContains(t, kubernetes.Config{Image: "x", PullPolicy: "Sometimes"}.Validate(), `"Sometimes"`)
	assert.NoError(t, kubernetes.Config{Image: "x"}.Validate())
	_, err := kubernetes.New(kubernetes.Config{Image: "x", Kubeconfig: "/nonexistent/kubeconfig"})
	var ue *executor.UnavailableError
	assert.True(t, errors.As(err, &ue), "%v", err)
}

// TestRBAC: the executor works with exactly the Role the README lists,
// as a user who has nothing else (impersonated by the admin).
func TestRBAC(t *testing.T) {
	cfg := kubeConfig(t)
	newExecutor(t, cfg) // skips where there is no cluster
	cs := client(t, cfg)
	ns := cmp.Or(cfg.Namespace, "default")
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "cordon-executor-test"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "patch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create", "get"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"create", "delete"}},
		},
	}
	_, err := cs.RbacV1().Roles(ns).Create(t.Context(), role, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) { // an earlier run's, perhaps with other rules
		_, err = cs.RbacV1().Roles(ns).Update(t.Context(), role, metav1.UpdateOptions{})
	}
	require.NoError(t, err)
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cordon-executor-test"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "cordon-executor-test"}},
	}
	_, err = cs.RbacV1().RoleBindings(ns).Create(t.Context(), rb, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	require.NoError(t, err)
	rc.Impersonate.UserName = "cordon-executor-test"
	// The twin: without the binding the user can do nothing.
	other := rest.CopyConfig(rc)
	other.Impersonate.UserName = "cordon-nobody"
	ocs, err := k8s.NewForConfig(other)
	require.NoError(t, err)
	_, err = ocs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "an unbound user listed pods: %v", err)

	kc := cfg
	kc.RESTConfig, kc.Kubeconfig = rc, ""
	x := newExecutor(t, kc)
	root := workspace(t)
	res, err := x.Run(t.Context(), request(root, "echo rbac > f"))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	b, err := os.ReadFile(filepath.Join(root, "f"))
	require.NoError(t, err)
	assert.Equal(t, "rbac\n", string(b))
	pod := x.PodName()
	require.NoError(t, x.Close())
	assert.True(t, podGone(t, cs, ns, pod, 30*time.Second), "pod %s left after Close under the README's Role", pod)
}

// TestDescribe: Describe reports the sandbox layer's own report, asked
// of a pod started for the purpose when no session runs (and deleted
// again, checked with the API), or of the session pod.
func TestDescribe(t *testing.T) {
	cfg := kubeConfig(t)
	x := newExecutor(t, cfg)
	cs := client(t, cfg)
	caps := x.Describe(t.Context())
	assert.Equal(t, kubernetes.Backend, caps.Backend)
	assert.True(t, caps.Sandboxed)
	assert.Contains(t, caps.Enforced, executor.ControlFSRead)
	assert.Contains(t, caps.Enforced, executor.ControlNetTCP)
	assert.NotEqual(t, "", caps.Info["sandbox_landlock_abi"], "the sandbox layer's info: %v", caps.Info)
	_, gap := caps.Gap(executor.ControlNetAllowList)
	assert.True(t, gap, "the allow-list is declared as a gap")
	pods, err := cs.CoreV1().Pods(x.Namespace()).List(t.Context(), metav1.ListOptions{LabelSelector: kubernetes.LabelExecutor + "=" + x.ID()})
	require.NoError(t, err)
	for _, p := range pods.Items {
		assert.True(t, podGone(t, cs, x.Namespace(), p.Name, 30*time.Second), "Describe's pod %s was left", p.Name)
	}
	assert.Empty(t, x.PodName(), "Describe started no session")
	// Kept: a second call starts no pod.
	again := x.Describe(t.Context())
	assert.Equal(t, caps.Enforced, again.Enforced)
}

// TestOrphanKilled: a process that double-forks out of its command's
// tree (setsid, its parent exits first) is killed when the command ends:
// the file it would write a second later never appears on the host. The
// twins: it did run (its first write is there), and while its command
// still runs it writes.
func TestOrphanKilled(t *testing.T) {
	cfg := kubeConfig(t)
	x := newExecutor(t, cfg)
	root := workspace(t)
	res, err := x.Run(t.Context(), request(root, `setsid sh -c 'echo early > early.txt; sleep 1; echo late > late.txt' & sleep 0.5`))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	res, err = x.Run(t.Context(), request(root, `setsid sh -c 'sleep 1; echo late > twin.txt' & sleep 2.5`))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	time.Sleep(1500 * time.Millisecond) // past the first orphan's late write
	_, err = os.Stat(filepath.Join(root, "early.txt"))
	require.NoError(t, err, "the orphan never ran (fixture)")
	_, err = os.Stat(filepath.Join(root, "twin.txt"))
	require.NoError(t, err, "an orphan whose command still runs did not write (fixture)")
	_, err = os.Stat(filepath.Join(root, "late.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the orphan outlived its command and wrote")
}

// TestGuardSpansSession: a hook planted by a background command before a
// second command starts, whose own end comes after the background
// command's, is not restored by the second command's end: the session
// has one guard. Seen from the host: the hook is gone at the end, and the
// background command did make it (its listing).
func TestGuardSpansSession(t *testing.T) {
	cfg := kubeConfig(t)
	x := newExecutor(t, cfg)
	root := workspace(t)
	require.NoError(t, exec.Command("git", "init", "-q", root).Run())
	require.NoError(t, os.RemoveAll(filepath.Join(root, ".git", "hooks")))
	// The session starts with the tree as it is now.
	res, err := x.Run(t.Context(), request(root, "true"))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	a, err := x.Start(t.Context(), request(root, "mkdir -p .git/hooks && printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout && ls .git/hooks; sleep 1"))
	require.NoError(t, err)
	require.Contains(t, readUntil(a, "post-checkout"), "post-checkout", "the background command did not plant the hook (fixture)")
	res, err = x.Run(t.Context(), request(root, "sleep 2"))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	a.Wait()
	_, err = os.Stat(filepath.Join(root, ".git", "hooks", "post-checkout"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the planted hook is on the host after the session's commands ended")
}

// TestGuardAcrossSessions: a background command that keeps planting a
// protected file (d/.envrc) changes the next command's rendering, which
// then runs in a second session pod whose own guard takes the planted
// file into its baseline and restores it at its end. The caller's guard,
// one baseline across sessions, has the last word: the file is gone from
// the host once both commands ended. The twin: the background command did
// plant it (seen on the host while it ran).
func TestGuardAcrossSessions(t *testing.T) {
	cfg := kubeConfig(t)
	x := newExecutor(t, cfg)
	root := workspace(t)
	planted := filepath.Join(root, "d", ".envrc")
	res, err := x.Run(t.Context(), request(root, "mkdir -p d"))
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	pod1 := x.PodName()
	a, err := x.Start(t.Context(), request(root, `i=0; while [ $i -lt 40 ]; do printf 'echo pwned\n' > d/.envrc; i=$((i+1)); sleep 0.1; done`))
	require.NoError(t, err)
	seen := false
	for deadline := time.Now().Add(20 * time.Second); !seen && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, err := os.Stat(planted)
		seen = err == nil
	}
	require.True(t, seen, "the background command never planted d/.envrc (fixture)")
	// A write grant for one command: a new volume, so a new session pod,
	// and other writable trees, so another guard on the caller's side.
	req := request(root, "sleep 5")
	req.Grants = []policy.Grant{{Path: workspace(t), Op: policy.Write}}
	res, err = x.Run(t.Context(), req)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	t.Logf("second command in pod %s (the first ran in %s); violations %q", x.PodName(), pod1, res.Violations)
	require.NotEqual(t, pod1, x.PodName(), "the second command ran in the first session (fixture)")
	ra := a.Wait()
	t.Logf("background command: violations %q", ra.Violations)
	_, err = os.Stat(planted)
	assert.ErrorIs(t, err, os.ErrNotExist, "d/.envrc planted by a sandboxed command is on the host after the commands ended")
}

// TestExplainIsRun: the pod and NetworkPolicy Explain shows are those
// Run creates, read back from the API server: every field of the
// explanation (the session name aside) is in the running pod's spec with
// the same value, lists element for element; the API server only adds
// its defaults. Twin: a field the pod does not have makes the check fail.
func TestExplainIsRun(t *testing.T) {
	cfg := kubeConfig(t)
	x := newExecutor(t, cfg)
	root := workspace(t)
	req := request(root, "true")
	req.Policy.DeniedPaths = []string{".env*"}
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("SECRET=1\n"), 0o600))
	r, fid, err := x.Explain(t.Context(), req)
	require.NoError(t, err)
	require.NotNil(t, fid)
	require.NotNil(t, r.NetworkPolicy, "network none has a NetworkPolicy")
	assert.Empty(t, x.PodName(), "Explain creates nothing")

	res, err := x.Run(t.Context(), req)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
	cs := client(t, cfg)
	pod, err := cs.CoreV1().Pods(x.Namespace()).Get(t.Context(), x.PodName(), metav1.GetOptions{})
	require.NoError(t, err)
	session := pod.Labels[kubernetes.LabelSession]
	require.NotEmpty(t, session)
	np, err := cs.NetworkingV1().NetworkPolicies(x.Namespace()).Get(t.Context(), session, metav1.GetOptions{})
	require.NoError(t, err)

	named := func(v any) any {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		b = bytes.ReplaceAll(b, []byte(kubernetes.SessionShown), []byte(session))
		var out any
		require.NoError(t, json.Unmarshal(b, &out))
		return out
	}
	shown, running := named(r.Pod), named(pod.Spec)
	assert.Empty(t, notIn(shown, running, "pod"), "the explained pod is the running pod")
	wantNP := *r.NetworkPolicy
	wantNP.PodSelector = np.Spec.PodSelector // set per session at creation
	assert.Empty(t, notIn(named(wantNP), named(np.Spec), "networkpolicy"))
	var hasMask bool
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			hasMask = hasMask || m.MountPath == filepath.Join(root, ".env")
		}
	}
	assert.True(t, hasMask, "control: the running pod masks .env")

	// Twin: the check sees a field the running pod lacks.
	m := shown.(map[string]any)
	m["hostPID"] = true
	assert.NotEmpty(t, notIn(m, running, "pod"))
}

// notIn returns the paths of want's values that got lacks or holds with
// another value; lists must have the same length.
func notIn(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for k, v := range w {
			out = append(out, notIn(v, g[k], path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s (length %d, running %v)", path, len(w), got)}
		}
		var out []string
		for i := range w {
			out = append(out, notIn(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: explained %v, running %v", path, want, got)}
		}
		return nil
	}
}
