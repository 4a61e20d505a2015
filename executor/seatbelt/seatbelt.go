package seatbelt

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// maxPlans bounds the rendered plans kept (one per profile key).
const maxPlans = 128

// trialTimeout bounds each trial run of /bin/sh -c : (in New, and when Run
// checks whether sandbox-exec failed to set up the sandbox).
const trialTimeout = 10 * time.Second

// setupPrefix starts every message sandbox-exec prints about itself. A
// failed command whose stderr starts with it makes Run check, with a
// trial under the same profile, whether the sandbox was ever set up.
var setupPrefix = []byte("sandbox-exec: ")

// Executor runs commands under macOS's Seatbelt through
// /usr/bin/sandbox-exec, with a profile rendered per request by
// policyderive.SBPL and the protected-path guard. Use New; an Executor is
// safe for concurrent use. Close releases its caches and removes its
// temporary directory.
//
// Seatbelt judges every file operation by the path it names, last
// matching rule first; see the package documentation for what that
// enforces and what it cannot.
type Executor struct {
	cfg     Config
	log     *slog.Logger
	program string
	scans   *policyderive.ScanCache
	deriver *policyderive.Deriver
	tmp     string

	// plans are the assessed plans by profile key, the most recently
	// used kept.
	plans *lru.Cache[string, *plan]

	guards *protectguard.Cache

	// bestEffort holds the gaps of profiles run in best effort, for Describe.
	bestEffort backend.BestEffortLog

	descOnce sync.Once
	desc     executor.Capabilities

	closeOnce sync.Once
	closed    chan struct{}
}

var (
	_ executor.Executor  = (*Executor)(nil)
	_ executor.Starter   = (*Executor)(nil)
	_ executor.Describer = (*Executor)(nil)
	_ executor.TempDirer = (*Executor)(nil)
)

// New checks that /usr/bin/sandbox-exec exists and can sandbox a shell
// here — it runs /bin/sh -c : once under the profile of a coding-mode
// workspace — and returns an executor. It fails with a *ConfigError for
// an invalid Config and with *executor.UnavailableError on every system
// but macOS (wrapping errors.ErrUnsupported), when sandbox-exec is
// missing (ErrNotInstalled), when it cannot apply profiles here
// (ErrCannotApply: already inside a sandbox) and when the shell cannot
// start under cordon's profile (ErrTrial).
func New(cfg Config) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !supported {
		return nil, unsupported()
	}
	return newExecutor(cfg, Program)
}

// newExecutor is New with the sandbox-exec program given: Program in
// production, an inspectable fake in this package's tests.
func newExecutor(cfg Config, program string) (*Executor, error) {
	if err := checkProgram(program); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "cordon-seatbelt-")
	if err == nil {
		// Seatbelt matches resolved paths: on macOS the temporary
		// directory is under /var, a symbolic link to /private/var.
		tmp, err = filepath.EvalSymlinks(tmp)
	}
	if err != nil {
		return nil, fmt.Errorf("seatbelt executor: private temporary directory: %w", err)
	}
	plans, _ := lru.New[string, *plan](maxPlans) // errs only for a size ≤ 0
	scans := policyderive.NewScanCache(cfg.Logger)
	x := &Executor{
		cfg:     cfg,
		log:     cmp.Or(cfg.Logger, slog.Default()),
		program: program,
		scans:   scans,
		deriver: policyderive.NewDeriver(policyderive.Options{Logger: cfg.Logger, Scans: scans}),
		tmp:     tmp,
		plans:   plans,
		guards:  protectguard.NewCache(16, cfg.Logger),
		closed:  make(chan struct{}),
	}
	began := time.Now()
	if err := x.trial(); err != nil {
		x.Close()
		return nil, err
	}
	x.log.Debug("seatbelt executor", "program", program, "tmp", tmp, "trial", time.Since(began))
	return x, nil
}

// checkProgram fails with *executor.UnavailableError wrapping
// ErrNotInstalled unless program is an executable regular file.
func checkProgram(program string) error {
	fi, err := os.Stat(program)
	reason := ""
	switch {
	case err != nil:
		reason = fmt.Sprintf("%s: %v", program, err)
	case !fi.Mode().IsRegular():
		reason = fmt.Sprintf("%s is not a regular file", program)
	case fi.Mode()&0o111 == 0:
		reason = fmt.Sprintf("%s is not executable", program)
	default:
		return nil
	}
	return &executor.UnavailableError{Backend: Backend, Reason: reason,
		Fix: "sandbox-exec ships with macOS in /usr/bin; cordon never uses one found elsewhere (use the docker backend where it is missing)",
		Err: fmt.Errorf("%w: %s", ErrNotInstalled, reason)}
}

