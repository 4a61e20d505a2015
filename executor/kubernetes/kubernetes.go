package kubernetes

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/executor/kubernetes/internal/wire"
	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// Backend is the executor's name in Capabilities and errors.
const Backend = "kubernetes"

// DefaultHelper is cordon-pod's path in the image when Config.Helper is
// "".
const DefaultHelper = "/usr/local/bin/cordon-pod"

// Defaults for the zero values of Config.
const (
	// DefaultStartTimeout bounds how long a session pod may take to run.
	DefaultStartTimeout = 2 * time.Minute
	// DefaultAttachTimeout is how long a new pod waits for the executor's
	// session (cordon-pod serve) to attach before it ends itself.
	DefaultAttachTimeout = 2 * time.Minute
)

// Labels on every object the executor creates.
const (
	// LabelManagedBy is "app.kubernetes.io/managed-by"; its value is
	// "cordon".
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelExecutor carries the executor's random id.
	LabelExecutor = "cordon.dev/executor"
	// LabelSession carries the session's (the Job's) name.
	LabelSession = "cordon.dev/session"
)

// Config configures an Executor. Image is required; the rest has
// defaults: the kubeconfig that clientcmd's default loading rules find
// (KUBECONFIG, ~/.kube/config) or the in-cluster configuration, its
// namespace, hostPath volumes, the caller's uid and gid, strict.
type Config struct {
	// RESTConfig, when set, is used instead of loading a kubeconfig.
	RESTConfig *rest.Config
	// Kubeconfig is a kubeconfig file ("": the default loading rules,
	// then the in-cluster configuration).
	Kubeconfig string
	// Context is the kubeconfig context ("": its current context).
	Context string
	// Namespace holds the session's objects ("": the kubeconfig's, else
	// "default").
	Namespace string
	// Image is the session container's image. It must hold a shell and
	// cordon-pod (cmd/cordon-pod) at Helper. The executor never pulls
	// it unless PullPolicy says so.
	Image string
	// PullPolicy is the image pull policy ("": Never for an image without
	// a registry host is not guessed; the cluster's default applies).
	PullPolicy corev1.PullPolicy
	// Helper is cordon-pod's path in the image ("": DefaultHelper).
	Helper string
	// Claim names a PersistentVolumeClaim holding the workspace root,
	// mounted at the root's path; "" mounts the root and grants as
	// hostPath volumes, which needs the pod on the caller's machine (a
	// single-node cluster, or the caller running on the node). See the
	// package documentation.
	Claim string
	// RuntimeClassName selects a runtime class (gVisor, Kata).
	RuntimeClassName string
	// HostNetworkWhenFull gives the pod the node's network namespace
	// (hostNetwork) when the policy grants full network access, as the
	// docker backend's default does: commands then reach the node's
	// loopback services. The default is the pod network. It never
	// applies to network none.
	HostNetworkWhenFull bool
	// SeccompLocalhost is a seccomp profile on the node, relative to the
	// kubelet's seccomp directory ("": RuntimeDefault).
	SeccompLocalhost string
	// Resources are the session container's requests and limits.
	Resources corev1.ResourceRequirements
	// UID and GID run the container; nil means the calling process's.
	UID, GID *int64
	// StartTimeout bounds a session pod's start (0: DefaultStartTimeout).
	StartTimeout time.Duration
	// BestEffort runs commands even when the in-pod sandbox cannot
	// enforce the profile at least as strictly as the policy. Without
	// it, Run fails with *executor.UnenforceableError.
	BestEffort bool
	// Logger receives debug records; nil means slog.Default().
	Logger *slog.Logger
}

// ErrInvalidConfig is wrapped by the errors of Config.Validate.
var ErrInvalidConfig = errors.New("invalid kubernetes config")

// ErrClosed is returned by Run and Start after Close; it wraps
// executor.ErrClosed, as every executor's does.
var ErrClosed = fmt.Errorf("kubernetes executor: %w", executor.ErrClosed)

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Image == "":
		return fmt.Errorf("%w: Image is required (an image with a shell and cordon-pod at %s)", ErrInvalidConfig, cmp.Or(c.Helper, DefaultHelper))
	case c.StartTimeout < 0:
		return fmt.Errorf("%w: StartTimeout %v is negative", ErrInvalidConfig, c.StartTimeout)
	case c.PullPolicy != "" && c.PullPolicy != corev1.PullNever && c.PullPolicy != corev1.PullAlways && c.PullPolicy != corev1.PullIfNotPresent:
		return fmt.Errorf("%w: PullPolicy %q is not Always, IfNotPresent or Never", ErrInvalidConfig, c.PullPolicy)
	}
	return nil
}

