package docker

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/internal/outbuf"
	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// ErrClosed is returned by Run and Start after Close: executor.ErrClosed,
// under this package's name.
var ErrClosed = fmt.Errorf("docker executor: %w", executor.ErrClosed)

// Executor runs commands in a Docker container, one container per
// executor (a session), through the container's command runner (or one
// exec per command; see the package documentation). Use New; an Executor is
// safe for concurrent use. Close removes its containers.
type Executor struct {
	cfg      Config
	log      *slog.Logger
	cli      *client.Client
	eng      *engine
	image    string
	host     bool
	imageEnv []string // variable names of the image's environment
	user     string
	seccomp  string // the profile's JSON, "" for the engine's default
	// seccompNoUnix is seccomp refusing socket(AF_UNIX) too, for the
	// containers of policies that name no socket ("" where seccomp is "").
	seccompNoUnix string
	secDesc       string
	owner         owner
	id            string // LabelExecutor
	scans         *policyderive.ScanCache
	deriver       *policyderive.Deriver
	strays        int // stray containers removed by New

	createMu sync.Mutex // serialises container creation
	mu       sync.Mutex
	cur      *box
	live     map[*box]bool
	seq      int
	fast     bool // boxes get a command runner (local engine, the caller's user)
	// sweeps is set when processes that leave a command's tree are
	// killed (a local engine on Linux); noSweep once a container showed
	// that the engine runs on another kernel after all.
	sweeps  bool
	noSweep atomic.Bool
	closed  bool
	wg      sync.WaitGroup // container removals in flight

	pathOnce  sync.Once
	pathProbe bool // the image's /bin/sh exports a PATH of its own

	guards *protectguard.Cache
	// net is the network allow-list proxy of the executor's commands.
	net *netallow.Gate

	descOnce sync.Once
	desc     executor.Capabilities
	// bestEffort holds the gaps of profiles run in best effort, for Describe.
	bestEffort backend.BestEffortLog
}

var (
	_ executor.Executor  = (*Executor)(nil)
	_ executor.Starter   = (*Executor)(nil)
	_ executor.Describer = (*Executor)(nil)
)

// New connects to the Docker Engine (DOCKER_HOST, the Docker CLI's
// current context, or Config.ClientOptions), checks that it runs Linux
// containers and that the image is present (host mode creates HostImage
// from an empty archive; nothing is ever pulled), removes the containers
// of executors whose process has died, and returns an executor. The
// session's container is created by the first command. New fails with
// *executor.UnavailableError (wrapping ErrNoEngine, ErrEngine or
// ErrNoImage) when Docker cannot be used, and with a *ConfigError for an
// invalid Config.
func New(cfg Config) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cmp.Or(cfg.Logger, slog.Default())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli, eng, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	x := &Executor{
		cfg:    cfg,
		log:    log,
		cli:    cli,
		eng:    eng,
		image:  cfg.Image,
		host:   cfg.Image == "",
		user:   cfg.User,
		owner:  self(),
		live:   map[*box]bool{},
		guards: protectguard.NewCache(16, cfg.Logger),
		net:    netallow.NewGate(cfg.Logger),
	}
	if x.host {
		x.image = HostImage
	}
	if x.user == "" {
		x.user = defaultUser(os.Getuid(), os.Getgid())
	}
	x.fast = runnerSupported && !eng.remote() && !cfg.ExecPerCommand && x.user == defaultUser(os.Getuid(), os.Getgid())
	x.sweeps = sweepSupported && !eng.remote()
	if x.imageEnv, err = ensureImage(ctx, cli, x.image, x.host); err != nil {
		cli.Close()
		return nil, err
	}
	switch {
	case eng.seccomp:
		if x.seccomp, x.secDesc, err = seccompProfile(cfg.NestedUserNamespaces, false); err == nil {
			x.seccompNoUnix, _, err = seccompProfile(cfg.NestedUserNamespaces, true)
			if x.seccompNoUnix != "" {
				x.secDesc += "; for a policy that names no Unix socket, socket(AF_UNIX) and socketcall refused too"
			}
		}
		if err != nil {
			cli.Close()
			return nil, err
		}
	case cfg.BestEffort:
		x.secDesc = "none: the engine has no seccomp support (best effort)"
	default:
		cli.Close()
		return nil, &executor.UnavailableError{Backend: Backend, Reason: "the engine at " + eng.host + " has no seccomp support (security options " + strings.Join(eng.security, " ") + ")",
			Fix: "run an engine built with seccomp, or opt into best effort", Err: ErrEngine}
	}
	x.id = strconv.Itoa(x.owner.pid) + "-" + strings.TrimPrefix(newNonce(), "cordon-")[:12]
	x.strays = removeStrays(ctx, cli, x.owner, log.Info)
	x.scans = policyderive.NewScanCache(cfg.Logger)
	x.deriver = policyderive.NewDeriver(policyderive.Options{Logger: cfg.Logger, Scans: x.scans})
	log.Debug("docker executor", "engine", eng.host, "version", eng.version, "api", eng.apiVersion, "image", x.image,
		"host_mode", x.host, "user", x.user, "runner", x.fast, "strays_removed", x.strays)
	return x, nil
}