// trial runs /bin/sh -c : under the profile of a coding-mode workspace
// and, if that fails, under a profile that allows everything, to tell a
// sandbox-exec that cannot apply profiles here from a profile that does
// not let the shell start.
func (x *Executor) trial() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*trialTimeout)
	defer cancel()
	root, err := os.MkdirTemp("", "cordon-seatbelt-trial-")
	if err == nil {
		defer os.RemoveAll(root)
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return fmt.Errorf("seatbelt executor: trial workspace: %w", err)
	}
	pr, err := policyderive.Derive(policy.Coding.Policy(), root, "", root, nil)
	if err != nil {
		return fmt.Errorf("seatbelt executor: deriving the trial profile: %w", err)
	}
	pl, err := assess(x.program, pr.WithTmpDir(x.tmp))
	if err != nil {
		return fmt.Errorf("seatbelt executor: rendering the trial profile: %w", err)
	}
	ok, msg := x.try(ctx, pl.prefix, root, nil)
	if ok {
		return nil
	}
	permissive, err := argvPrefix(x.program, "(version 1)\n(allow default)\n", nil)
	if err != nil {
		return err
	}
	if ok, msg := x.try(ctx, permissive, root, nil); !ok {
		return &executor.UnavailableError{Backend: Backend,
			Reason: "sandbox-exec cannot apply even a profile that allows everything",
			Fix:    "run cordon outside any other Seatbelt sandbox (an app's or another agent's): Seatbelt sandboxes do not nest",
			Err:    fmt.Errorf("%w: %s", ErrCannotApply, msg)}
	}
	return &executor.UnavailableError{Backend: Backend,
		Reason: "/bin/sh cannot start under the profile cordon renders for a coding-mode workspace",
		Fix:    "report the message with the macOS version (sandbox-probe detect); use the docker backend meanwhile",
		Err:    fmt.Errorf("%w: %s", ErrTrial, msg)}
}

// try runs prefix + /bin/sh -c : in dir with env and reports whether it
// exited 0, and otherwise what it printed.
func (x *Executor) try(ctx context.Context, prefix []string, dir string, env []string) (ok bool, msg string) {
	argv, err := withCommand(prefix, ":")
	if err != nil {
		return false, err.Error()
	}
	res, err := procgroup.Run(ctx, &procgroup.Spec{Path: x.program, Args: argv, Env: env, Dir: dir, Timeout: trialTimeout, OutputLimit: 4096})
	switch {
	case err != nil:
		return false, err.Error()
	case res.TimedOut:
		return false, "timed out after " + trialTimeout.String()
	case res.ExitCode != 0 || res.Signal != "":
		msg := strings.TrimSpace(string(res.Stderr) + "\n" + string(res.Stdout))
		if res.Signal != "" {
			return false, strings.TrimSpace("killed by signal " + res.Signal + ": " + msg)
		}
		return false, strings.TrimSpace(fmt.Sprintf("exit status %d: %s", res.ExitCode, msg))
	}
	return true, ""
}

// TempDir returns the executor's private temporary directory, which every
// command may read and write. Seatbelt has no mount namespace, so the
// host's /tmp and the per-user temporary directory stay the host's and
// are not writable; the workspace sets TMPDIR to this directory (it
// implements executor.TempDirer).
func (x *Executor) TempDir() string { return x.tmp }

// Close releases the derivation cache and removes the temporary
// directory. Running commands are unaffected; later calls of Run and
// Start fail.
func (x *Executor) Close() error {
	var err error
	x.closeOnce.Do(func() {
		close(x.closed)
		err = errors.Join(x.scans.Close(), x.guards.Close(), os.RemoveAll(x.tmp))
	})
	return err
}

// run is one prepared command: its spec, plan and guard.
type run struct {
	x    *Executor
	pl   *plan
	spec *procgroup.Spec
	// guard is the command's use of the protected-path guard.
	guard *backend.Guarded
}

// Run runs req.Command under /bin/sh -c in req.Dir, sandboxed by the
// profile derived from req.Policy, req.Root, req.Home and req.Grants.
// A command that sandbox-exec could not start fails with *SetupError.
func (x *Executor) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	if err := executor.RefuseStdio(req, Backend); err != nil {
		return nil, err
	}
	r, err := x.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.back(req).Run(ctx)
}

// Start starts req.Command in the background under the same sandbox as
// Run; stdout and stderr are merged. Request.Timeout is ignored and ctx
// only governs the start. The protected-path guard repairs when the
// process exits and before every later command. A sandbox-exec that
// fails to set up the sandbox shows as a process that exits at once with
// its message in the output (Start does not run the check Run does).
func (x *Executor) Start(ctx context.Context, req *executor.Request) (executor.Process, error) {
	r, err := x.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.back(req).Start(ctx)
}

// back is r as the pipeline's back half. A failure that may be
// sandbox-exec's own (its message prefix, a non-zero exit) is told from
// the command's by a shell under the same profile, directory and
// environment; sandbox-exec's is a *SetupError.
func (r *run) back(req *executor.Request) *backend.Command {
	x := r.x
	return &backend.Command{
		Spec: r.spec,
		End:  func(ctx context.Context, _ *procgroup.Result) []string { return r.end(ctx) },
		Outcome: func(ctx context.Context, res *procgroup.Result) error {
			if res.TimedOut || res.Signal != "" || res.ExitCode == 0 || !bytes.HasPrefix(res.Stderr, setupPrefix) {
				return nil
			}
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), trialTimeout)
			defer cancel()
			if ok, msg := x.try(tctx, r.pl.prefix, req.Dir, req.Env); !ok && !strings.HasPrefix(msg, "timed out") {
				return &SetupError{Message: strings.TrimSpace(string(firstLines(res.Stderr, 20))), ExitCode: res.ExitCode}
			}
			return nil
		},
		StartError: startError,
	}
}

