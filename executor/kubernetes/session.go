package kubernetes

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/kubernetes/internal/wire"
	"github.com/cordon-sandbox/cordon/internal/mountpoints"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// session is one session pod: a Job of one pod that runs cordon-pod
// init, held by a lease exec.
type session struct {
	x      *Executor
	name   string // the Job's name, LabelSession
	digest string

	ready chan struct{} // closed when pod is running and leased, or err set
	err   error
	pod   string

	uid     string // the Job's UID: its pods carry it, and only they are used
	running int    // commands in it (under x.mu)
	// placeholders are the mount points its pod has the runtime create,
	// released when the pod's container is gone.
	placeholders []policyderive.Mask

	dead       atomic.Bool
	leaseClose func()
	delOnce    sync.Once
	delErr     error
}

func (s *session) alive() bool { return !s.dead.Load() }

func (s *session) labels() map[string]string {
	return map[string]string{LabelManagedBy: "cordon", LabelExecutor: s.x.id, LabelSession: s.name}
}

// start creates the session's Job (and NetworkPolicy) in the background;
// ready is closed when the pod runs and the lease holds, or on failure.
func (s *session) start(r *policyderive.PodRendering) {
	go func() {
		s.err = s.create(r)
		if s.err != nil {
			s.dead.Store(true)
		}
		close(s.ready)
	}()
}

func (s *session) create(r *policyderive.PodRendering) error {
	x := s.x
	ctx, cancel := context.WithTimeout(context.Background(), cmpDur(x.cfg.StartTimeout, DefaultStartTimeout))
	defer cancel()
	start := time.Now()
	labels := s.labels()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit:            new(int32(0)),
			Parallelism:             new(int32(1)),
			Completions:             new(int32(1)),
			TTLSecondsAfterFinished: new(int32(0)),
			ManualSelector:          nil,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       r.Pod,
			},
		},
	}
	created, err := x.client.BatchV1().Jobs(x.namespace).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("kubernetes executor: creating the session Job: %w", err)
	}
	if r.NetworkPolicy != nil {
		np := &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Labels: labels, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: created.Name, UID: created.UID}}},
			Spec: *r.NetworkPolicy,
		}
		np.Spec.PodSelector = metav1.LabelSelector{MatchLabels: map[string]string{LabelSession: s.name}}
		if _, err := x.client.NetworkingV1().NetworkPolicies(x.namespace).Create(ctx, np, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("kubernetes executor: creating the session NetworkPolicy: %w", err)
		}
	}
	s.uid = string(created.UID)
	pod, err := s.waitRunning(ctx)
	if err != nil {
		return err
	}
	s.pod = pod
	if err := s.lease(); err != nil {
		return err
	}
	x.log.Debug("kubernetes executor: session pod running", "pod", pod, "took", time.Since(start))
	return nil
}