// Executor runs commands in a session pod. Use New; it is safe for
// concurrent use. Close deletes its pods.
type Executor struct {
	cfg       Config
	log       *slog.Logger
	rest      *rest.Config
	client    kubernetes.Interface
	namespace string
	id        string
	uid, gid  int64
	server    string
	scans     *policyderive.ScanCache
	deriver   *policyderive.Deriver
	// guards is the caller's side of the protected-path guard, over the
	// same trees as the pod's, across every session (see guard).
	guards *protectguard.Cache

	mu      sync.Mutex
	closed  bool
	current *session   // the session new commands run in
	retired []*session // older sessions still running a command
	seq     int
	inPod   *executor.Capabilities // the sandbox layer's, once a pod answered
}

var (
	_ executor.Executor  = (*Executor)(nil)
	_ executor.Starter   = (*Executor)(nil)
	_ executor.Describer = (*Executor)(nil)
)

// New connects to the cluster and returns an executor; no pod exists
// until the first command. It fails with *executor.UnavailableError when
// no configuration is found or the API server does not answer.
func New(cfg Config) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	x := &Executor{cfg: cfg, log: cmp.Or(cfg.Logger, slog.Default()), namespace: cfg.Namespace}
	rc := cfg.RESTConfig
	if rc == nil {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if cfg.Kubeconfig != "" {
			rules.ExplicitPath = cfg.Kubeconfig
		}
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: cfg.Context})
		var err error
		if rc, err = cc.ClientConfig(); err != nil {
			return nil, unavailable("no cluster configuration (set KUBECONFIG, Config.Kubeconfig or run in a pod)", err)
		}
		if x.namespace == "" {
			if ns, _, err := cc.Namespace(); err == nil {
				x.namespace = ns
			}
		}
	}
	x.namespace = cmp.Or(x.namespace, "default")
	rc = rest.CopyConfig(rc)
	rc.Timeout = 0
	x.rest = rc
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, unavailable("building the client", err)
	}
	x.client = cs
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := serverVersion(ctx, cs)
	if err != nil {
		return nil, unavailable("the API server at "+rc.Host+" does not answer", err)
	}
	x.server = v
	x.uid, x.gid = int64(os.Getuid()), int64(os.Getgid())
	if cfg.UID != nil {
		x.uid = *cfg.UID
	}
	if cfg.GID != nil {
		x.gid = *cfg.GID
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	x.id = hex.EncodeToString(b[:])
	x.scans = policyderive.NewScanCache(cfg.Logger)
	x.deriver = policyderive.NewDeriver(policyderive.Options{Logger: cfg.Logger, Scans: x.scans})
	x.guards = protectguard.NewCache(16, cfg.Logger)
	x.log.Debug("kubernetes executor", "server", rc.Host, "version", v, "namespace", x.namespace, "id", x.id)
	return x, nil
}

func serverVersion(ctx context.Context, cs *kubernetes.Clientset) (string, error) {
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

func unavailable(reason string, err error) error {
	return &executor.UnavailableError{Backend: Backend, Reason: fmt.Sprintf("%s: %v", reason, err),
		Fix: "point KUBECONFIG (or Config.Kubeconfig) at a reachable cluster", Err: errors.Join(errors.ErrUnsupported, err)}
}

// Namespace returns the namespace the executor's objects live in.
func (x *Executor) Namespace() string { return x.namespace }

// ID returns the executor's id, the value of LabelExecutor on its
// objects.
func (x *Executor) ID() string { return x.id }

// PodName returns the current session pod's name ("" before the first
// command).
func (x *Executor) PodName() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.current == nil {
		return ""
	}
	return x.current.pod
}

// Close deletes every session of the executor (Jobs, pods with grace 0,
// NetworkPolicies) and waits until the API has accepted the deletions.
func (x *Executor) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	all := append(x.retired, x.current)
	x.current, x.retired = nil, nil
	x.mu.Unlock()
	var errs []error
	for _, s := range all {
		if s != nil {
			errs = append(errs, s.delete())
		}
	}
	if x.scans != nil {
		x.scans.Close()
	}
	if x.guards != nil {
		errs = append(errs, x.guards.Close())
	}
	return errors.Join(errs...)
}

