//go:build linux

package bwrap

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/internal/launcher"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// inlineArgsMax is the size of the options below which they are written
// to the --args pipe before the start; larger ones are written by a
// goroutine while bwrap reads. A pipe always holds one page.
const inlineArgsMax = 4096

// maxPlans bounds the rendered plans kept (one per profile key).
const maxPlans = 128

// Executor runs commands under bubblewrap. Use New; an Executor is safe
// for concurrent use. Close releases its derivation cache.
type Executor struct {
	// relayOnce makes relayBin, an execute-only copy of the host program
	// for the allow-list's relay (not root), in relayTmp.
	relayOnce          sync.Once
	relayBin, relayTmp string
	relayErr           error

	cfg      Config
	log      *slog.Logger
	feat     *features
	launcher *launcher.Launcher
	scans    *policyderive.ScanCache
	deriver  *policyderive.Deriver
	grants   []policy.Grant // Config.ExtraBinds

	// plans are the rendered plans by profile key, the most recently
	// used kept.
	plans *lru.Cache[string, *plan]

	guards *protectguard.Cache
	// net is the network allow-list proxy of the executor's commands.
	net *netallow.Gate

	descOnce sync.Once
	desc     executor.Capabilities
	// bestEffort holds the gaps of profiles run in best effort, for Describe.
	bestEffort backend.BestEffortLog

	closeOnce sync.Once
	closed    chan struct{}

	// argsInline puts every option on bwrap's command line instead of
	// behind --args (for the benchmark comparing the two).
	argsInline bool
	// beforeStart, when set (tests), runs between planning and the start.
	beforeStart func()
	// derive is x.deriver.DeriveWith (tests substitute a stale profile).
	derive func(ctx context.Context, pc *policy.Checker, cwd string, grants []policy.Grant, mounts []policyderive.Mask) (*policyderive.Profile, error)
}

var (
	_ executor.Executor  = (*Executor)(nil)
	_ executor.Starter   = (*Executor)(nil)
	_ executor.Describer = (*Executor)(nil)
)

// New finds bwrap, detects what it and the host support (its version and
// options, user namespaces, the sysctls that restrict them, mounting a
// fresh /proc) by running trial sandboxes, and returns an executor. It
// fails with *executor.UnavailableError naming the cause and the fix when
// bwrap is missing or cannot sandbox on this host, and with a
// *ConfigError for an invalid Config.
func New(cfg Config) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l, err := launcher.Default()
	if err != nil {
		return nil, fmt.Errorf("bwrap executor: launcher thread: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*probeTimeout)
	defer cancel()
	feat, err := detect(ctx, cfg, l)
	if err != nil {
		return nil, err
	}
	log := cmp.Or(cfg.Logger, slog.Default())
	plans, _ := lru.New[string, *plan](maxPlans) // errs only for a size ≤ 0
	scans := policyderive.NewScanCache(cfg.Logger)
	x := &Executor{
		plans:    plans,
		cfg:      cfg,
		log:      log,
		feat:     feat,
		launcher: l,
		scans:    scans,
		deriver:  policyderive.NewDeriver(policyderive.Options{Logger: cfg.Logger, Scans: scans}),
		guards:   protectguard.NewCache(16, cfg.Logger),
		net:      netallow.NewGate(cfg.Logger),
		closed:   make(chan struct{}),
	}
	x.derive = x.deriver.DeriveWith
	for _, b := range cfg.ExtraBinds {
		p := filepath.Clean(b.Path)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		op := policy.Read
		if b.Write {
			op = policy.Write
		}
		x.grants = append(x.grants, policy.Grant{Path: p, Op: op})
	}
	log.Debug("bwrap executor", "path", feat.path, "version", feat.version, "args_fd", feat.argsFD,
		"json_status", feat.jsonStatus, "disable_userns", feat.disableUserns, "detect", feat.took)
	return x, nil
}

// Path returns the absolute path of the bwrap program used.
func (x *Executor) Path() string { return x.feat.path }

// Version returns bwrap's version ("0.8.0").
func (x *Executor) Version() string { return x.feat.version }

// Close releases the derivation cache. Running commands are unaffected;
// later calls of Run and Start fail.
func (x *Executor) Close() error {
	var err error
	x.closeOnce.Do(func() {
		close(x.closed)
		err = errors.Join(x.scans.Close(), x.guards.Close())
		if x.relayTmp != "" {
			err = errors.Join(err, os.RemoveAll(x.relayTmp))
		}
	})
	return err
}

// relayBinary returns an execute-only (0111) copy of the host program exe,
// made once per executor: bound read-only into the sandbox as the relay,
// it runs there but cannot be read, so the host program — which may hold
// secrets — is not disclosed to the command.
func (x *Executor) relayBinary(exe string) (string, error) {
	x.relayOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cordon-relay-bin-")
		if err != nil {
			x.relayErr = err
			return
		}
		x.relayTmp = dir
		src, err := os.Open(exe)
		if err != nil {
			x.relayErr = err
			return
		}
		defer src.Close()
		bin := filepath.Join(dir, "relay")
		dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
		if err != nil {
			x.relayErr = err
			return
		}
		_, err = io.Copy(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(bin, 0o111)
		}
		x.relayBin, x.relayErr = bin, err
	})
	if x.relayErr != nil {
		return "", fmt.Errorf("the relay's copy of the host program: %w", x.relayErr)
	}
	return x.relayBin, nil
}