func cmpDur(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// waitRunning waits for the Job's pod to run and returns its name.
func (s *session) waitRunning(ctx context.Context) (string, error) {
	x := s.x
	// The Job controller labels its pods with the Job's UID: a pod someone
	// else made with the session's label is never used.
	sel := "batch.kubernetes.io/controller-uid=" + s.uid
	var last string
	for {
		pods, err := x.client.CoreV1().Pods(x.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err == nil {
			for _, p := range pods.Items {
				if c := metav1.GetControllerOf(&p); c == nil || string(c.UID) != s.uid {
					continue
				}
				switch p.Status.Phase {
				case corev1.PodRunning:
					for _, cs := range p.Status.ContainerStatuses {
						if cs.Name == policyderive.ContainerName && cs.State.Running != nil {
							return p.Name, nil
						}
					}
				case corev1.PodFailed, corev1.PodSucceeded:
					return "", fmt.Errorf("kubernetes executor: session pod %s ended before it ran: %s", p.Name, podWhy(&p))
				}
				last = podWhy(&p)
				if strings.Contains(last, "ErrImageNeverPull") || strings.Contains(last, "InvalidImageName") || strings.Contains(last, "CreateContainerConfigError") || strings.Contains(last, "CreateContainerError") {
					return "", fmt.Errorf("kubernetes executor: session pod %s cannot start: %s", p.Name, last)
				}
			}
		}
		select {
		case <-ctx.Done():
			if last == "" && err != nil {
				last = err.Error()
			}
			return "", fmt.Errorf("kubernetes executor: session pod of Job %s not running within %v: %s", s.name, cmpDur(x.cfg.StartTimeout, DefaultStartTimeout), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// podWhy summarises why a pod is not running.
func podWhy(p *corev1.Pod) string {
	parts := []string{"phase " + string(p.Status.Phase)}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			parts = append(parts, fmt.Sprintf("%s waiting: %s %s", cs.Name, w.Reason, w.Message))
		}
		if t := cs.State.Terminated; t != nil {
			parts = append(parts, fmt.Sprintf("%s terminated: %s (exit %d) %s", cs.Name, t.Reason, t.ExitCode, t.Message))
		}
	}
	return strings.Join(parts, "; ")
}

// stream runs argv in the session container by exec.
func (s *session) stream(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	x := s.x
	req := x.client.CoreV1().RESTClient().Post().Resource("pods").Name(s.pod).Namespace(x.namespace).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: policyderive.ContainerName, Command: argv,
			Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(x.rest, "GET", req.URL().String())
	if err != nil {
		return err
	}
	spdy, err := remotecommand.NewSPDYExecutor(x.rest, "POST", req.URL())
	if err != nil {
		return err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return remotecommandUpgradeFailed(err)
	})
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// lease starts the lease exec, whose standard input stays open until
// the session is deleted or this process dies.
func (s *session) lease() error {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr capped
	ended := make(chan error, 1)
	go func() {
		err := s.stream(ctx, []string{s.helper(), "lease"}, pr, nil, &stderr)
		s.dead.Store(true)
		ended <- err
	}()
	s.leaseClose = func() {
		pw.Close()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
		}
		cancel()
	}
	// The lease has attached when it has run for a moment without
	// failing: an exec that cannot start fails at once.
	select {
	case err := <-ended:
		cancel()
		return fmt.Errorf("kubernetes executor: the session lease on pod %s failed: %v %s", s.pod, err, stderr.String())
	case <-time.After(200 * time.Millisecond):
		return nil
	}
}

func (s *session) helper() string {
	if s.x.cfg.Helper != "" {
		return s.x.cfg.Helper
	}
	return DefaultHelper
}

// delete removes the session's Job and pod (grace 0) and its
// NetworkPolicy.
func (s *session) delete() error {
	s.delOnce.Do(func() {
		s.dead.Store(true)
		<-s.ready
		if s.leaseClose != nil {
			s.leaseClose()
		}
		x := s.x
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// With the lease gone PID 1 exits and the kernel kills the pod's
		// processes: wait for the container to end before the pod is
		// deleted (a forced deletion does not wait for the node), so that
		// placeholder mount points are released only once unused.
		if s.pod != "" {
			s.waitEnded(ctx)
		}
		defer func() {
			for _, p := range mountpoints.Default.Release(s.placeholders) {
				x.log.Warn("kubernetes executor: placeholder mount point not removed", "path", p)
			}
		}()
		bg := metav1.DeletePropagationBackground
		var errs []error
		if err := x.client.BatchV1().Jobs(x.namespace).Delete(ctx, s.name, metav1.DeleteOptions{PropagationPolicy: &bg, GracePeriodSeconds: new(int64(0))}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		if s.pod != "" {
			if err := x.client.CoreV1().Pods(x.namespace).Delete(ctx, s.pod, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
		if err := x.client.NetworkingV1().NetworkPolicies(x.namespace).Delete(ctx, s.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			s.delErr = fmt.Errorf("kubernetes executor: deleting session %s: %w", s.name, errors.Join(errs...))
		}
	})
	return s.delErr
}

// waitEnded waits (at most 15 s) until the session container has
// terminated.
func (s *session) waitEnded(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for {
		p, err := s.x.client.CoreV1().Pods(s.x.namespace).Get(ctx, s.pod, metav1.GetOptions{})
		if err != nil {
			return
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return
		}
		ended := len(p.Status.ContainerStatuses) > 0
		for _, cs := range p.Status.ContainerStatuses {
			ended = ended && cs.State.Terminated != nil
		}
		if ended {
			return
		}
		select {
		case <-ctx.Done():
			s.x.log.Warn("kubernetes executor: session container still running; deleting its pod anyway", "pod", s.pod)
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// command is one exec of cordon-pod run.
type command struct {
	s        *session
	stdin    *io.PipeWriter
	cancel   context.CancelFunc
	finished chan struct{}
	final    *wire.Final
	err      error
	stderr   capped

	omu     sync.Mutex
	out     []byte
	dropped bool
	limit   int
	killed  atomic.Bool
}

// exec starts cordon-pod run for req.
func (s *session) exec(ctx context.Context, req *executor.Request, background bool) (*command, error) {
	wr := wire.Request{Version: wire.Version, Command: req.Command, Dir: req.Dir, Env: req.Env, Timeout: req.Timeout,
		Policy: wire.PolicyOf(req.Policy), Root: req.Root, Home: req.Home, Grants: req.Grants,
		OutputLimit: req.OutputLimit, Background: background, BestEffort: s.x.cfg.BestEffort}
	if wr.Dir == "" {
		wr.Dir = req.Root
	}
	if !slices.ContainsFunc(req.Env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		// busybox's sh exports a PATH of its own when it starts without
		// one; the environment must be exactly Request.Env (busybox still
		// finds its applets without PATH).
		wr.Command = "unset PATH\n" + wr.Command
	}
	if wr.Policy.Network == policy.NetworkAllowList {
		// Best effort only (strict mode refused it): no proxy in the pod.
		wr.Policy.Network = policy.NetworkNone
	}
	line, err := json.Marshal(wr)
	if err != nil {
		return nil, fmt.Errorf("kubernetes executor: encoding the request: %w", err)
	}
	pr, pw := io.Pipe()
	or, ow := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &command{s: s, stdin: pw, cancel: cancel, finished: make(chan struct{}), limit: req.OutputLimit}
	if c.limit <= 0 {
		c.limit = executor.DefaultOutputLimit
	}
	streamed := make(chan error, 1)
	go func() {
		err := s.stream(sctx, []string{s.helper(), "run"}, pr, ow, &c.stderr)
		ow.CloseWithError(cmpErr(err, io.EOF))
		streamed <- err
	}()
	go func() {
		_, _ = pw.Write(append(line, '\n'))
	}()
	go func() {
		defer close(c.finished)
		defer cancel()
		dec := json.NewDecoder(bufio.NewReader(or))
		for {
			var m wire.Message
			if err := dec.Decode(&m); err != nil {
				pr.CloseWithError(err) // unblocks the request writer and later kill lines
				serr := <-streamed
				c.err = fmt.Errorf("kubernetes executor: cordon-pod run on pod %s ended without a result: %v %v %s", s.pod, err, serr, trimmed([]byte(c.stderr.String())))
				return
			}
			switch {
			case m.Final != nil:
				c.final = m.Final
				pw.Close()
				<-streamed
				return
			case m.Output != nil || m.Dropped:
				c.omu.Lock()
				c.out = append(c.out, m.Output...)
				if len(c.out) > c.limit {
					c.out = c.out[len(c.out)-c.limit:]
					c.dropped = true
				}
				c.dropped = c.dropped || m.Dropped
				c.omu.Unlock()
			}
		}
	}()
	return c, nil
}

func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// kill asks cordon-pod to kill the command's tree.
func (c *command) kill() {
	if c.killed.CompareAndSwap(false, true) {
		go func() { _, _ = c.stdin.Write([]byte(wire.KillLine + "\n")) }()
	}
}

// wait waits for the result; a cancelled ctx kills the command first.
func (c *command) wait(ctx context.Context) (*executor.Result, error) {
	select {
	case <-c.finished:
	case <-ctx.Done():
		c.kill()
		select {
		case <-c.finished:
		case <-time.After(10 * time.Second):
			c.cancel()
			<-c.finished
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.final.Error != nil {
		return nil, errorOf(c.final.Error)
	}
	return c.final.Result, nil
}

// process is a background command.
type process struct{ c *command }

func (p *process) ReadOutput() ([]byte, bool) {
	p.c.omu.Lock()
	defer p.c.omu.Unlock()
	out, d := p.c.out, p.c.dropped
	p.c.out, p.c.dropped = nil, false
	return out, d
}

func (p *process) Done() <-chan struct{} { return p.c.finished }

func (p *process) Wait() *executor.Result {
	<-p.c.finished
	switch {
	case p.c.err != nil:
		return &executor.Result{ExitCode: -1, Stderr: []byte(p.c.err.Error())}
	case p.c.final.Error != nil:
		return &executor.Result{ExitCode: -1, Stderr: []byte(errorOf(p.c.final.Error).Error())}
	}
	res := *p.c.final.Result
	out, _ := p.ReadOutput()
	res.Stdout = append(out, res.Stdout...)
	return &res
}

func (p *process) Kill() error {
	p.c.kill()
	return nil
}

// capped keeps the first 64 KiB written to it: the helper's own
// diagnostics, for error messages.
type capped struct {
	mu sync.Mutex
	b  []byte
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := 64<<10 - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b)
}

// remotecommandUpgradeFailed reports whether the websocket exec failed
// because the server does not speak it, so SPDY is tried instead.
func remotecommandUpgradeFailed(err error) bool {
	return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
}
