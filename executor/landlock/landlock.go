package landlock

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/launcher"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/internal/netns"
	"github.com/cordon-sandbox/cordon/internal/pathwatch"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// Backend is the executor's name in Capabilities and errors.
const Backend = "landlock"

// DefaultRulesets is the number of built rulesets (one per distinct
// profile) kept when Config.Rulesets is 0.
const DefaultRulesets = 8

// Config configures an Executor. The zero value is strict, protects with
// the guard and uses the kernel's Landlock ABI.
type Config struct {
	// BestEffort runs commands even when the host cannot enforce the
	// derived profile at least as strictly as the policy; Describe then
	// lists what is not enforced. Without it, Run fails with
	// *executor.UnenforceableError.
	BestEffort bool
	// KernelProtect has Landlock itself deny writes to the protected paths
	// that exist when a command starts, by granting the directories
	// above them entry by entry (policyderive.Landlock): protection then
	// holds while the command runs, but nothing can be created, removed or
	// renamed directly in those directories — the workspace root and
	// .git among them — so git commit and most builds fail there. The
	// default leaves existing protected paths writable and has the guard
	// undo changes after the command (see the package documentation).
	KernelProtect bool
	// MaxABI caps the Landlock ABI used (0: the kernel's), to reproduce
	// an older kernel's enforcement on a newer one.
	MaxABI int
	// Rulesets is the number of built rulesets kept, one per distinct
	// profile (each is one open descriptor); 0 means DefaultRulesets.
	Rulesets int
	// WaitDelay bounds how long output is still read after the command
	// exited and its process group was killed; 0 means one second.
	WaitDelay time.Duration
	// ReapOrphans makes this process a child subreaper for good
	// (PR_SET_CHILD_SUBREAPER): a process that leaves a command's tree
	// becomes its child, and is killed when any command of any executor
	// of this process ends, before the guard runs. Where the executor
	// cannot make a cgroup per command (a container, not root) this is
	// what keeps a command's processes from outliving it. Set it only in
	// a process that runs nothing but the executor's commands (as
	// cordon-pod does in a Kubernetes session pod): every child the
	// executor did not start is killed as an orphan.
	ReapOrphans bool
	// NoLoopback turns off the private loopback of network none: by
	// default a command under network none runs in a private network
	// namespace whose only interface is loopback (as root one shared by
	// this executor's commands; otherwise one per command, made by its
	// child in its user namespace), so test servers on 127.0.0.1 work
	// as under bwrap and docker while nothing outside is reachable.
	// With NoLoopback (or where no such namespace can be had) the
	// seccomp filter refuses every socket but AF_UNIX instead.
	NoLoopback bool
	// Logger receives debug records and warnings; nil means slog.Default().
	Logger *slog.Logger
}

// ErrInvalidConfig is wrapped by the errors of Config.Validate.
var ErrInvalidConfig = errors.New("invalid landlock config")

// Validate checks the configuration.
func (c Config) Validate() error {
	checks := []struct {
		bad   bool
		field string
		value any
	}{
		{c.MaxABI < 0, "MaxABI", c.MaxABI},
		{c.Rulesets < 0, "Rulesets", c.Rulesets},
		{c.WaitDelay < 0, "WaitDelay", c.WaitDelay},
	}
	for _, ch := range checks {
		if ch.bad {
			return fmt.Errorf("%w: %s %v is negative", ErrInvalidConfig, ch.field, ch.value)
		}
	}
	return nil
}

// Executor runs commands under Landlock, a seccomp filter and the
// protected-path guard. Use New; an Executor is safe for concurrent use.
// Close releases its rulesets, caches and temporary directory.
type Executor struct {
	cfg      Config
	log      *slog.Logger
	feat     features
	scans    *policyderive.ScanCache
	deriver  *policyderive.Deriver
	tmp      string
	rulesets *rulesetCache

	guards *protectguard.Cache
	// net is the network allow-list proxy of the executor's commands.
	net *netallow.Gate
	// loop is the private network namespace (loopback only) shared by
	// the commands under network none, and the launcher thread in it that
	// forks them, made for the first (as root).
	loop loopNS

	// bestEffort holds the gaps of profiles run in best effort, for Describe.
	bestEffort backend.BestEffortLog

	plans *lru.Cache[string, *plan] // by profile; see planFor
	// names watches the directories that hold the rules' paths, so a
	// plan's ruleset key is computed again only after one changed (nil:
	// no inotify; computed before every command).
	names *pathwatch.Watcher

	descOnce sync.Once
	desc     executor.Capabilities

	closeOnce sync.Once
	closed    chan struct{}
}