// Image returns the image commands run in (HostImage in host mode).
func (x *Executor) Image() string { return x.image }

// EngineVersion returns the engine's version and the negotiated API
// version.
func (x *Executor) EngineVersion() (engine, api string) { return x.eng.version, x.eng.apiVersion }

// ContainerID returns the id of the session's current container, or ""
// before the first command (and after Close).
func (x *Executor) ContainerID() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.cur == nil {
		return ""
	}
	return x.cur.id
}

// Close removes the executor's containers (killing what still runs in
// them) and releases the derivation cache and the engine client. Later
// calls of Run and Start fail with ErrClosed.
func (x *Executor) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	x.guards.Close()
	boxes := make([]*box, 0, len(x.live))
	for b := range x.live {
		boxes = append(boxes, b)
	}
	x.live = map[*box]bool{}
	x.cur = nil
	x.mu.Unlock()
	for _, b := range boxes {
		x.removeAsync(b)
	}
	x.wg.Wait()
	err := x.scans.Close()
	return errors.Join(err, x.cli.Close())
}

// Run runs req.Command under /bin/sh -c in req.Dir inside the session's
// container, whose mounts are derived from req.Policy, req.Root, req.Home
// and req.Grants (a new container replaces it when they change).
func (x *Executor) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, err
	}
	if err := executor.RefuseStdio(req, Backend); err != nil {
		return nil, err
	}
	limit := cmp.Or(req.OutputLimit, executor.DefaultOutputLimit)
	var (
		r              *run
		o              *execOut
		stdout, stderr *outbuf.HeadTail
	)
	for attempt := 0; ; attempt++ {
		var err error
		if r, err = x.prepare(ctx, req); err != nil {
			return nil, err
		}
		stdout, stderr = outbuf.NewHeadTail(limit), outbuf.NewHeadTail(limit)
		o, err = x.runIn(ctx, r.box, r.request(req), r.dir, stdout, stderr, req.Timeout, ctx.Done(), nil, nil)
		r.end(ctx)
		x.release(r.box)
		if err == nil {
			break
		}
		if !lost(err) || attempt > 0 {
			return nil, err
		}
		x.log.Debug("docker: the session's container was lost; running the command in a new one", "err", err)
	}
	res := &executor.Result{
		Stdout:    stdout.Bytes(),
		Stderr:    stderr.Bytes(),
		Truncated: stdout.Truncated() || stderr.Truncated(),
		Duration:  o.duration,
	}
	if o.ended == "" && !o.started && (o.inspected == 126 || o.inspected == 127) {
		msg := strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
		return nil, &SetupError{Stage: "exec", Container: r.box.id, Message: msg}
	}
	finish(res, o)
	res.Violations = append(r.notes, o.notes...)
	res.Network = r.netEvents
	return res, nil
}

// lost reports whether err says the container was unusable before the
// command ran (it may be retried in a new one).
func lost(err error) bool {
	var se *SetupError
	return errors.As(err, &se) && se.lost
}

// finish fills in the exit status.
func finish(res *executor.Result, o *execOut) {
	switch {
	case o.ended != "":
		res.ExitCode, res.Signal = -1, syscall.SIGKILL.String()
		res.TimedOut = o.ended == endTimeout || o.ended == endCancel
	default:
		res.ExitCode = o.status
		// The shell reports a command killed by signal N as 128+N.
		if n := o.status - 128; n >= 1 && n <= 64 {
			res.ExitCode, res.Signal = -1, syscall.Signal(n).String()
		}
	}
}

// Start starts req.Command in the background in the session's container;
// stdout and stderr are merged. Request.Timeout is ignored and ctx only
// governs the start. The container stays until the process has exited,
// even when later commands need another.
func (x *Executor) Start(ctx context.Context, req *executor.Request) (executor.Process, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, err
	}
	p, err := x.start(ctx, req)
	if lost(err) {
		x.log.Debug("docker: the session's container was lost; starting the command in a new one", "err", err)
		p, err = x.start(ctx, req)
	}
	return p, err
}