// Run runs req.Command under /bin/sh -c in req.Dir, sandboxed by the
// profile derived from req.Policy, req.Root, req.Home and req.Grants.
//
// When bwrap fails to set the sandbox up (the command never started)
// and a destination it was to mount over has vanished since the plan —
// a socket or file removed by another process in that instant, which
// bwrap then tries to create in a read-only bind — Run plans once more
// from the tree as it is now and starts again.
func (x *Executor) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	var prior []string // the failed setup's violations (repairs)
	for attempt := 0; ; attempt++ {
		r, err := x.prepare(ctx, req)
		if err != nil {
			return nil, err
		}
		if x.beforeStart != nil {
			x.beforeStart()
		}
		res, err := r.back().Run(ctx)
		var se *SetupError
		if errors.As(err, &se) && attempt == 0 && r.vanished() && ctx.Err() == nil {
			x.log.Debug("bwrap: setup failed on a destination that vanished; planning again", "err", err)
			prior = r.notes
			continue
		}
		if res != nil && len(prior) > 0 {
			res.Violations = append(prior, res.Violations...)
		}
		return res, err
	}
}

// Start starts req.Command in the background under the same sandbox as
// Run; stdout and stderr are merged. Request.Timeout is ignored and ctx
// only governs the start. When the process exits, its placeholder mount
// points are removed and the protected-path guard repairs what it
// changed; the guard also repairs before every later command.
func (x *Executor) Start(ctx context.Context, req *executor.Request) (executor.Process, error) {
	r, err := x.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.back().Start(ctx)
}

// back is r as the pipeline's back half: bwrap's status says whether
// the command was executed, and a sandbox bwrap could not set up is a
// *SetupError.
func (r *run) back() *backend.Command {
	var started bool
	return &backend.Command{
		Spec: r.spec,
		End: func(ctx context.Context, res *procgroup.Result) []string {
			started = r.end(ctx, res)
			return r.notes
		},
		Outcome: func(_ context.Context, res *procgroup.Result) error {
			if r.x.feat.jsonStatus && !started && !res.TimedOut && res.Signal == "" {
				return &SetupError{Message: strings.TrimSpace(string(res.Stderr)), ExitCode: res.ExitCode}
			}
			return nil
		},
		StartError: startError,
		Network:    func() []netproxy.Event { return r.netEvents },
		Fix:        mapSignal,
	}
}

// Args returns the complete bwrap command line Run would execute for req,
// with every option on the command line (Run passes them through --args
// instead), for inspection and for running the same sandbox by hand. It
// plans as Run does and refuses what Run refuses (*executor.UnenforceableError
// in strict mode). It leaves out one thing Run adds: the seccomp program
// refusing socket(AF_UNIX), read from a descriptor (see Explain).
func (x *Executor) Args(ctx context.Context, req *executor.Request) ([]string, error) {
	argv, _, err := x.Explain(ctx, req)
	return argv, err
}