var (
	_ executor.Executor  = (*Executor)(nil)
	_ executor.Starter   = (*Executor)(nil)
	_ executor.Describer = (*Executor)(nil)
)

// New detects the host's Landlock ABI, errata and seccomp support and
// returns an executor. It fails with *executor.UnavailableError only off
// Linux; on a Linux kernel without Landlock it succeeds, and Run then
// refuses every command in strict mode (see Describe).
func New(cfg Config) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !supported {
		return nil, &executor.UnavailableError{Backend: Backend, Reason: fmt.Sprintf("Landlock is Linux-only (this is %s)", runtime.GOOS),
			Fix: "use the seatbelt backend on macOS or the docker backend", Err: errors.ErrUnsupported}
	}
	if !initCalled.Load() {
		return nil, fmt.Errorf("landlock executor: %w", ErrNoInit)
	}
	if cfg.ReapOrphans {
		if err := orphans.enable(); err != nil {
			return nil, fmt.Errorf("landlock executor: %w", err)
		}
	}
	log := cmp.Or(cfg.Logger, slog.Default())
	tmp, err := os.MkdirTemp("", "cordon-landlock-")
	if err != nil {
		return nil, fmt.Errorf("landlock executor: private temporary directory: %w", err)
	}
	plans, _ := lru.New[string, *plan](maxPlans) // errs only for a size ≤ 0
	scans := policyderive.NewScanCache(cfg.Logger)
	x := &Executor{
		cfg:      cfg,
		log:      log,
		feat:     detect(),
		scans:    scans,
		deriver:  policyderive.NewDeriver(policyderive.Options{Logger: cfg.Logger, Scans: scans}),
		tmp:      tmp,
		rulesets: newRulesetCache(cmp.Or(cfg.Rulesets, DefaultRulesets)),
		guards:   protectguard.NewCache(16, cfg.Logger),
		net:      netallow.NewGate(cfg.Logger),
		plans:    plans,
		closed:   make(chan struct{}),
	}
	if w, err := pathwatch.New(pathwatch.Names, 0); err == nil {
		x.names = w
	} else {
		log.Debug("landlock executor: no change watcher; ruleset keys are computed before every command", "err", err)
	}
	log.Debug("landlock executor", "abi", x.feat.abi, "errata", x.feat.errata, "seccomp", x.feat.seccomp, "tmp", tmp)
	return x, nil
}

// ABI returns the Landlock ABI the executor enforces: the kernel's, capped
// by Config.MaxABI (0: no Landlock).
func (x *Executor) ABI() int {
	if x.cfg.MaxABI > 0 {
		return min(x.feat.abi, x.cfg.MaxABI)
	}
	return x.feat.abi
}

// TempDir returns the executor's private temporary directory, which every
// command may read and write. Landlock has no mount namespace, so /tmp
// stays the host's and is not writable; a caller that wants programs to
// use this directory sets TMPDIR to it in Request.Env.
func (x *Executor) TempDir() string { return x.tmp }

// Close closes the cached rulesets (running commands are unaffected),
// releases the derivation cache and removes the temporary directory.
func (x *Executor) Close() error {
	var err error
	x.closeOnce.Do(func() {
		close(x.closed)
		x.rulesets.close()
		if x.names != nil {
			x.names.Close()
		}
		err = errors.Join(x.scans.Close(), x.guards.Close(), x.loop.close(), os.RemoveAll(x.tmp))
	})
	return err
}

// run is one prepared command: its spec, guard and ruleset.
type run struct {
	x    *Executor
	spec *procgroup.Spec
	ref  *rulesetRef
	// envFile holds the command's environment for the sandbox helper
	// (without cgo only).
	envFile *os.File
	// statusR and statusW are the helper's status pipe (without cgo).
	statusR, statusW *os.File
	// guard is the command's use of the protected-path guard.
	guard *backend.Guarded
	// cg is the command's cgroup (nil without one), killed and removed
	// when it ends; cgErr says why that failed.
	cg    *commandCgroup
	cgErr error
	// net is the command's private network namespace and proxy session
	// (network allow-list only); netEvents its decisions once ended.
	net       *netallow.Command
	netEvents []netproxy.Event
	// handoff receives the proxy listener the command's child makes in
	// its own network namespace (not root).
	handoff *netHandoff
	// loop is the launcher thread in the executor's loopback-only
	// namespace that starts the command (network none, as root), or nil.
	loop *launcher.Launcher
	// kept are the descriptors of the kept mount namespace the command
	// joins (nil: it makes its own).
	kept *keptNS
	// started registers the leader with the reaper (Config.ReapOrphans);
	// pids are the leaders it registered.
	started func(pid int)
	pids    []int
}