// Explain returns the session pod (with its NetworkPolicy) and the
// fidelity report of the plan Run enforces for req, as the first command
// of a new session would create it, named "SESSION": the same admission
// (strict mode's refusal of an allow-list included), derivation, live
// placeholder mount points and rendering as Run, without creating
// anything (sandbox-probe derive --backend kubernetes --kube-cluster).
func (x *Executor) Explain(ctx context.Context, req *executor.Request) (*policyderive.PodRendering, *policyderive.Fidelity, error) {
	pr, _, req, err := x.derive(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	r, f := x.render(pr, req, SessionShown)
	return r, f, nil
}

// SessionShown is the session name Explain renders with.
const SessionShown = "SESSION"

// render is the pod rendering of a request derived as pr, for the
// session name.
func (x *Executor) render(pr *policyderive.Profile, req *executor.Request, name string) (*policyderive.PodRendering, *policyderive.Fidelity) {
	return policyderive.PodSpec(policyderive.ImageProfile(pr, req.Policy), x.podOptions(name))
}

func (x *Executor) podOptions(session string) policyderive.PodOptions {
	return PodOptions(x.cfg, x.uid, x.gid, map[string]string{LabelSession: session})
}

// PodOptions returns the rendering options Config selects, for a session
// labelled labels, run as uid and gid (-1: the image's).
func PodOptions(cfg Config, uid, gid int64, labels map[string]string) policyderive.PodOptions {
	return policyderive.PodOptions{
		Image: cfg.Image, PullPolicy: cfg.PullPolicy, Helper: cmp.Or(cfg.Helper, DefaultHelper),
		Claim: cfg.Claim, UID: uid, GID: gid, RuntimeClassName: cfg.RuntimeClassName,
		SeccompLocalhost: cfg.SeccompLocalhost, Resources: cfg.Resources, HostNetworkWhenFull: cfg.HostNetworkWhenFull,
		AttachTimeout: DefaultAttachTimeout.String(), Labels: labels,
	}
}

// digest identifies a rendering: commands whose renderings have the same
// digest share a pod.
func digest(r *policyderive.PodRendering) string {
	b, _ := json.Marshal(struct {
		Pod corev1.PodSpec
		Net bool
	}{r.Pod, r.NetworkPolicy != nil})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// prepare validates and derives a request, begins the caller's guard
// and returns the session it runs in, counted as running until done is
// called, and the guard, to be ended after the command.
//
// Each session pod's cordon-pod serve guards the protected paths of its
// commands, but a new session (the rendering changed: a denied file
// appeared, a grant) gets a guard of its own, whose baseline would take
// in what a command still running in the old session planted — and
// restore it after the old guard removed it. So the caller guards too,
// with one baseline for all sessions, taken only when no command of the
// executor runs; its repair runs after the pod's and has the last word.
// Before a command starts while others run it repairs what they changed,
// and the request is derived again.
func (x *Executor) prepare(ctx context.Context, req *executor.Request) (*session, *backend.Guarded, error) {
	pr, gen, req, err := x.derive(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	g, err := backend.Guard(x.guards, req, backend.WritableTrees(pr))
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes executor: %w", err)
	}
	w, err := backend.BeginGuard(ctx, g, Backend, x.cfg.BestEffort, x.log)
	if err != nil {
		return nil, nil, err
	}
	if w.Repaired() {
		if pr, gen, req, err = x.derive(ctx, req); err != nil {
			w.End(ctx)
			return nil, nil, err
		}
	}
	s, err := x.session(ctx, req, pr, gen)
	if err != nil {
		w.End(ctx)
		return nil, nil, err
	}
	return s, w, nil
}

// isClosed returns ErrClosed once Close was called.
func (x *Executor) isClosed() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	return nil
}

// derive validates and derives a request, with the placeholder mount
// points live in this process as an input; it returns the registry
// generation the profile is current for (see session) and the admitted
// request (compiled: nothing compiles it again).
func (x *Executor) derive(ctx context.Context, req *executor.Request) (*policyderive.Profile, uint64, *executor.Request, error) {
	req, err := backend.Admit(ctx, req, x.isClosed)
	if err != nil {
		return nil, 0, nil, err
	}
	if req.Policy.Network == policy.NetworkAllowList && !x.cfg.BestEffort {
		return nil, 0, nil, &executor.UnenforceableError{Backend: Backend, Gaps: []executor.Gap{{Control: executor.ControlNetAllowList,
			Reason: "the kubernetes executor has no allow-list proxy in the pod yet: network allow-lists are refused (best effort runs with network none)"}}}
	}
	pr, gen, err := backend.DeriveLive(ctx, x.deriver, req, cmp.Or(req.Dir, req.Root), req.Grants)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("kubernetes executor: deriving the profile: %w", err)
	}
	return noAllowList(pr), gen, req, nil
}

// noAllowList is pr with an allow-list run as network none (best effort;
// strict mode refused it).
func noAllowList(pr *policyderive.Profile) *policyderive.Profile {
	if pr.Network == policy.NetworkAllowList {
		pr.Network = policy.NetworkNone
	}
	return pr
}