// Explain returns what Args returns and the fidelity report of the plan
// Run enforces: the renderer's, with what the executor adds (the seccomp
// filter, the allow-list relay) and strict mode's verdict on it. The
// command line leaves out the seccomp program refusing socket(AF_UNIX),
// which bwrap reads from a descriptor (--seccomp FD) that a command line
// cannot carry; the fidelity report names it.
func (x *Executor) Explain(ctx context.Context, req *executor.Request) ([]string, *policyderive.Fidelity, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, nil, err
	}
	// The same planning as Run, strict refusal included; the placeholders
	// it registers are released at once (nothing starts).
	_, pl, skip, mounts, err := x.plan(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	backend.Default.Release(mounts)
	if len(pl.blocking) > 0 && !x.cfg.BestEffort {
		return nil, nil, &executor.UnenforceableError{Backend: Backend, Gaps: pl.blocking}
	}
	argv := x.args(req, pl, skip)
	return argv, pl.fidelity, nil
}

// args is Explain's command line.
func (x *Executor) args(req *executor.Request, pl *plan, skip map[int]bool) []string {
	opts, _ := encode(pl.options, skip)
	argv := []string{x.feat.path}
	argv = append(argv, splitNUL(opts)...)
	env := req.Env
	if pl.netns || pl.relay != "" {
		env = netallow.EnvPort(env, relayPort)
	}
	argv = append(argv, envArgs(env)...)
	if pl.relay != "" {
		// The relay's copy and socket are made per executor and command.
		return append(argv, "--ro-bind", "<execute-only copy of "+pl.relay+">", relayPath, "--bind", "<per-command proxy socket>", relaySock,
			"--", relayPath, relayArg, relaySock, strconv.Itoa(relayPort), executor.Shell, "sh", "-c", req.Command)
	}
	return append(argv, "--", executor.Shell, "-c", req.Command)
}

// run is one prepared command.
type run struct {
	x           *Executor
	spec        *procgroup.Spec
	pl          *plan
	skip        map[int]bool
	mountPoints []policyderive.Mask
	guard       *backend.Guarded
	// files are closed at the end; status is the read end of
	// --json-status-fd, statusW its write end.
	files           []*os.File
	status, statusW *os.File
	// net is the command's private network namespace and proxy session
	// (network allow-list only); netEvents its decisions once ended.
	net       *netallow.Command
	netEvents []netproxy.Event
	// relayDir holds the proxy's Unix socket for the command's relay,
	// relayExe the host program bound into the sandbox as the relay (not
	// root).
	relayDir, relayExe string
	// notes are violations and repair problems for Result.Violations.
	notes []string
	once  sync.Once
}