// track registers the coming start with the reaper: the spec reports
// the leader's pid.
func (r *run) track() {
	done := orphans.begin()
	r.started = func(pid int) {
		if pid > 0 {
			r.pids = append(r.pids, pid)
		}
		done(pid)
	}
	r.spec.Started = r.started
	r.spec.Exited = r.kill
}

// kill kills what is left of the command once its leader exited: its
// cgroup, and the processes that left its tree (Config.ReapOrphans).
// They may hold its output pipes open, which would otherwise be awaited.
func (r *run) kill() {
	r.endCgroup()
	if n := orphans.end(r.pids...); n > 0 {
		r.x.log.Debug("landlock: killed processes that left a command's tree", "count", n)
	}
}

// Run runs req.Command under /bin/sh -c in req.Dir, sandboxed by the
// profile derived from req.Policy, req.Root, req.Home and req.Grants.
func (x *Executor) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	r, err := x.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.launch().Run(ctx)
}

// Start starts req.Command in the background under the same sandbox as
// Run; stdout and stderr are merged. Request.Timeout is ignored and ctx
// only governs the start. The protected-path guard repairs when the
// process exits and before every later command.
func (x *Executor) Start(ctx context.Context, req *executor.Request) (executor.Process, error) {
	r, err := x.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.launch().Start(ctx)
}

// launch registers the coming start with the reaper and returns r as the
// pipeline's back half: once started, the ruleset reference, the
// environment and the kept namespace are let go and the sandbox helper's
// report read (without cgo); a cgroup that could not be emptied fails
// Run.
func (r *run) launch() *backend.Command {
	r.track()
	return &backend.Command{
		Spec: r.spec,
		Launched: func(err error) error {
			r.started(0)
			r.x.rulesets.release(r.ref)
			r.closeEnv()
			if err != nil {
				if r.statusR != nil {
					r.statusR.Close()
				}
				return nil
			}
			return r.helperFailed()
		},
		End: func(ctx context.Context, _ *procgroup.Result) []string { return r.end(ctx) },
		Outcome: func(context.Context, *procgroup.Result) error {
			if r.cgErr != nil {
				return fmt.Errorf("landlock executor: %w", r.cgErr)
			}
			return nil
		},
		StartError: r.x.startError,
		Network:    func() []netproxy.Event { return r.netEvents },
	}
}