func (x *Executor) start(ctx context.Context, req *executor.Request) (executor.Process, error) {
	r, err := x.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	limit := cmp.Or(req.OutputLimit, executor.DefaultOutputLimit)
	p := &process{ring: outbuf.NewRing(limit), kill: make(chan struct{}), done: make(chan struct{}), started: make(chan error, 1)}
	go func() {
		defer close(p.done)
		defer x.release(r.box)
		o, err := x.runIn(ctx, r.box, r.request(req), r.dir, p.ring, p.ring, 0, nil, p.kill, p.started)
		r.end(context.WithoutCancel(ctx))
		res := &executor.Result{ExitCode: -1}
		if err == nil {
			res.Duration = o.duration
			finish(res, o)
			res.Violations = append(r.notes, o.notes...)
		}
		p.res = res
	}()
	// Wait until the exec is attached, so that an error is Start's.
	select {
	case err := <-p.started:
		if err != nil {
			<-p.done
			return nil, err
		}
	case <-p.done:
	}
	return p, nil
}

// run is one prepared command.
type run struct {
	x     *Executor
	box   *box
	dir   string
	guard *backend.Guarded
	notes []string
	once  sync.Once
	// net is the command's proxy session in the container's network
	// namespace (network allow-list only); netEvents its decisions.
	net       *netallow.Command
	netEvents []netproxy.Event
	// sweepNote is what the sweep before the command reported.
	sweepNote string
}

// request returns req as the container runs it: under the allow-list
// with the proxy variables naming the command's own proxy port.
func (r *run) request(req *executor.Request) *executor.Request {
	if r.net == nil {
		return req
	}
	rq := *req
	rq.Env = r.net.Env(req.Env)
	return &rq
}

// prepare validates req, derives its profile, refuses it in strict mode
// when it cannot be enforced, acquires the container for it and begins
// the protected-path guard.
func (x *Executor) prepare(ctx context.Context, req *executor.Request) (*run, error) {
	req, err := backend.Admit(ctx, req, x.isClosed)
	if err != nil {
		return nil, err
	}
	dir := cmp.Or(req.Dir, req.Root)
	_, sp, err := x.specRequest(ctx, req, dir)
	if err != nil {
		return nil, err
	}
	if err := x.bestEffort.Decide(x.log, Backend, x.cfg.BestEffort, sp.blocking); err != nil {
		return nil, err
	}
	b, err := x.acquire(ctx, sp)
	if err != nil {
		return nil, err
	}
	x.probePath(ctx, b)
	r := &run{x: x, box: b, dir: dir}
	// Nothing that left an earlier command's tree (a background
	// process's, or one that outlived its kill) may run alongside this
	// command or change what its guard takes as the baseline.
	if note := x.sweep(ctx, b); note != "" {
		x.mu.Lock()
		broken := b.broken
		x.mu.Unlock()
		if broken {
			x.release(b)
			return nil, &SetupError{Stage: "sweep", Container: b.id, Message: note, lost: true}
		}
		r.sweepNote = note
	}
	if sp.allowList {
		ns, err := x.boxNetNS(ctx, b)
		if err == nil {
			r.net, err = x.net.BeginIn(ns, req.Policy, req.AskNetwork)
		}
		if err != nil {
			x.release(b)
			return nil, fmt.Errorf("docker executor: %w", err)
		}
	}
	g, err := x.guardFor(req, sp)
	if err == nil {
		r.guard, err = backend.BeginGuard(ctx, g, Backend, x.cfg.BestEffort, x.log)
	}
	if err != nil {
		r.netEvents = r.net.End()
		x.release(b)
		return nil, err
	}
	return r, nil
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

// specRequest derives req's profile for a command in dir and returns it
// with the container spec Run uses (Explain shows the same). When a
// mount's source vanished since the derivation, it derives once more,
// then leaves out what vanished again.
func (x *Executor) specRequest(ctx context.Context, req *executor.Request, dir string) (*policyderive.Profile, *spec, error) {
	for attempt := 0; ; attempt++ {
		pr, _, err := backend.DeriveLive(ctx, x.deriver, req, dir, req.Grants)
		if err != nil {
			return nil, nil, fmt.Errorf("docker executor: deriving the profile: %w", err)
		}
		sp, err := x.specFor(pr, req.Policy)
		if err != nil {
			return nil, nil, err
		}
		if len(sp.vanished) == 0 {
			return pr, sp, nil
		}
		if attempt > 0 {
			return pr, x.withoutVanished(sp, pr), nil
		}
	}
}

// ControlDirShown stands, in an Explanation's mounts, for the command
// runner's control directory, a temporary directory made with each
// container and bound read-only at /.cordon-run.
const ControlDirShown = "CONTROL-DIR"

// Explanation is what Run would enforce for a request: the same spec,
// derived and assessed the same way (Explain).
type Explanation struct {
	Profile *policyderive.Profile
	// Mounts are the container's mounts as the engine gets them.
	Mounts []mount.Mount
	// Network is the container's network mode ("none", or the engine's
	// network for policy.NetworkFull); under the allow-list the proxy
	// listens inside the container's own network namespace.
	Network   string
	AllowList bool
	// Seccomp describes the container's seccomp profile ("" when the
	// engine's own default is used).
	Seccomp  string
	Fidelity *policyderive.Fidelity
	// Blocking are the gaps strict mode refuses: Run fails with an
	// *executor.UnenforceableError naming them unless Config.BestEffort.
	Blocking []executor.Gap
}

// Explain derives and assesses req as Run would, without starting a
// container or running anything, and returns what Run would enforce.
func (x *Executor) Explain(ctx context.Context, req *executor.Request) (*Explanation, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, err
	}
	pr, sp, err := x.specRequest(ctx, req, cmp.Or(req.Dir, req.Root))
	if err != nil {
		return nil, err
	}
	e := &Explanation{Profile: pr, Mounts: sp.mounts, Network: sp.network, AllowList: sp.allowList, Fidelity: sp.fidelity, Blocking: sp.blocking}
	if x.fast {
		// The command runner's control directory is made with each
		// container (a temporary directory); its name is shown as
		// ControlDirShown.
		e.Mounts = append(slices.Clip(e.Mounts), controlMount(ControlDirShown))
	}
	if x.seccomp != "" {
		e.Seccomp = x.secDesc
		if sp.noUnix {
			e.Seccomp += "; socket(AF_UNIX) and socketcall(2) refused (the policy names no socket)"
		}
	}
	return e, nil
}

