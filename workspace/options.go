package workspace

import (
	"slices"

	"context"
	"github.com/cordon-sandbox/cordon/toolcache"
	"log/slog"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// DefaultShellTimeout is the timeout of a foreground command when
// WithShellTimeout is not given.
const DefaultShellTimeout = 300 * time.Second

// Option configures a Workspace. Options are applied in order; Local
// validates the result as a whole.
type Option func(*config) error

// config collects the options.
type config struct {
	mode         *policy.Mode
	explicit     *policy.Policy
	readable     []string
	writable     []string
	denied       []string
	pathRules    []policy.PathRule
	commandRules []policy.CommandRule
	network      *policy.NetworkSpec
	layers       policy.Stack

	env          map[string]string
	inheritEnv   bool
	shellTimeout time.Duration
	limits       Limits
	exec         executor.Executor
	asker        Asker
	store        *approvalStore
	autoAllow    *bool
	home         *string
	logger       *slog.Logger
	// toolchains holds WithToolchainCaches' caches; nil means detect.
	toolchains *[]toolcache.Cache
}

// WithToolchainCaches sets the toolchain caches commands get (see package
// toolcache) instead of the ones Local detects: none turns them off. The
// CLI passes the caches it detected and showed.
func WithToolchainCaches(caches ...toolcache.Cache) Option {
	return func(c *config) error {
		cs := slices.Clone(caches)
		if cs == nil {
			cs = []toolcache.Cache{}
		}
		c.toolchains = &cs
		return nil
	}
}

// WithMode selects the preset policy (default policy.Coding). The
// shorthand options refine it.
func WithMode(m policy.Mode) Option {
	return func(c *config) error {
		if m > policy.Trusted {
			return &OptionError{Option: "WithMode", Value: m.String(), Reason: "unknown mode"}
		}
		c.mode = &m
		return nil
	}
}

// WithPolicy sets the complete policy explicitly, replacing the preset. It
// is mutually exclusive with WithMode and the shorthands (WithReadable,
// WithWritable, WithDeniedPaths, WithPathRules, WithCommandRules), as an
// explicit `policy` is in a policy file; WithNetwork may stand beside it.
// The policy is copied.
func WithPolicy(p *policy.Policy) Option {
	return func(c *config) error {
		if p == nil {
			return &OptionError{Option: "WithPolicy", Value: "<nil>", Reason: "no policy"}
		}
		c.explicit = p.Clone()
		return nil
	}
}

// WithReadable adds paths the agent may read (PathRule allow read); they
// come after WithPathRules and WithWritable in the rule list.
func WithReadable(patterns ...string) Option {
	return func(c *config) error {
		c.readable = append(append([]string{}, c.readable...), patterns...)
		return nil
	}
}

// WithWritable adds paths the agent may read and write (PathRule allow
// read, write); they come after WithPathRules and before WithReadable.
func WithWritable(patterns ...string) Option {
	return func(c *config) error {
		c.writable = append(append([]string{}, c.writable...), patterns...)
		return nil
	}
}

// WithDeniedPaths adds patterns denied for every operation, before any
// rule.
func WithDeniedPaths(patterns ...string) Option {
	return func(c *config) error {
		c.denied = append(append([]string{}, c.denied...), patterns...)
		return nil
	}
}

// WithPathRules appends path rules; they are tried first, in order.
func WithPathRules(rules ...policy.PathRule) Option {
	return func(c *config) error {
		c.pathRules = append(append([]policy.PathRule{}, c.pathRules...), rules...)
		return nil
	}
}

// WithCommandRules appends command rules, tried in order per segment. They
// are an error with policy.Readonly, which has no shell.
func WithCommandRules(rules ...policy.CommandRule) Option {
	return func(c *config) error {
		c.commandRules = append(append([]policy.CommandRule{}, c.commandRules...), rules...)
		return nil
	}
}

// WithNetwork sets the OS-level network access of commands to none or
// full, overriding the preset's (or the explicit policy's). Use
// WithNetworkAllowList for the allow-list.
func WithNetwork(n policy.Network) Option {
	return func(c *config) error {
		if n > policy.NetworkFull {
			return &OptionError{Option: "WithNetwork", Value: n.String(), Reason: "unknown network setting (the allow-list is WithNetworkAllowList)"}
		}
		c.network = policy.NetworkSpecOf(n)
		return nil
	}
}

// WithNetworkAllowList lets commands reach only the hosts the rules allow,
// through the executor's proxy (policy.NetworkAllowList). Malformed
// entries are reported when the workspace is built.
func WithNetworkAllowList(rules policy.HostRules) Option {
	return func(c *config) error {
		c.network = &policy.NetworkSpec{Access: policy.NetworkAllowList, Hosts: rules.Clone()}
		return nil
	}
}

// WithEnv adds variables to every command's environment. They win over the
// allowlisted and inherited variables; a PATH given here also turns off
// virtualenv activation. Several calls merge.
func WithEnv(env map[string]string) Option {
	return func(c *config) error {
		m := make(map[string]string, len(c.env)+len(env))
		for k, v := range c.env {
			m[k] = v
		}
		for k, v := range env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return &OptionError{Option: "WithEnv", Value: k, Reason: "a variable name must be non-empty and contain no '=' or NUL"}
			}
			if strings.ContainsRune(v, 0) {
				return &OptionError{Option: "WithEnv", Value: k, Reason: "the value contains a NUL byte"}
			}
			m[k] = v
		}
		c.env = m
		return nil
	}
}