// prepare derives and assesses the profile, refuses it in strict mode
// when it cannot be enforced, starts the guard and acquires the ruleset.
func (x *Executor) prepare(ctx context.Context, req *executor.Request) (*run, error) {
	req, err := backend.Admit(ctx, req, backend.Closed(Backend, x.closed))
	if err != nil {
		return nil, err
	}
	_, pl, err := x.planRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := x.bestEffort.Decide(x.log, Backend, x.cfg.BestEffort, pl.blocking); err != nil {
		return nil, err
	}
	r := &run{x: x}
	if pl.cgroup {
		if r.cg, err = newCommandCgroup(x.feat.cgroup); err != nil {
			return nil, fmt.Errorf("landlock executor: %w", err)
		}
	}
	g, err := x.guardFor(req, pl)
	if err != nil {
		r.endCgroup()
		return nil, err
	}
	if r.guard, err = backend.BeginGuard(ctx, g, Backend, x.cfg.BestEffort, x.log); err != nil {
		r.endCgroup()
		return nil, err
	}
	key := x.rulesetKey(pl)
	ref, built, err := x.rulesets.acquire(key, func() (*ruleset, error) { return newRuleset(pl, x.log) })
	if err != nil {
		r.end(ctx)
		return nil, fmt.Errorf("landlock executor: building the ruleset: %w", err)
	}
	if built {
		x.log.Debug("landlock: new ruleset", "key", key[:12], "rules", len(pl.ruleset.FS), "abi", pl.abi, "filter", fmt.Sprintf("%+v", pl.filter))
	}
	r.ref = ref
	env := req.Env
	switch {
	case pl.netnsChild:
		// Not root: the command's child makes its network namespace (in
		// its user namespace) and hands the proxy listener over.
		if r.handoff, err = newNetHandoff(func(l net.Listener) error {
			c, err := x.net.Adopt(l, req.Policy, req.AskNetwork)
			r.net = c
			return err
		}); err != nil {
			x.rulesets.release(ref)
			r.end(ctx)
			return nil, fmt.Errorf("landlock executor: %w", err)
		}
		env = netallow.EnvPort(env, policyderive.ProxyPort)
	case pl.loopbackChild:
		// Not root: the command's child makes a network namespace of
		// its own in its user namespace, with loopback up; the listener
		// it hands over (the allow-list's) is not needed.
		if r.handoff, err = newNetHandoff(func(l net.Listener) error { return l.Close() }); err != nil {
			x.rulesets.release(ref)
			r.end(ctx)
			return nil, fmt.Errorf("landlock executor: %w", err)
		}
	case pl.loopback:
		if r.loop, err = x.loop.get(); err != nil {
			x.rulesets.release(ref)
			r.end(ctx)
			return nil, fmt.Errorf("landlock executor: the private loopback of network none: %w", err)
		}
	case pl.netns:
		if r.net, err = x.net.Begin(req.Policy, req.AskNetwork); err != nil {
			x.rulesets.release(ref)
			r.end(ctx)
			return nil, fmt.Errorf("landlock executor: %w", err)
		}
		env = r.net.Env(env)
	}
	// The command restricts itself between fork and exec, so it gets a
	// Landlock domain of its own and nothing in this process is within
	// its reach: with cgo cordon_spawn does it in the vfork child;
	// without, the command runs as the sandbox helper (Init): this
	// binary, re-executed with an empty environment, restricts itself and
	// then executes /bin/sh -c with req.Env.
	if canSpawn {
		r.kept = x.keptNamespace(ref.rs)
		r.spec = &procgroup.Spec{
			Path:         executor.Shell,
			Args:         []string{"sh", "-c", req.Command},
			Env:          env,
			Dir:          req.Dir,
			Timeout:      req.Timeout,
			OutputLimit:  req.OutputLimit, // 0: procgroup.DefaultOutputLimit
			WaitDelay:    x.cfg.WaitDelay,
			StartProcess: r.onLoop(spawner(ref.rs, r.cgroupProcs(), r.handoff, r.kept)),
			NetNS:        r.netNS(),
			Stdio:        req.Stdio,
		}
		return r, nil
	}
	mounts := "-"
	if ref.rs.mounts != mountsNone {
		mp, err := newMountPlan(ref.rs.writable, ref.rs.masks)
		if err != nil {
			x.rulesets.release(ref)
			r.end(ctx)
			return nil, fmt.Errorf("landlock executor: %w", err)
		}
		mounts = encodeMounts(mp)
	}
	ef, err := envFile(env)
	if err != nil {
		x.rulesets.release(ref)
		r.end(ctx)
		return nil, fmt.Errorf("landlock executor: passing the environment to the sandbox helper: %w", err)
	}
	r.envFile = ef
	var files []*os.File
	if ref.rs.file != nil {
		files = append(files, ref.rs.file)
	}
	sr, sw, err := os.Pipe()
	if err != nil {
		ef.Close()
		x.rulesets.release(ref)
		r.end(ctx)
		return nil, fmt.Errorf("landlock executor: the sandbox helper's status pipe: %w", err)
	}
	r.statusR, r.statusW = sr, sw
	netFD := -1
	if r.handoff != nil {
		netFD = 3 + len(files)
		files = append(files, r.handoff.child)
	}
	envFD := 3 + len(files)
	files = append(files, ef, sw)
	r.spec = &procgroup.Spec{
		Path:        "/proc/self/exe",
		Args:        helperArgs(ref.rs.fd(), ref.rs.flags, ref.rs.filter, mounts, cmp.Or(r.cgroupProcs(), "-"), netFD, envFD, envFD+1, executor.Shell, []string{"sh", "-c", req.Command}),
		Env:         []string{},
		Dir:         req.Dir,
		Timeout:     req.Timeout,
		OutputLimit: req.OutputLimit, // 0: procgroup.DefaultOutputLimit
		WaitDelay:   x.cfg.WaitDelay,
		ExtraFiles:  files,
		NetNS:       r.netNS(),
		Launcher:    r.loop, // nil: the default
		Stdio:       req.Stdio,
	}
	if ref.rs.mounts == mountsUserNS {
		r.spec.StartProcess = userNSStart(ref.rs, r.handoff)
	}
	return r, nil
}