// session returns the session a request derived as pr runs in, counted
// as running until done is called.
//
// Placeholder mount points the runtime creates on the node (an empty
// read-only .git in a fresh root) are shared with the other sandboxes of
// this process and removed by the last; the live ones are an input of
// the derivation. When they changed since pr was derived (gen), the
// request is derived again with the registry locked, so that the
// placeholders acquired are those of the profile that runs.
func (x *Executor) session(ctx context.Context, req *executor.Request, pr *policyderive.Profile, gen uint64) (*session, error) {
	backend.Default.Lock()
	if live, ok := backend.Default.Current(gen); !ok {
		pc, err := req.Compiled()
		if err == nil {
			pr, err = x.deriver.DeriveWith(ctx, pc, cmp.Or(req.Dir, req.Root), req.Grants, live)
		}
		if err != nil {
			backend.Default.Unlock()
			return nil, fmt.Errorf("kubernetes executor: deriving the profile: %w", err)
		}
		pr = noAllowList(pr)
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		backend.Default.Unlock()
		return nil, ErrClosed
	}
	// The name the session gets if this rendering makes a new one (the
	// digest leaves names out).
	name := fmt.Sprintf("cordon-%s-%d", x.id, x.seq+1)
	r, _ := x.render(pr, req, name)
	d := digest(r)
	if s := x.current; s != nil && s.digest == d && s.alive() {
		s.running++
		x.mu.Unlock()
		backend.Default.Unlock()
		return x.ready(ctx, s)
	}
	old := x.current
	x.seq++
	s := &session{x: x, name: name, digest: d, ready: make(chan struct{}), running: 1, placeholders: pr.Placeholders()}
	backend.Default.Acquire(s.placeholders)
	backend.Default.Unlock()
	x.current = s
	if old != nil {
		if old.running > 0 {
			x.retired = append(x.retired, old)
		} else {
			go old.delete()
		}
	}
	x.mu.Unlock()
	s.start(r)
	return x.ready(ctx, s)
}

// ready waits until s runs (or failed to start), for a command counted
// in it.
func (x *Executor) ready(ctx context.Context, s *session) (*session, error) {
	select {
	case <-s.ready:
	case <-ctx.Done():
		x.done(s)
		return nil, ctx.Err()
	}
	if s.err != nil {
		x.done(s)
		x.mu.Lock()
		if x.current == s {
			x.current = nil
		}
		x.mu.Unlock()
		go s.delete()
		return nil, s.err
	}
	return s, nil
}

// done ends a command of s; a retired session with nothing left running
// is deleted.
func (x *Executor) done(s *session) {
	x.mu.Lock()
	s.running--
	var del bool
	if s.running == 0 && x.current != s {
		for i, r := range x.retired {
			if r == s {
				x.retired = append(x.retired[:i], x.retired[i+1:]...)
				del = true
				break
			}
		}
	}
	x.mu.Unlock()
	if del {
		go s.delete()
	}
}

// Run runs the command in the session pod under the in-pod sandbox.
func (x *Executor) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	if err := executor.RefuseStdio(req, Backend); err != nil {
		return nil, err
	}
	s, w, err := x.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	defer x.done(s)
	c, err := s.exec(req, false)
	if err != nil {
		return nil, withRepairs(err, w.End(ctx))
	}
	res, err := c.wait(ctx)
	vs := w.End(ctx)
	if err != nil {
		return nil, withRepairs(err, vs)
	}
	res.Violations = appendNew(res.Violations, vs)
	return res, nil
}

// withRepairs adds to err, an error Run returns after its command may
// have started, what the caller's guard repaired meanwhile: with no
// Result to carry them, the violations would be lost.
func withRepairs(err error, vs []string) error {
	if len(vs) == 0 {
		return err
	}
	return fmt.Errorf("%w (the protected-path guard repaired what the command changed: %s)", err, strings.Join(vs, "; "))
}

// Start starts the command in the background in the session pod.
func (x *Executor) Start(ctx context.Context, req *executor.Request) (executor.Process, error) {
	s, w, err := x.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	c, err := s.exec(req, true)
	if err != nil {
		w.End(ctx)
		x.done(s)
		return nil, err
	}
	p := &process{c: c, ended: make(chan struct{})}
	go func() {
		<-c.finished
		p.violations = w.End(context.WithoutCancel(ctx))
		x.done(s)
		close(p.ended)
	}()
	return p, nil
}

// appendNew appends the strings of add not already in to.
func appendNew(to, add []string) []string {
	for _, v := range add {
		if !slices.Contains(to, v) {
			to = append(to, v)
		}
	}
	return to
}

// errorOf converts the helper's error.
func errorOf(e *wire.Error) error {
	switch e.Kind {
	case wire.KindUnenforceable:
		return &executor.UnenforceableError{Backend: Backend, Gaps: e.Gaps}
	default:
		return fmt.Errorf("kubernetes executor: in-pod sandbox: %s", e.Message)
	}
}