// prepare derives and assesses the profile, refuses it in strict mode
// when it cannot be enforced, looks at the host paths bwrap could create,
// starts the guard, and builds the command.
func (x *Executor) prepare(ctx context.Context, req *executor.Request) (*run, error) {
	req, err := backend.Admit(ctx, req, backend.Closed(Backend, x.closed))
	if err != nil {
		return nil, err
	}
	pr, pl, skip, mounts, err := x.plan(ctx, req)
	if err != nil {
		return nil, err
	}
	r := &run{x: x, mountPoints: mounts, pl: pl, skip: skip}
	if err := x.bestEffort.Decide(x.log, Backend, x.cfg.BestEffort, pl.blocking); err != nil {
		r.end(ctx, nil)
		return nil, err
	}
	opts, nopts := pl.encoded, pl.nargs
	if req.Stdio != nil && req.Stdio.Terminal != nil {
		skip = withoutNewSession(pl.options, skip)
	}
	data := 0 // hidden files bound from /dev/null descriptors (dataOpts)
	switch {
	case len(skip) > 0:
		opts, nopts = encode(pl.options, skip)
		if x.feat.dataMasks {
			opts, data = dataOpts(opts, 3)
		}
	case x.feat.dataMasks && pl.dataEncoded != nil:
		opts, data = pl.dataEncoded, pl.dataN // rewritten once per plan (planFor)
	case x.feat.dataMasks:
		opts, data = dataOpts(opts, 3) // a plan made elsewhere
	}
	nopts += 2 * data // --perms 0000 each
	cmdEnv := req.Env
	switch {
	case pl.netns:
		if r.net, err = x.net.Begin(req.Policy, req.AskNetwork); err != nil {
			r.end(ctx, nil)
			return nil, fmt.Errorf("bwrap executor: %w", err)
		}
		cmdEnv = r.net.Env(cmdEnv)
	case pl.relay != "":
		bin, err := x.relayBinary(pl.relay)
		if err == nil {
			err = r.beginRelay(req, bin)
		}
		if err != nil {
			r.end(ctx, nil)
			return nil, fmt.Errorf("bwrap executor: %w", err)
		}
		cmdEnv = r.net.Env(cmdEnv)
	}
	env := envArgs(cmdEnv)
	if n := nopts + len(env) + 2 + 2 + 2 + 4; n > MaxArgs { // + --args N, --json-status-fd N, --seccomp N, -- /bin/sh -c CMD
		r.end(ctx, nil)
		return nil, &executor.UnenforceableError{Backend: Backend, Gaps: []executor.Gap{{Control: executor.ControlFSRead,
			Reason: fmt.Sprintf("the sandbox needs %d bwrap arguments (%d masks, %d environment variables), more than bwrap's limit of %d", n, len(pr.Masks), len(req.Env), MaxArgs)}}}
	}

	g, err := x.guardFor(req, pl)
	if err == nil {
		r.guard, err = backend.BeginGuard(ctx, g, Backend, x.cfg.BestEffort, x.log)
	}
	if err != nil {
		r.end(ctx, nil)
		return nil, err
	}
	argv, extra, err := r.command(req, opts, data, env, pl.seccomp)
	if err != nil {
		r.end(ctx, nil)
		return nil, err
	}
	r.spec = &procgroup.Spec{
		Path:        x.feat.path,
		Args:        argv,
		Env:         []string{}, // bwrap itself gets nothing: --setenv sets the command's
		Dir:         "/",
		Timeout:     req.Timeout,
		OutputLimit: req.OutputLimit, // 0: procgroup.DefaultOutputLimit
		WaitDelay:   x.cfg.WaitDelay,
		Launcher:    x.launcher,
		ExtraFiles:  extra,
		Stdio:       req.Stdio,
	}
	if r.net != nil {
		r.spec.NetNS = r.net.NS
	}
	return r, nil
}

// command builds bwrap's argv and the descriptors it reads: the options
// behind --args 3 (a pipe), the environment after them, --json-status-fd
// on the next descriptor, the seccomp program (--seccomp, a pipe) when
// there is one, then -- /bin/sh -c CMD.
func (r *run) command(req *executor.Request, opts []byte, data int, env []string, seccomp []byte) (argv []string, extra []*os.File, err error) {
	x := r.x
	argv = []string{x.feat.path}
	// Descriptors 3 ... 3+data-1: the hidden files' empty content.
	for range data {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return nil, nil, fmt.Errorf("bwrap executor: a hidden file's descriptor: %w", err)
		}
		r.files = append(r.files, f) // closed by end, with the others
		extra = append(extra, f)
	}
	inline := x.argsInline || !x.feat.argsFD
	if inline {
		argv = append(argv, splitNUL(opts)...)
		argv = append(argv, env...)
	} else {
		data := opts
		if len(env) > 0 {
			data = slices.Grow(slices.Clip(opts), envSize(env))
			for _, a := range env {
				data = append(data, a...)
				data = append(data, 0)
			}
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("bwrap executor: --args pipe: %w", err)
		}
		r.files = append(r.files, pr)
		if len(data) <= inlineArgsMax {
			_, err = pw.Write(data)
			pw.Close()
			if err != nil {
				return nil, nil, fmt.Errorf("bwrap executor: writing --args: %w", err)
			}
		} else {
			go func() {
				_, _ = pw.Write(data) // fails with EPIPE when bwrap died before reading
				pw.Close()
			}()
		}
		argv = append(argv, "--args", strconv.Itoa(3+len(extra)))
		extra = append(extra, pr)
	}
	if x.feat.jsonStatus {
		sr, sw, err := os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("bwrap executor: --json-status-fd pipe: %w", err)
		}
		r.status, r.statusW = sr, sw
		r.files = append(r.files, sr, sw)
		argv = append(argv, "--json-status-fd", strconv.Itoa(3+len(extra)))
		extra = append(extra, sw)
	}
	if seccomp != nil {
		// A few hundred bytes: the pipe's buffer holds them all.
		fr, fw, err := os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("bwrap executor: --seccomp pipe: %w", err)
		}
		r.files = append(r.files, fr)
		_, err = fw.Write(seccomp)
		fw.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("bwrap executor: writing --seccomp: %w", err)
		}
		argv = append(argv, "--seccomp", strconv.Itoa(3+len(extra)))
		extra = append(extra, fr)
	}
	if r.relayDir != "" {
		argv = append(argv, "--ro-bind", r.relayExe, relayPath, "--bind", filepath.Join(r.relayDir, "proxy.sock"), relaySock,
			"--", relayPath, relayArg, relaySock, strconv.Itoa(relayPort), executor.Shell, "sh", "-c", req.Command)
		return argv, extra, nil
	}
	argv = append(argv, "--", executor.Shell, "-c", req.Command)
	return argv, extra, nil
}

