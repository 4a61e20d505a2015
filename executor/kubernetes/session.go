package kubernetes

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/executor/kubernetes/internal/wire"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// session is one session pod: a Job of one pod that runs cordon-pod
// init, held by an exec of cordon-pod serve.
type session struct {
	x      *Executor
	name   string // the Job's name, LabelSession
	digest string

	ready chan struct{} // closed when the pod runs and serve answered, or err set
	err   error
	pod   string

	uid     string // the Job's UID: its pods carry it, and only they are used
	running int    // commands in it (under x.mu)
	// placeholders are the mount points its pod has the runtime create,
	// released when the pod's container is gone.
	placeholders []policyderive.Mask

	dead    atomic.Bool
	conn    *conn // the serve exec, once attached
	delOnce sync.Once
	delErr  error
}

func (s *session) alive() bool { return !s.dead.Load() }

func (s *session) labels() map[string]string {
	return map[string]string{LabelManagedBy: "cordon", LabelExecutor: s.x.id, LabelSession: s.name}
}

// start creates the session's Job (and NetworkPolicy) in the background;
// ready is closed when the pod runs and serve answered, or on failure.
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
			// Until the session holds, the Job may be active only as long
			// as the start may take: a caller that dies while the pod is
			// pending (unschedulable, an image that never arrives) leaves
			// a Job that fails by itself, and its TTL deletes it. Removed
			// once serve answered.
			ActiveDeadlineSeconds:   new(int64(startDeadline(x.cfg.StartTimeout).Seconds())),
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
	if err := s.serve(ctx); err != nil {
		return err
	}
	if _, err := x.client.BatchV1().Jobs(x.namespace).Patch(ctx, s.name, types.JSONPatchType,
		[]byte(`[{"op":"remove","path":"/spec/activeDeadlineSeconds"}]`), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("kubernetes executor: lifting the start deadline of Job %s (the Role needs patch on jobs): %w", s.name, err)
	}
	x.log.Debug("kubernetes executor: session pod running", "pod", pod, "took", time.Since(start))
	return nil
}

