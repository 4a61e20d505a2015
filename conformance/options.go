package conformance

import (
	"fmt"
	"time"
)

// ParentCanaryEnv is the environment variable every case sets in the
// process running the suite, holding a fresh token: a command that sees it
// inherited the parent's environment.
const ParentCanaryEnv = "CORDON_CONFORMANCE_PARENT_CANARY"

// CaseTagEnv is set in every request's environment to the case's unique
// tag, by which the suite finds the processes a case left behind.
const CaseTagEnv = "CORDON_CONFORMANCE_CASE"

// ProbeEnv names an environment variable holding the path of a probe
// binary to use when WithProbe is not given.
const ProbeEnv = "CORDON_PROBE"

// Option configures Run and Check.
type Option func(*options)

type options struct {
	selectPats, skipPats []string
	probe                string
	env                  []string
	caseTimeout          time.Duration
	functionalOnly       bool
	tempDir              string
	progress             func(id string, done *CaseResult)
}

// DefaultCaseTimeout bounds one case, control twin included, when
// WithCaseTimeout is not given.
const DefaultCaseTimeout = 90 * time.Second

// Select runs only the cases whose id or layer matches one of the patterns
// (path.Match syntax: "net-*", "protect", "write-outside").
func Select(patterns ...string) Option {
	return func(o *options) { o.selectPats = append(o.selectPats, patterns...) }
}

// Skip leaves out the cases whose id or layer matches one of the patterns.
func Skip(patterns ...string) Option {
	return func(o *options) { o.skipPats = append(o.skipPats, patterns...) }
}

// WithProbe uses the probe program at path: a cordon-probe binary, or a
// host program that calls probe.MaybeRun first in main. It is copied into
// the directory the cases grant read and execute on, as cordon-probe.
// Without it the suite uses $CORDON_PROBE, then builds the probe with the
// Go toolchain, then copies the running program if it registered the probe.
func WithProbe(path string) Option { return func(o *options) { o.probe = path } }

// WithEnv adds KEY=VALUE entries to every request's environment (after
// PATH, HOME, LANG and the case tag).
func WithEnv(kv ...string) Option { return func(o *options) { o.env = append(o.env, kv...) } }

// WithCaseTimeout sets the watchdog of each case (default
// DefaultCaseTimeout). A case still running then fails as hung, and its
// processes are killed.
func WithCaseTimeout(d time.Duration) Option { return func(o *options) { o.caseTimeout = d } }

// FunctionalOnly marks the executor as enforcing no isolation
// (executor.Local): isolation cases still run and report their outcome,
// but only the functional cases decide. Without it an executor that leaks
// fails every isolation case, whatever its Describe says.
func FunctionalOnly() Option { return func(o *options) { o.functionalOnly = true } }

// WithTempDir creates the fixtures and the probe directory under dir. The
// default is $TMPDIR, else /var/tmp on Linux, else os.TempDir() (see the
// package doc). The workspace root is dir/cordon-conformance-*/root.
func WithTempDir(dir string) Option { return func(o *options) { o.tempDir = dir } }

// WithProgress calls fn when a case starts (done nil) and when it has
// finished (done set). Check calls it from its own goroutine, in order.
func WithProgress(fn func(id string, done *CaseResult)) Option {
	return func(o *options) { o.progress = fn }
}

func buildOptions(opts []Option) *options {
	o := &options{caseTimeout: DefaultCaseTimeout}
	for _, opt := range opts {
		opt(o)
	}
	if o.caseTimeout <= 0 {
		o.caseTimeout = DefaultCaseTimeout
	}
	return o
}

// PatternError reports a Select or Skip pattern that is malformed (Err
// is path.ErrBadPattern) or matches no case (Err is ErrNoCase).
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("conformance: case pattern %q: %v", e.Pattern, e.Err)
}

// Unwrap returns Err.
func (e *PatternError) Unwrap() error { return e.Err }