// beginRelay listens on a Unix socket in a private directory for the
// command's relay (Init, inside the sandbox) and serves the proxy on it.
func (r *run) beginRelay(req *executor.Request, exe string) error {
	dir, err := os.MkdirTemp("", "cordon-relay-")
	if err != nil {
		return fmt.Errorf("the relay's socket directory: %w", err)
	}
	r.relayDir, r.relayExe = dir, exe
	l, err := net.Listen("unix", filepath.Join(dir, "proxy.sock"))
	if err != nil {
		return fmt.Errorf("the relay's socket: %w", err)
	}
	if r.net, err = r.x.net.Adopt(l, req.Policy, req.AskNetwork); err != nil {
		l.Close()
		return err
	}
	return nil
}

// end runs once after the command: it reads whether bwrap started the
// command, waits for the sandbox's init to be gone, removes placeholder
// mount points, and has the guard repair protected paths (even when ctx
// was cancelled). res is nil when the command did not start.
func (r *run) end(ctx context.Context, res *procgroup.Result) (started bool) {
	r.once.Do(func() {
		if r.statusW != nil {
			r.statusW.Close()
		}
		var initPid int
		if r.status != nil && res != nil {
			started, initPid = readStatus(r.status)
		}
		for _, f := range r.files {
			f.Close()
		}
		if initPid > 0 {
			awaitExit(initPid, time.Second)
		}
		for _, s := range backend.Default.Release(r.mountPoints) {
			r.notes = append(r.notes, "placeholder mount point not removed: "+s)
		}
		r.netEvents = r.net.End()
		if r.relayDir != "" {
			os.RemoveAll(r.relayDir)
		}
		r.notes = append(r.notes, r.guard.End(ctx)...)
	})
	return started
}

// vanished reports whether a destination the start was to mount over
// (one the plan checks, not left out, and not a placeholder created on
// purpose) no longer exists.
func (r *run) vanished() bool {
	for _, i := range r.pl.checks {
		if op := r.pl.options[i]; r.skip[i] || op.placeholder && op.parentRW {
			continue // left out, or a mount point made on purpose
		}
		if _, err := os.Lstat(r.pl.options[i].dest); err != nil {
			return true
		}
	}
	return false
}

// readStatus reads bwrap's --json-status-fd documents: "child-pid" (the
// host pid of the sandbox's init) and "exit-code", which bwrap writes only
// when the command was executed.
func readStatus(f *os.File) (started bool, initPid int) {
	_ = f.SetReadDeadline(time.Now().Add(time.Second))
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var doc map[string]json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			return started, initPid
		}
		if v, ok := doc["child-pid"]; ok {
			_ = json.Unmarshal(v, &initPid)
		}
		if _, ok := doc["exit-code"]; ok {
			started = true
		}
	}
}