// closeEnv closes the helper's environment memfd, once the command has
// started (or failed to).
func (r *run) closeEnv() {
	r.kept.close()
	if r.envFile != nil {
		r.envFile.Close()
	}
	if r.statusW != nil {
		r.statusW.Close()
	}
}

// helperFailed returns the sandbox helper's report, once its status pipe
// is closed on both ends' writers (the command executed, or the helper
// exited): nil when the command started, or without a helper.
func (r *run) helperFailed() error {
	if r.statusR == nil {
		return nil
	}
	defer r.statusR.Close()
	return readStatus(r.statusR)
}

// planRequest derives req's profile, with the private temporary
// directory, and returns it with its plan: what Run enforces, and what
// Explain shows.
func (x *Executor) planRequest(ctx context.Context, req *executor.Request) (*policyderive.Profile, *plan, error) {
	pr, err := backend.Derive(ctx, x.deriver, req, req.Dir, req.Grants)
	if err != nil {
		return nil, nil, fmt.Errorf("landlock executor: deriving the profile: %w", err)
	}
	pr = pr.WithTmpDir(x.tmp)
	return pr, x.planFor(pr), nil
}

// maxPlans bounds the plans kept (the most recently used).
const maxPlans = 64

// planFor returns the plan of pr, assessed once per profile. The key is
// the profile's (which names every path and rule) and whether a grant is
// a Unix socket, which assess looks up on the host and the key does not
// see; the ruleset key (plan.key) still looks at every rule's inode
// before each command.
func (x *Executor) planFor(pr *policyderive.Profile) *plan {
	key := pr.Key() + strconv.FormatBool(namesSocket(pr))
	if pl, ok := x.plans.Get(key); ok {
		return pl
	}
	pl := assess(pr, x.feat, x.cfg)
	x.plans.Add(key, pl)
	return pl
}

// end kills what is left of the command (its cgroup), then runs the
// guard's repair (even when ctx was cancelled) and returns the violations
// for the Result. A cgroup that could not be emptied is in r.cgErr.
func (r *run) end(ctx context.Context) []string {
	r.kill()
	r.netEvents = r.net.End()
	r.net = nil
	r.handoff.close()
	return r.guard.End(ctx)
}

// netNS is the command's private network namespace, or nil.
func (r *run) netNS() *netns.Namespace {
	if r.net == nil {
		return nil
	}
	return r.net.NS
}

// onLoop returns start run on the loopback namespace's launcher thread
// when the command starts there (a custom starter forks from the thread
// that calls it), else start itself.
func (r *run) onLoop(start func(string, []string, *os.ProcAttr) (*os.Process, error)) func(string, []string, *os.ProcAttr) (*os.Process, error) {
	l := r.loop
	if l == nil {
		return start
	}
	return func(name string, argv []string, attr *os.ProcAttr) (p *os.Process, err error) {
		if rerr := l.Run(func() { p, err = start(name, argv, attr) }); rerr != nil {
			return nil, rerr
		}
		return p, err
	}
}

// loopNS is a loopback-only network namespace made once, on first use,
// and a launcher thread that lives in it: every command of the executor
// under network none (as root) is forked from that thread, so a start
// costs no thread and no setns of its own.
type loopNS struct {
	mu  sync.Mutex
	ns  *netns.Namespace
	l   *launcher.Launcher
	err error
	// closed is set by close: no namespace is made after it.
	closed bool
}

// get returns the launcher thread in the namespace, making both on the
// first call.
func (l *loopNS) get() (*launcher.Launcher, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, executor.ErrClosed
	}
	if l.l == nil && l.err == nil {
		if l.ns, l.err = netns.New(); l.err == nil {
			// No no_new_privs on the thread: each command sets its own.
			if l.l, l.err = launcher.New(l.ns.EnterThread); l.err != nil {
				l.ns.Close()
				l.ns = nil
			}
		}
	}
	return l.l, l.err
}