// Assess derives and assesses req as Run would and returns its gaps:
// every looser element not mitigated, inherent ones included.
func (x *Executor) Assess(ctx context.Context, req *executor.Request) ([]executor.Gap, error) {
	e, err := x.Explain(ctx, req)
	if err != nil {
		return nil, err
	}
	gaps := backend.Gaps(e.Fidelity.Looser())
	for _, g := range e.Blocking { // those not from the fidelity (the allow-list's)
		if !slices.Contains(gaps, g) {
			gaps = append(gaps, g)
		}
	}
	return gaps, nil
}

// end closes the command's proxy session and has the guard repair
// protected paths once the command is over.
func (r *run) end(ctx context.Context) {
	r.once.Do(func() {
		r.netEvents = r.net.End()
		// The guard's last scan comes after every process that left the
		// command's tree is gone: none can write after it.
		swept := r.x.sweep(ctx, r.box)
		r.notes = r.guard.End(ctx)
		for _, n := range []string{r.sweepNote, swept} {
			if n != "" && !slices.Contains(r.notes, n) {
				r.notes = append(r.notes, n)
			}
		}
	})
}

// probePath finds out, once, whether the image's /bin/sh exports a PATH
// of its own when it starts without one (busybox does).
func (x *Executor) probePath(ctx context.Context, b *box) {
	x.pathOnce.Do(func() {
		var out bytes.Buffer
		w := &limitWriter{w: &out, n: 64 << 10}
		req := &executor.Request{Command: "export -p", Env: []string{}}
		o, err := x.exec(context.WithoutCancel(ctx), b, req, "/", w, &limitWriter{w: &bytes.Buffer{}, n: 0}, 10*time.Second, nil, nil, nil)
		if err != nil || o.ended != "" {
			x.log.Debug("docker: probing the image's shell failed", "err", err)
			return
		}
		x.pathProbe = bytes.Contains(out.Bytes(), []byte("PATH="))
		x.log.Debug("docker: the image's shell exports a PATH of its own", "exports", x.pathProbe)
	})
}

// guardFor returns the guard for the request's protect rules over the
// spec's writable trees, or nil when there is nothing to guard.
func (x *Executor) guardFor(req *executor.Request, sp *spec) (*protectguard.Guard, error) {
	g, err := backend.Guard(x.guards, req, sp.guardTrees)
	if err != nil {
		return nil, fmt.Errorf("docker executor: %w", err)
	}
	return g, nil
}

// process is a background command.
type process struct {
	ring     *outbuf.Ring
	kill     chan struct{}
	killOnce sync.Once
	done     chan struct{}
	started  chan error
	res      *executor.Result // set before done is closed
}

func (p *process) ReadOutput() ([]byte, bool) { return p.ring.ReadNew() }
func (p *process) Done() <-chan struct{}      { return p.done }

func (p *process) Wait() *executor.Result {
	<-p.done
	res := *p.res
	res.Stdout, res.Truncated = p.ring.Unread()
	return &res
}

func (p *process) Kill() error {
	p.killOnce.Do(func() { close(p.kill) })
	<-p.done
	return nil
}