// awaitExit waits, at most d, until process pid has exited: the
// sandbox's init is killed when bwrap exits (--die-with-parent), and the
// guard must not look before every process of the sandbox is gone.
func awaitExit(pid int, d time.Duration) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone already (ESRCH), or no pidfd (Linux < 5.3)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if n != 0 || err != nil {
			return
		}
	}
}

// plan derives the request's profile, the placeholder mount points live
// in this process an input of the derivation, renders it (cached by key) and
// decides which options to leave out of this start; it registers the
// placeholders the start uses. When an option must be left out because a
// path vanished since the derivation, it derives once more, so the
// sandbox matches the tree as it is now.
func (x *Executor) plan(ctx context.Context, req *executor.Request) (*policyderive.Profile, *plan, map[int]bool, []policyderive.Mask, error) {
	grants := x.grantsFor(req)
	pc, err := req.Compiled()
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("bwrap executor: %w", err)
	}
	for attempt := 0; ; attempt++ {
		// The live placeholder mount points are an input of the
		// derivation; Derive returns with the registry locked (the set
		// unchanged) until the placeholders are acquired.
		pr, err := backend.Default.Derive(func(live []policyderive.Mask) (*policyderive.Profile, error) {
			return x.derive(ctx, pc, req.Dir, grants, live)
		})
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("bwrap executor: deriving the profile: %w", err)
		}
		pl, err := x.planFor(pr)
		if err != nil {
			backend.Default.Unlock()
			return nil, nil, nil, nil, err
		}
		skip := x.skips(pl)
		if len(skip) > 0 && attempt == 0 {
			backend.Default.Unlock()
			continue
		}
		var mounts []policyderive.Mask
		for _, i := range pl.checks {
			if op := pl.options[i]; op.placeholder && !skip[i] {
				mounts = append(mounts, pl.placeholders[op.dest])
			}
		}
		backend.Default.Acquire(mounts)
		backend.Default.Unlock()
		return pr, pl, skip, mounts, nil
	}
}

// skips returns the options to leave out of this start: those whose
// destination lies inside a host bind and does not exist now, so bwrap
// would create it on the host (or fail in a read-only bind) — except
// placeholders in a read-write bind whose parent exists, whose mount
// point is created on purpose and removed afterwards.
func (x *Executor) skips(pl *plan) map[int]bool {
	var skip map[int]bool
	for _, i := range pl.checks {
		op := pl.options[i]
		if _, err := os.Lstat(op.dest); err == nil {
			continue
		}
		if op.placeholder && op.parentRW {
			if fi, err := os.Lstat(filepath.Dir(op.dest)); err == nil && fi.IsDir() {
				continue
			}
		}
		if skip == nil {
			skip = map[int]bool{}
		}
		skip[i] = true
		x.log.Debug("bwrap: leaving out a mount whose destination does not exist", "option", op.args[0], "dest", op.dest)
	}
	return skip
}

// grantsFor returns the request's approved grants and Config.ExtraBinds.
func (x *Executor) grantsFor(req *executor.Request) []policy.Grant {
	if len(x.grants) == 0 {
		return req.Grants
	}
	return append(slices.Clip(req.Grants), x.grants...)
}

// planFor returns the cached plan of pr's key, rendering it on a miss.
func (x *Executor) planFor(pr *policyderive.Profile) (*plan, error) {
	key := pr.Key()
	if pl, ok := x.plans.Get(key); ok {
		return pl, nil
	}
	pl, err := newPlan(pr, x.feat.disableUserns)
	if err != nil {
		return nil, err
	}
	if x.feat.dataMasks {
		pl.dataEncoded, pl.dataN = dataOpts(pl.encoded, 3)
	}
	x.plans.Add(key, pl)
	return pl, nil
}

// guardFor returns the guard for the request's protect rules over the
// plan's writable trees, or nil when there is nothing to guard.
func (x *Executor) guardFor(req *executor.Request, pl *plan) (*protectguard.Guard, error) {
	g, err := backend.Guard(x.guards, req, pl.guardTrees)
	if err != nil {
		return nil, fmt.Errorf("bwrap executor: %w", err)
	}
	return g, nil
}