// Args returns the complete command line Run would execute for req:
// /usr/bin/sandbox-exec -p PROFILE -D KEY=VALUE ... /bin/sh -c COMMAND,
// for inspection and for running the same sandbox by hand. The command
// runs with exactly req.Env in req.Dir.
func (x *Executor) Args(ctx context.Context, req *executor.Request) ([]string, error) {
	argv, _, err := x.Explain(ctx, req)
	return argv, err
}

// Explain returns what Args returns and the fidelity report of the plan
// Run enforces (the renderer's, with this backend's additions). Unlike
// Run it does not refuse a plan strict mode refuses: the report's
// Blocking elements say what Run would refuse.
func (x *Executor) Explain(ctx context.Context, req *executor.Request) ([]string, *policyderive.Fidelity, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, nil, err
	}
	pl, err := x.planFor(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	argv, err := withCommand(pl.prefix, req.Command)
	return argv, pl.fidelity, err
}

// Assess derives and assesses req as Run would and returns its gaps:
// every looser element, inherent ones included.
func (x *Executor) Assess(ctx context.Context, req *executor.Request) ([]executor.Gap, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, err
	}
	pl, err := x.planFor(ctx, req)
	if err != nil {
		return nil, err
	}
	return backend.Gaps(pl.looser), nil
}

// prepare derives and assesses the profile, refuses it in strict mode
// when it cannot be enforced, starts the guard and builds the command.
func (x *Executor) prepare(ctx context.Context, req *executor.Request) (*run, error) {
	req, err := backend.Admit(ctx, req, backend.Closed(Backend, x.closed))
	if err != nil {
		return nil, err
	}
	pl, err := x.planFor(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := x.bestEffort.Decide(x.log, Backend, x.cfg.BestEffort, pl.blocking); err != nil {
		return nil, err
	}
	argv, err := withCommand(pl.prefix, req.Command)
	if err != nil {
		return nil, err
	}
	r := &run{x: x, pl: pl}
	g, err := x.guardFor(req, pl)
	if err != nil {
		return nil, err
	}
	if r.guard, err = backend.BeginGuard(ctx, g, Backend, x.cfg.BestEffort, x.log); err != nil {
		return nil, err
	}
	r.spec = &procgroup.Spec{
		Path:        x.program,
		Args:        argv,
		Env:         req.Env, // sandbox-exec passes it to the shell untouched
		Dir:         req.Dir,
		Timeout:     req.Timeout,
		OutputLimit: req.OutputLimit, // 0: procgroup.DefaultOutputLimit
		WaitDelay:   x.cfg.WaitDelay,
	}
	return r, nil
}

// planFor derives the request's profile and returns its plan, rendered
// once per profile key.
func (x *Executor) planFor(ctx context.Context, req *executor.Request) (*plan, error) {
	pr, err := backend.Derive(ctx, x.deriver, req, req.Dir, req.Grants)
	if err != nil {
		return nil, fmt.Errorf("seatbelt executor: deriving the profile: %w", err)
	}
	pr = pr.WithTmpDir(x.tmp)
	key := pr.Key()
	if pl, ok := x.plans.Get(key); ok {
		return pl, nil
	}
	pl, err := assess(x.program, pr)
	if err != nil {
		return nil, fmt.Errorf("seatbelt executor: rendering the profile: %w", err)
	}
	x.plans.Add(key, pl)
	return pl, nil
}

// end runs the guard's repair (even when ctx was cancelled) and returns
// the violations for the Result.
func (r *run) end(ctx context.Context) []string { return r.guard.End(ctx) }

// guardFor returns the guard for the request's protect rules over the
// plan's writable trees, or nil when there is nothing to guard.
func (x *Executor) guardFor(req *executor.Request, pl *plan) (*protectguard.Guard, error) {
	g, err := backend.Guard(x.guards, req, pl.guardTrees)
	if err != nil {
		return nil, fmt.Errorf("seatbelt executor: %w", err)
	}
	return g, nil
}

func startError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, fs.ErrNotExist) {
		// sandbox-exec vanished since New.
		return &executor.UnavailableError{Backend: Backend, Reason: "starting " + Program + " failed", Err: fmt.Errorf("%w: %w", ErrNotInstalled, err)}
	}
	return fmt.Errorf("seatbelt executor: %w", err)
}

// firstLines returns at most n lines of b.
func firstLines(b []byte, n int) []byte {
	i := 0
	for range n {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return b
		}
		i += j + 1
	}
	return b[:i]
}