// close ends the launcher thread and releases the namespace (commands
// still in it keep it alive).
func (l *loopNS) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.l == nil {
		return nil
	}
	l.l.Close()
	err := l.ns.Close()
	l.l, l.ns = nil, nil
	return err
}

// endCgroup kills and removes the command's cgroup, once.
func (r *run) endCgroup() {
	if r.cg == nil {
		return
	}
	n, err := r.cg.end()
	if n > 0 {
		r.x.log.Debug("landlock: killed processes left by the command", "count", n, "cgroup", r.cg.dir)
	}
	if err != nil {
		// Run fails with it; a Start'ed command has no one to tell.
		r.x.log.Warn("landlock: the command's cgroup could not be emptied", "cgroup", r.cg.dir, "err", err)
	}
	r.cg, r.cgErr = nil, err
}

// cgroupProcs is the cgroup.procs file the command joins, or "".
func (r *run) cgroupProcs() string {
	if r.cg == nil {
		return ""
	}
	return r.cg.procs()
}

func (x *Executor) startError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("landlock executor: %w", err)
}

// guardFor returns the guard for the request's protect rules over the
// plan's writable trees, or nil when there is nothing to guard.
func (x *Executor) guardFor(req *executor.Request, pl *plan) (*protectguard.Guard, error) {
	g, err := backend.Guard(x.guards, req, pl.guardTrees)
	if err != nil {
		return nil, fmt.Errorf("landlock executor: %w", err)
	}
	return g, nil
}

// rulesetKey returns pl.key(), computed again only when a directory on
// the way to one of the rules' paths changed since (pathwatch): with
// Landlock splitting every directory that holds a denied file, a
// 100,000-file tree has tens of thousands of rules, and stat of each
// before every command was most of its cost.
func (x *Executor) rulesetKey(pl *plan) string {
	if x.names == nil {
		return pl.key()
	}
	pl.kmu.Lock()
	defer pl.kmu.Unlock()
	g := x.names.Gen()
	if pl.kok && (pl.kgen == g || pl.keyUnaffected(x.names)) {
		pl.kgen = g
		return pl.kval
	}
	// Watch first, then stat: a change after Gen is seen next time.
	ok := true
	for d := range pl.above {
		if err := x.names.Add(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			x.log.Debug("landlock: ruleset key: a directory cannot be watched; computed before every command", "err", err)
			ok = false
		}
	}
	pl.kval, pl.kgen, pl.kok = pl.key(), g, ok
	return pl.kval
}

// keyUnaffected reports whether every change since the key was computed
// names a path that is neither a rule's nor a directory on the way to one
// (a temporary file beside the rules, another backend's placeholder):
// the names the key looked at still name what they did.
func (pl *plan) keyUnaffected(w *pathwatch.Watcher) bool {
	evs, ok := w.Since(pl.kgen)
	if !ok {
		return false
	}
	for _, ev := range evs {
		if ev.Dir == "" || pl.reaches(abspath.Join(ev.Dir, ev.Name)) {
			return false
		}
	}
	return true
}

// reaches reports whether p is a rule's path or a directory above one.
func (pl *plan) reaches(p string) bool { return pl.rulePaths[p] || pl.above[p] }