// envArgs returns --clearenv and a --setenv per entry of env (validated).
func envArgs(env []string) []string {
	out := make([]string, 0, 1+3*len(env))
	out = append(out, "--clearenv")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, "--setenv", k, v)
	}
	return out
}

func envSize(env []string) int {
	n := 0
	for _, a := range env {
		n += len(a) + 1
	}
	return n
}

func splitNUL(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b[:len(b)-1]), "\x00")
}

func startError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("bwrap executor: %w", err)
}

// mapSignal turns bwrap's report of a command killed by signal N, exit
// status 128+N, back into ExitCode -1 and the signal's name.
func mapSignal(r *executor.Result) {
	if n := r.ExitCode - 128; n >= 1 && n <= 64 && r.Signal == "" && !r.TimedOut {
		r.ExitCode = -1
		r.Signal = syscall.Signal(n).String()
	}
}

// Assess derives and assesses req as Run would, without registering
// mount points or starting anything, and returns its gaps: every looser
// element not mitigated, inherent ones included.
func (x *Executor) Assess(ctx context.Context, req *executor.Request) ([]executor.Gap, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, err
	}
	pc, err := req.Compiled()
	if err != nil {
		return nil, fmt.Errorf("bwrap executor: %w", err)
	}
	live, _ := backend.Default.Live()
	pr, err := x.derive(ctx, pc, req.Dir, x.grantsFor(req), live)
	if err != nil {
		return nil, fmt.Errorf("bwrap executor: deriving the profile: %w", err)
	}
	pl, err := x.planFor(pr)
	if err != nil {
		return nil, err
	}
	return append(backend.Gaps(pl.looser), pl.blocking...), nil
}

// maxDataMasks bounds the hidden files dataOpts turns into empty
// unreadable files: each needs a descriptor of its own, which bwrap reads
// to its end and closes. Those beyond keep /dev/null.
const maxDataMasks = 256

// dataOpts rewrites the hidden files of opts (NUL-separated), which
// policyderive.Bwrap covers with /dev/null (`--ro-bind /dev/null P`: the
// command would see a character device that reads as empty), as
// `--perms 0000 --ro-bind-data FD P`: a regular empty file, mode 0000,
// bound read-only, so that reading it fails with "Permission denied" and
// writing it with "Read-only file system", as a model would expect of a
// file it may not touch. The FDs are numbered from first, one per file
// (n of them, at most maxDataMasks): Run passes a descriptor of its own
// on /dev/null for each (EOF at once: the file is empty), which bwrap
// reads and closes. bwrap makes the file in its own staging area:
// nothing is created on the host.
func dataOpts(opts []byte, first int) (out []byte, n int) {
	args := splitNUL(opts)
	out = make([]byte, 0, len(opts)+64)
	add := func(a ...string) {
		for _, s := range a {
			out = append(out, s...)
			out = append(out, 0)
		}
	}
	for i := 0; i < len(args); i++ {
		if args[i] == "--ro-bind" && i+2 < len(args) && args[i+1] == os.DevNull && n < maxDataMasks {
			add("--perms", "0000", "--ro-bind-data", strconv.Itoa(first+n), args[i+2])
			n++
			i += 2
			continue
		}
		add(args[i])
	}
	return out, n
}

// withoutNewSession returns skip with the --new-session option added, for
// a command on a terminal of its own: procgroup makes that terminal
// bwrap's controlling terminal and the command keeps bwrap's session, so
// that ^C on it interrupts the command. --new-session exists to keep
// TIOCSTI away from the caller's terminal, which the command never holds
// there. The option is found by its place among the parsed options,
// never by value: an operand (a path) may be spelled like an option.
func withoutNewSession(ops []option, skip map[int]bool) map[int]bool {
	out := maps.Clone(skip)
	if out == nil {
		out = map[int]bool{}
	}
	for i, o := range ops {
		if o.args[0] == "--new-session" {
			out[i] = true
		}
	}
	return out
}
