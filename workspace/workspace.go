package workspace

import (
	"context"
	"fmt"
	"github.com/cordon-sandbox/cordon/toolcache"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// Workspace is a directory tree, the policy that guards it, and the
// executor that runs commands in it. It is immutable after Local and safe
// for concurrent use; Open starts a Session.
type Workspace struct {
	checker      *policy.Checker
	modeName     string // "coding", "readonly", "trusted" or "custom"
	exec         executor.Executor
	asker        Asker
	store        *approvalStore // WithApprovalStore
	autoAllow    bool           // WithSandboxAutoAllow
	gate         runGate        // orders exclusive auto-allowed commands
	limits       Limits
	shellTimeout time.Duration
	env          map[string]string // WithEnv
	inheritEnv   bool
	parentEnv    []string // os.Environ() at Local
	log          *slog.Logger
	locks        pathLocks
	caches       []toolcache.Cache // toolchain caches granted (instructions)
	cacheEnv     map[string]string // their variables (commandEnv)
}

// Local returns the workspace rooted at root, a directory on this machine.
// Without options it uses the coding preset (policy.Coding), the user's home
// directory, executor.NewLocal() (no OS sandbox) and no approver.
//
// The policy options follow the policy file's rules (the README's policy file reference):
// WithPolicy is exclusive with WithMode and the shorthands, and
// policy.Readonly with WithCommandRules is an error. Invalid options, an
// invalid policy and a root that is not a directory are reported as
// *OptionError.
func Local(root string, opts ...Option) (*Workspace, error) {
	c := &config{shellTimeout: DefaultShellTimeout}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, &OptionError{Option: "root", Value: root, Err: err}
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, &OptionError{Option: "root", Value: root, Reason: "the workspace root must be an existing directory", Err: err}
	}
	if !st.IsDir() {
		return nil, &OptionError{Option: "root", Value: root, Reason: "the workspace root must be an existing directory", Err: &NotRegularError{Path: abs, Kind: kindOf(st.Mode())}}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && filepath.Dir(real) == real {
		return nil, &OptionError{Option: "root", Value: root, Reason: "the workspace root cannot be the file system root: every path would be inside it (in coding mode, writable)"}
	}
	home := ""
	if c.home != nil {
		home = *c.home
	} else if h, err := os.UserHomeDir(); err == nil {
		home = h
	}
	if c.store != nil && storeInside(c.store.path, abs) {
		return nil, &OptionError{Option: "WithApprovalStore", Value: c.store.path, Reason: "the approval store must be outside the workspace root (a command could rewrite the policy it holds)"}
	}
	p, modeName, err := buildPolicy(c)
	if err != nil {
		return nil, err
	}
	log := c.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var caches []toolcache.Cache
	if c.toolchains != nil {
		caches = *c.toolchains
	} else if p.AllowShell {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			var derr error
			caches, derr = toolcache.Detect(context.Background(), toolcache.Options{Root: real, Home: home, Writable: toolcache.WritableBy(p, real, home)})
			if derr != nil {
				log.Warn("toolchain caches not granted", "err", derr)
			}
		}
	}
	if len(caches) > 0 {
		p = toolcache.Extend(p, caches)
	}
	checker, err := policy.NewChecker(p, abs, home)
	if err != nil {
		return nil, &OptionError{Option: "policy", Reason: "invalid policy", Err: err}
	}
	exec := c.exec
	if exec == nil {
		exec = executor.NewLocal()
	}
	return &Workspace{
		checker:      checker,
		modeName:     modeName,
		exec:         exec,
		asker:        c.asker,
		store:        c.store,
		autoAllow:    c.autoAllow == nil || *c.autoAllow,
		gate:         newRunGate(),
		limits:       c.limits.withDefaults(),
		shellTimeout: c.shellTimeout,
		env:          c.env,
		inheritEnv:   c.inheritEnv,
		parentEnv:    os.Environ(),
		caches:       caches,
		cacheEnv:     toolcache.Env(caches),
		log:          log,
	}, nil
}

// Root returns the resolved absolute path of the workspace root.
func (w *Workspace) Root() string { return w.checker.Root() }

// Home returns the resolved home directory, or "" when unknown.
func (w *Workspace) Home() string { return w.checker.Home() }

// Policy returns a copy of the effective policy.
func (w *Workspace) Policy() *policy.Policy { return w.checker.Policy().Clone() }

// Checker returns the compiled policy. It is safe for concurrent use.
func (w *Workspace) Checker() *policy.Checker { return w.checker }

// Executor returns the executor commands run under.
func (w *Workspace) Executor() executor.Executor { return w.exec }

// Limits returns the effective limits.
func (w *Workspace) Limits() Limits { return w.limits }

// Open starts a session: the unit that owns background processes. ctx
// bounds the executor's Describe call only.
func (w *Workspace) Open(ctx context.Context) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		ws:     w,
		ctx:    sctx,
		cancel: cancel,
		procs:  map[string]*bgProc{},
		grants: sessionGrants{cmds: map[string]bool{}, hosts: map[string]bool{}},
		caps:   w.capabilities(ctx),
	}
	s.auto = w.autoAllowFor(ctx, s.caps)
	w.log.Debug("session opened", "root", w.Root(), "executor", s.caps.Backend)
	return s, nil
}

// capabilities asks the executor what it enforces; an executor without
// Describe is assumed to enforce nothing.
func (w *Workspace) capabilities(ctx context.Context) executor.Capabilities {
	if d, ok := w.exec.(executor.Describer); ok {
		return d.Describe(ctx)
	}
	return executor.Capabilities{Backend: fmt.Sprintf("%T", w.exec), Sandboxed: false}
}

// display returns the path as the model should see it: root-relative
// inside the root, absolute outside.
func display(v *policy.Verdict) string {
	if v.Inside {
		return v.Rel
	}
	return v.Path
}

// relOrAbs returns abs as the model should see it.
func (w *Workspace) relOrAbs(abs string) string {
	root := w.Root()
	if abs == root {
		return "."
	}
	if r, err := filepath.Rel(root, abs); err == nil && filepath.IsLocal(r) {
		return filepath.ToSlash(r)
	}
	return abs
}

// storeInside reports an approval store at or below root, by name or
// through symbolic links (of the root, or of the store's nearest existing
// directory).
func storeInside(store, root string) bool {
	rroot, err := filepath.EvalSymlinks(root)
	if err != nil {
		rroot = root
	}
	for _, r := range []string{root, rroot} {
		if within(store, r) {
			return true
		}
	}
	for dir := filepath.Dir(store); ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return within(real, rroot) || within(real, root)
		}
		if dir == filepath.Dir(dir) {
			return false
		}
	}
}