// WithInheritEnv passes the whole environment of the host process to
// commands instead of the minimal allowlist. Secrets in the environment
// then reach every command: opt in only when that is intended.
func WithInheritEnv() Option {
	return func(c *config) error {
		c.inheritEnv = true
		return nil
	}
}

// WithShellTimeout sets the timeout of foreground commands (default
// DefaultShellTimeout). A per-call timeout is clamped to it.
func WithShellTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return &OptionError{Option: "WithShellTimeout", Value: d.String(), Reason: "the timeout must be positive"}
		}
		c.shellTimeout = d
		return nil
	}
}

// WithLimits sets the limits; zero fields keep their defaults.
func WithLimits(l Limits) Option {
	return func(c *config) error {
		if err := l.Validate(); err != nil {
			return err
		}
		c.limits = l
		return nil
	}
}

// WithExecutor sets the executor that runs commands (default
// executor.NewLocal(), which enforces nothing). It accepts a constructor's
// result directly, so a backend that can fail reads
//
//	ws, err := workspace.Local(root, workspace.WithExecutor(bwrap.New(cfg)))
//
// and Local returns the constructor's error, wrapped in an *OptionError
// (errors.Is and errors.As still see it, e.g. *executor.UnavailableError).
// Pass at most one error; a nil executor without an error is rejected.
func WithExecutor(e executor.Executor, errs ...error) Option {
	return func(c *config) error {
		for _, err := range errs {
			if err != nil {
				return &OptionError{Option: "WithExecutor", Reason: "creating the executor failed", Err: err}
			}
		}
		if e == nil || isNilPointer(e) {
			return &OptionError{Option: "WithExecutor", Value: "<nil>", Reason: "no executor"}
		}
		c.exec = e
		return nil
	}
}

// WithApprover sets the function asked to approve operations the policy
// marks "ask"; its approvals hold once. Without an approver or an asker,
// every ask is refused with a "needs approval" *policy.DeniedError.
// WithApprover and WithAsker replace each other.
func WithApprover(a Approver) Option {
	return func(c *config) error {
		c.asker = nil
		if a != nil {
			c.asker = func(ctx context.Context, req *ApprovalRequest) (Answer, error) {
				ok, err := a(ctx, req)
				return Answer{Allow: ok}, err
			}
		}
		return nil
	}
}

// WithAsker sets the function asked to approve operations the policy
// marks "ask", which may approve for the rest of the session
// (Answer.Scope): a later ask the answer covers (ApprovalRequest.Covers)
// is approved without asking. Session grants end with the session.
func WithAsker(a Asker) Option {
	return func(c *config) error {
		c.asker = a
		return nil
	}
}

// WithPolicyLayers builds the policy from layers (policy.Stack: managed,
// options, user, project; see policy.LoadStack for the standard files).
// The policy options of this workspace (WithMode, the shorthands,
// WithPolicy) form one more options layer above the given options
// layers. The managed layer's rules come first and its decisions are
// ceilings, so no option, mode or session approval weakens them; rule
// names carry their layer and file.
func WithPolicyLayers(layers ...policy.Layer) Option {
	return func(c *config) error {
		for i, l := range layers {
			if l.Spec == nil {
				return &OptionError{Option: "WithPolicyLayers", Value: strconv.Itoa(i), Reason: "a layer without a spec"}
			}
		}
		c.layers = append(c.layers, layers...)
		return nil
	}
}

// WithApprovalStore makes "always" answers (ScopeAlways) possible: they
// are appended as allow rules to the policy file at path, which should be
// the user layer (policy.UserPolicyPath), never a file in the root. The
// file keeps its comments; it is replaced atomically and created 0600
// when missing. A rule written there holds in later workspaces built
// from the layers; in this one, the answer holds for the session.
func WithApprovalStore(path string) Option {
	return func(c *config) error {
		if !filepath.IsAbs(path) {
			return &OptionError{Option: "WithApprovalStore", Value: path, Reason: "not an absolute path"}
		}
		c.store = &approvalStore{path: filepath.Clean(path)}
		return nil
	}
}

// WithSandboxAutoAllow turns sandbox auto-allow on or off (default on).
// When on, and the executor enforces the policy strictly (derived from
// its Describe: see AutoAllow), a command whose only ask comes from
// shell_default runs without asking; asks from path claims, command
// rules, dynamic commands and the network still ask. It never applies to
// an executor without isolation (executor.Local) or in best-effort mode.
func WithSandboxAutoAllow(on bool) Option {
	return func(c *config) error {
		c.autoAllow = &on
		return nil
	}
}

// WithHome sets the home directory "~" means in paths, patterns and
// commands, and the HOME of commands (default os.UserHomeDir()). "" means
// unknown: "~" patterns then match nothing, "~" paths are errors and
// commands get no HOME.
func WithHome(home string) Option {
	return func(c *config) error {
		c.home = &home
		return nil
	}
}

// WithLogger sets the logger for decisions and commands (default: discard).
// Denials and approvals are logged at Info, every operation at Debug.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}

// isNilPointer reports whether e is an interface holding a nil pointer, as
// a failed constructor returns.
func isNilPointer(e executor.Executor) bool {
	v := reflect.ValueOf(e)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