// key identifies the ruleset a plan needs: the ruleset's rights and
// rules — each path with the inode it names now, so a path replaced since
// gets a new ruleset —, the filter, and the mount namespace's regions and
// masks.
func (pl *plan) key() string {
	rs := pl.ruleset
	h := sha256.New()
	// Appended by hand, not with fmt: this runs before every command.
	b := make([]byte, 0, 512)
	b = fmt.Appendf(b, "abi %d fs %d net %d scoped %d proc %v filter %v %v %v %v %v %v\n",
		rs.ABI, rs.HandledFS, rs.HandledNet, rs.Scoped, pl.procRule, pl.filter.inet, pl.filter.loopback, pl.filter.unix, pl.filter.ioURing, pl.filter.kernelObjects, pl.filter.otherProcesses)
	for _, r := range rs.FS {
		dev, ino, ok := fileID(r.Path)
		b = strconv.AppendQuote(b, r.Path)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(r.Access), 10)
		b = append(b, ' ')
		b = strconv.AppendBool(b, r.Dir)
		b = append(b, ' ')
		b = strconv.AppendBool(b, r.PerProcess)
		b = append(b, ' ')
		b = strconv.AppendUint(b, dev, 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, ino, 10)
		b = append(b, ' ')
		b = strconv.AppendBool(b, ok)
		b = append(b, '\n')
		if len(b) > 4096 {
			h.Write(b)
			b = b[:0]
		}
	}
	for _, n := range rs.Net {
		b = fmt.Appendf(b, "port %d %d\n", n.Port, n.Access)
	}
	// The mount namespace's regions and masks: a denied file gets no
	// rule, so a new one beside another changes only these.
	for _, l := range [][]string{pl.mountTops, {"masks"}, pl.mountMasks} {
		for _, p := range l {
			b = strconv.AppendQuote(b, p)
			b = append(b, '\n')
			if len(b) > 4096 {
				h.Write(b)
				b = b[:0]
			}
		}
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// allControls are the controls this backend reports on.
var allControls = executor.Controls()

// Describe reports what the executor enforces on this host, assessed for
// a coding-mode profile (network none) of a fresh workspace: the gaps Run
// would declare, the Landlock ABI and errata, seccomp support, and the
// stricter consequences.
func (x *Executor) Describe(ctx context.Context) executor.Capabilities {
	x.descOnce.Do(func() { x.desc = x.describe() })
	return x.bestEffort.Apply(x.desc.Clone())
}

func (x *Executor) describe() executor.Capabilities {
	caps := executor.Capabilities{
		Backend:    Backend,
		Sandboxed:  x.ABI() > 0,
		Enforced:   []executor.Control{},
		Gaps:       []executor.Gap{},
		BestEffort: x.cfg.BestEffort,
		Info: map[string]string{
			"landlock_abi": strconv.Itoa(x.feat.abi),
			"abi_used":     strconv.Itoa(x.ABI()),
			"errata":       strconv.Itoa(x.feat.errata),
			"seccomp":      strconv.FormatBool(x.feat.seccomp),
			"arch":         x.feat.arch,
			"tmpdir":       x.tmp,
			"protect":      "guard: protected paths are restored after each command",
			"capabilities": "every capability dropped, no_new_privs set",
		},
	}
	if x.cfg.KernelProtect {
		caps.Info["protect"] = "kernel: existing protected paths are denied by Landlock; new ones are removed after each command"
	}
	if !x.feat.seccomp {
		caps.Info["seccomp"] = "false: " + x.feat.seccompWhy
	}
	if x.feat.cgroup != "" {
		caps.Info["cgroup"] = "each command runs in a cgroup of its own under " + x.feat.cgroup + ", killed with cgroup.kill when it ends (needs cgroup v2 with cgroup.kill, Linux ≥ 5.14, and the right to make child cgroups: root or a delegated subtree)"
		caps.Info["keeper"] = "a keeper process (bash, else /bin/sh, started with the first command; a failure to start it is logged as a warning) kills every command cgroup of this process when this process ends without ending them (SIGKILL, a crash, exit with background commands running); commands cannot signal it (Landlock signal scoping, ABI 6)"
	} else {
		caps.Info["cgroup"] = "none: " + x.feat.cgroupWhy
		caps.Info["keeper"] = "none (it needs the command cgroups): processes that left a command's tree outlive this process if it is killed"
	}
	if orphans.on.Load() {
		caps.Info["reaper"] = "this process is a child subreaper (Config.ReapOrphans, Linux 3.4): processes that leave a command's tree are killed when any command ends"
	}
	switch {
	case !x.feat.seccomp:
		caps.Info["loopback"] = "none: no seccomp filter (" + x.feat.seccompWhy + "), which the private loopback needs to keep the namespace's sockets to TCP, UDP and ICMP"
	case x.cfg.NoLoopback:
		caps.Info["loopback"] = "none: Config.NoLoopback: under network none the seccomp filter refuses every socket but AF_UNIX, so a server on 127.0.0.1 (a test server) cannot run"
	case x.feat.abi == 0:
		caps.Info["loopback"] = "none: there is no Landlock"
	case x.feat.netnsWhy == "":
		caps.Info["loopback"] = "shared: under network none commands run in one private network namespace of this executor whose only interface is loopback (servers on 127.0.0.1 and ::1 work; commands of this executor can reach each other's servers and take over each other's ports with SO_REUSEPORT; only TCP, UDP and ICMP sockets besides AF_UNIX; nothing outside is reachable); needs CAP_SYS_ADMIN (root) and the seccomp filter"
	case x.feat.mounts == mountsUserNS && x.feat.childNetWhy == "":
		caps.Info["loopback"] = "per command: under network none each command's child makes a private network namespace in its user namespace whose only interface is loopback (servers on 127.0.0.1 and ::1 work; nothing outside is reachable); needs unprivileged user namespaces with capabilities"
	default:
		caps.Info["loopback"] = "none: " + x.feat.netnsWhy + netChildWhy(x.feat) + ": under network none the seccomp filter refuses every socket but AF_UNIX, so a server on 127.0.0.1 (a test server) cannot run; bwrap and docker give each command (session) a private loopback"
	}
	switch x.feat.mounts {
	case mountsRoot:
		caps.Info["mount_namespace"] = "root: each command unshares a mount namespace in which every mount outside its writable grants is read-only (needs CAP_SYS_ADMIN)"
	case mountsUserNS:
		caps.Info["mount_namespace"] = "user namespace: each command gets a user namespace mapping only this uid and gid, and in it a mount namespace in which every mount outside its writable grants is read-only (needs unprivileged user namespaces with capabilities)"
	default:
		caps.Info["mount_namespace"] = "none: " + x.feat.mountsWhy
	}
	if x.feat.abi == 0 {
		caps.Info["troubleshooting"] = "Landlock is missing or disabled: it needs Linux ≥ 5.13 built with CONFIG_SECURITY_LANDLOCK and landlock in the lsm= boot parameter (for example lsm=landlock,lockdown,yama,integrity,apparmor,bpf)"
	}
	dir, err := os.MkdirTemp("", "cordon-landlock-describe-")
	if err != nil {
		caps.Info["error"] = "assessing a sample profile: " + err.Error()
		return caps
	}
	defer os.RemoveAll(dir)
	pr, err := policyderive.Derive(policy.Coding.Policy(), dir, "", dir, nil)
	if err != nil {
		caps.Info["error"] = "assessing a sample profile: " + err.Error()
		return caps
	}
	pl := assess(pr.WithTmpDir(x.tmp), x.feat, x.cfg)
	caps.Gaps = backend.GroupedGaps(pl.looser)
	for i := range caps.Gaps {
		if caps.Gaps[i].Control == executor.ControlFSNewFiles {
			caps.Gaps[i].Reason += "; the same holds for every bare-name or glob pattern of denied_paths and path_rules: a matching path created while a command runs is not masked until the next command (protected ones are removed by the guard when it ends)"
		}
	}
	x.describeAllowList(&caps)
	for _, c := range allControls {
		if _, ok := caps.Gap(c); !ok {
			caps.Enforced = append(caps.Enforced, c)
		}
	}
	if s := backend.StricterNotes(pl.fidelity); s != "" {
		caps.Info["stricter"] = s
	}
	if len(pl.blocking) > 0 {
		var b []string
		for _, g := range pl.blocking {
			b = append(b, string(g.Control))
		}
		mode := "strict mode refuses to run: "
		if x.cfg.BestEffort {
			mode = "best effort runs without enforcing: "
		}
		caps.Info["unenforceable"] = mode + strings.Join(b, ", ")
	}
	return caps
}

// describeAllowList reports the network allow-list: enforced as root (this
// process makes each command's network namespace) or where the commands'
// children can make theirs in their user namespaces; else a gap.
func (x *Executor) describeAllowList(caps *executor.Capabilities) {
	f := x.feat
	switch {
	case f.netnsWhy == "":
		caps.Info["network_allowlist"] = "root: each command starts in a private network namespace (loopback only) whose one listener is the executor's proxy on 127.0.0.1:3128; Landlock allows TCP connect to that port only"
	case f.mounts == mountsUserNS && f.childNetWhy == "":
		caps.Info["network_allowlist"] = "user namespace: each command's child unshares a network namespace (loopback only) with its user namespace, listens on 127.0.0.1:3128 and hands the listener to the executor's proxy; Landlock allows TCP connect to that port only (needs unprivileged user namespaces with capabilities)"
	default:
		why := errors.New(f.netnsWhy + netChildWhy(f))
		caps.Gaps = append(caps.Gaps, backend.AllowListNoNamespace(why))
		caps.Info["network_allowlist"] = "none: " + why.Error()
	}
}