// startDeadline is the session Job's active deadline until the session
// holds: the start timeout and half a minute, in whole seconds.
func startDeadline(startTimeout time.Duration) time.Duration {
	return (cmpDur(startTimeout, DefaultStartTimeout) + 30*time.Second).Round(time.Second)
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

// conn is the session's exec of cordon-pod serve: Calls go out on its
// standard input, Messages come back on its standard output and are
// handed to the command of their ID.
type conn struct {
	s      *session
	in     *io.PipeWriter
	wmu    sync.Mutex
	stderr capped
	ended  chan struct{} // closed when the exec has ended
	err    error         // why, once ended

	mu     sync.Mutex
	nextID uint64
	calls  map[uint64]*command
}

// serve starts the serve exec and waits (within ctx) for its Ready
// line. Its standard input stays open until the session is deleted or
// this process dies; then cordon-pod serve ends the session.
func (s *session) serve(ctx context.Context) error {
	pr, pw := io.Pipe()
	or, ow := io.Pipe()
	sctx, cancel := context.WithCancel(context.Background())
	c := &conn{s: s, in: pw, ended: make(chan struct{}), calls: map[uint64]*command{}}
	argv := []string{s.helper(), "serve"}
	if s.x.cfg.BestEffort {
		argv = append(argv, "-best-effort")
	}
	streamed := make(chan error, 1)
	go func() {
		err := s.stream(sctx, argv, pr, ow, &c.stderr)
		ow.CloseWithError(cmp.Or(err, io.EOF))
		streamed <- err
	}()
	ready := make(chan error, 1)
	go func() {
		defer cancel()
		c.read(or, ready)
		s.dead.Store(true)
		pr.CloseWithError(io.ErrClosedPipe) // unblocks writers
		serr := <-streamed
		c.mu.Lock()
		c.err = fmt.Errorf("kubernetes executor: cordon-pod serve on pod %s ended: %v %s", s.pod, cmp.Or(serr, c.err), strings.TrimSpace(c.stderr.String()))
		calls := c.calls
		c.calls = nil
		c.mu.Unlock()
		close(c.ended)
		for _, cmd := range calls {
			cmd.finish(nil, c.err)
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			pw.Close()
			<-c.ended
			return fmt.Errorf("kubernetes executor: the session on pod %s did not start: %w (%v)", s.pod, err, c.err)
		}
		s.conn = c
		go c.keepalive()
		return nil
	case <-ctx.Done():
		pw.Close()
		cancel()
		<-c.ended
		return fmt.Errorf("kubernetes executor: the session on pod %s did not start within %v: %v", s.pod, cmpDur(s.x.cfg.StartTimeout, DefaultStartTimeout), c.err)
	}
}

// read decodes the helper's lines until the exec ends: the first must
// be Ready (reported on ready), the others go to their commands.
func (c *conn) read(r io.Reader, ready chan<- error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first := true
	fail := func(err error) {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		if first {
			ready <- err
		}
	}
	for {
		line, err := wire.ReadLine(br)
		if err != nil {
			fail(err)
			return
		}
		var m wire.Message
		if err := json.Unmarshal(line, &m); err != nil {
			fail(fmt.Errorf("decoding the helper's answer: %w", err))
			return
		}
		if first {
			if m.Ready == nil || m.Ready.Version != wire.Version {
				fail(fmt.Errorf("the helper answered %s, not protocol version %d (the image's cordon-pod was built from other sources)", strings.TrimSpace(string(line)), wire.Version))
				return
			}
			first = false
			ready <- nil
			continue
		}
		c.mu.Lock()
		cmd := c.calls[m.ID]
		if m.Final != nil {
			delete(c.calls, m.ID)
		}
		c.mu.Unlock()
		if cmd == nil {
			continue // a command given up on
		}
		switch {
		case m.Final != nil:
			cmd.finish(m.Final, nil)
		case m.Output != nil || m.Dropped:
			cmd.output(m.Output, m.Dropped)
		}
	}
}

// send writes one Call.
func (c *conn) send(call wire.Call) error {
	line, err := json.Marshal(call)
	if err != nil {
		return fmt.Errorf("kubernetes executor: encoding the request: %w", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("kubernetes executor: sending to cordon-pod serve on pod %s: %w", c.s.pod, err)
	}
	return nil
}

// keepaliveEvery is how often an idle serve stream carries a line, so
// that a proxy or kubelet idle timeout does not end the session.
const keepaliveEvery = 30 * time.Second

// keepalive sends an empty Call (serve ignores it) every keepaliveEvery
// until the exec ends.
func (c *conn) keepalive() {
	t := time.NewTicker(keepaliveEvery)
	defer t.Stop()
	for {
		select {
		case <-c.ended:
			return
		case <-t.C:
			if c.send(wire.Call{}) != nil {
				return
			}
		}
	}
}

// close ends the input: cordon-pod serve kills every command, lets the
// guard repair, and ends the session. It waits for the exec to end.
func (c *conn) close() {
	c.in.Close()
	select {
	case <-c.ended:
	case <-time.After(30 * time.Second):
		c.s.x.log.Warn("kubernetes executor: cordon-pod serve did not end; deleting its pod anyway", "pod", c.s.pod)
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
		if s.conn != nil {
			s.conn.close()
		}
		x := s.x
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// With serve gone PID 1 exits and the kernel kills the pod's
		// processes: wait for the container to end before the pod is
		// deleted (a forced deletion does not wait for the node), so that
		// placeholder mount points are released only once unused.
		if s.pod != "" {
			s.waitEnded(ctx)
		}
		defer func() {
			for _, p := range backend.Default.Release(s.placeholders) {
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

// command is one command on the session's serve exec.
type command struct {
	c        *conn
	id       uint64
	finished chan struct{}
	once     sync.Once
	final    *wire.Final
	err      error

	omu     sync.Mutex
	out     []byte
	dropped bool
	limit   int
	killed  atomic.Bool
}

// exec sends req to cordon-pod serve.
func (s *session) exec(req *executor.Request, background bool) (*command, error) {
	wr := wire.Request{Command: req.Command, Dir: req.Dir, Env: req.Env, Timeout: req.Timeout,
		Policy: wire.PolicyOf(req.Policy), Root: req.Root, Home: req.Home, Grants: req.Grants,
		OutputLimit: req.OutputLimit, Background: background}
	if wr.Dir == "" {
		wr.Dir = req.Root
	}
	wr.Command = executor.ExactEnvCommand(req.Env, wr.Command)
	if wr.Policy.Network == policy.NetworkAllowList {
		// Best effort only (strict mode refused it): no proxy in the pod.
		wr.Policy.Network = policy.NetworkNone
	}
	c := s.conn
	cmd := &command{c: c, finished: make(chan struct{}), limit: req.OutputLimit}
	if cmd.limit <= 0 {
		cmd.limit = executor.DefaultOutputLimit
	}
	c.mu.Lock()
	if c.calls == nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.nextID++
	cmd.id = c.nextID
	c.calls[cmd.id] = cmd
	c.mu.Unlock()
	if err := c.send(wire.Call{ID: cmd.id, Request: &wr}); err != nil {
		c.mu.Lock()
		if c.calls != nil {
			delete(c.calls, cmd.id)
		}
		c.mu.Unlock()
		return nil, err
	}
	return cmd, nil
}

// finish records the command's end, once.
func (cmd *command) finish(f *wire.Final, err error) {
	cmd.once.Do(func() {
		cmd.final, cmd.err = f, err
		close(cmd.finished)
	})
}

// output appends background output, keeping the last limit bytes.
func (cmd *command) output(b []byte, dropped bool) {
	cmd.omu.Lock()
	defer cmd.omu.Unlock()
	cmd.out = append(cmd.out, b...)
	if len(cmd.out) > cmd.limit {
		cmd.out = cmd.out[len(cmd.out)-cmd.limit:]
		cmd.dropped = true
	}
	cmd.dropped = cmd.dropped || dropped
}

// kill asks cordon-pod to kill the command's tree.
func (cmd *command) kill() {
	if cmd.killed.CompareAndSwap(false, true) {
		go func() { _ = cmd.c.send(wire.Call{ID: cmd.id, Kill: true}) }()
	}
}

// wait waits for the result; a cancelled ctx kills the command first.
func (cmd *command) wait(ctx context.Context) (*executor.Result, error) {
	select {
	case <-cmd.finished:
	case <-ctx.Done():
		cmd.kill()
		select {
		case <-cmd.finished:
		case <-time.After(killAnswer):
			cmd.c.mu.Lock()
			if cmd.c.calls != nil {
				delete(cmd.c.calls, cmd.id)
			}
			cmd.c.mu.Unlock()
			cmd.finish(nil, fmt.Errorf("kubernetes executor: cordon-pod serve on pod %s did not answer within %v of killing command %d: %w", cmd.c.s.pod, killAnswer, cmd.id, ctx.Err()))
		}
	}
	if cmd.err != nil {
		return nil, cmd.err
	}
	if cmd.final.Error != nil {
		return nil, errorOf(cmd.final.Error)
	}
	return cmd.final.Result, nil
}

// killAnswer bounds how long a killed command's Final is awaited.
const killAnswer = 10 * time.Second

// process is a background command; ended is closed once the caller's
// guard has repaired after it, with violations its findings.
type process struct {
	c          *command
	ended      chan struct{}
	violations []string
}

func (p *process) ReadOutput() ([]byte, bool) {
	p.c.omu.Lock()
	defer p.c.omu.Unlock()
	out, d := p.c.out, p.c.dropped
	p.c.out, p.c.dropped = nil, false
	return out, d
}

func (p *process) Done() <-chan struct{} { return p.ended }

func (p *process) Wait() *executor.Result {
	<-p.ended
	switch {
	case p.c.err != nil:
		return &executor.Result{ExitCode: -1, Stderr: []byte(p.c.err.Error()), Violations: p.violations}
	case p.c.final.Error != nil:
		return &executor.Result{ExitCode: -1, Stderr: []byte(errorOf(p.c.final.Error).Error()), Violations: p.violations}
	}
	res := *p.c.final.Result
	out, _ := p.ReadOutput()
	res.Stdout = append(out, res.Stdout...)
	res.Violations = appendNew(res.Violations, p.violations)
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
