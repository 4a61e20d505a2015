package protectguard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/pathwatch"
	"github.com/cordon-sandbox/cordon/policy"
)

// Defaults of Options.
const (
	DefaultMaxEntries   = 1_000_000
	DefaultMaxFileSize  = 1 << 20
	DefaultMaxCopyBytes = 32 << 20
)

// Options configure a Guard.
type Options struct {
	// Checker supplies the protect rules (the effective rules whose
	// Source is "protect[i]") and classifies paths against the root.
	Checker *policy.Checker
	// Trees are the absolute, resolved directories to watch: the
	// command's writable grants. Nested trees are merged; trees that do
	// not exist are skipped.
	Trees []string
	// MaxEntries bounds one walk over all trees (directory entries
	// examined); 0 means DefaultMaxEntries.
	MaxEntries int
	// MaxFileSize is the largest protected file copied for restoration;
	// 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// MaxCopyBytes bounds the bytes copied in all; 0 means
	// DefaultMaxCopyBytes.
	MaxCopyBytes int64
	// Logger receives debug records; nil means slog.Default().
	Logger *slog.Logger
	// Watcher, when set (a pathwatch.Content watcher; Cache shares one
	// among its guards), lets a walk be skipped when nothing in the
	// trees changed since the last one (see the package documentation,
	// Cost).
	Watcher *pathwatch.Watcher
}

// ErrLimit is wrapped by *LimitError.
var ErrLimit = errors.New("protected-path scan limit exceeded")

// ErrRepairFailed reports a repair that walked everything but could not
// remove something a command planted (see the violations for what):
// like a failed walk, it keeps the baseline and makes later Begins
// repair again first.
var ErrRepairFailed = errors.New("protected-path repair incomplete: something a command planted could not be removed")

// LimitError reports a walk that exceeded Options.MaxEntries. It unwraps
// to ErrLimit.
type LimitError struct {
	Trees []string
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v: more than %d entries under %s", ErrLimit, e.Limit, strings.Join(e.Trees, ", "))
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// Violation is one protected path a command created, changed or removed,
// and what the guard did about it.
type Violation struct {
	// Path is the absolute path.
	Path string `json:"path"`
	// Rule is the protect rule that covers it: `protect[0] "**/.git/hooks"`.
	Rule string `json:"rule"`
	// Change is "created", "modified", "mode changed", "owner changed",
	// "replaced" or "removed".
	Change string `json:"change"`
	// Action is what the guard did: "removed", "restored", "recreated",
	// or "failed: ..." when the repair failed.
	Action string `json:"action"`
}

// String formats the violation on one line.
func (v Violation) String() string {
	return fmt.Sprintf("%s: %s %s by a sandboxed command: %s", v.Rule, v.Path, v.Change, v.Action)
}

// Strings formats violations for executor.Result.Violations.
func Strings(vs []Violation) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

// Guard watches the protected paths of a set of trees across commands.
// It is safe for concurrent use; its walks and repairs are serialised.
type Guard struct {
	opts  Options
	log   *slog.Logger
	rules []policy.Rule
	// pathRules: some rule is not a bare name (it matches by path).
	pathRules bool
	trees     []string
	// structure turns on protection of git directories by structure
	// (package gitdir): on whenever the default protections are.
	structure bool

	mu     sync.Mutex
	active int
	// running mirrors active, for peers that look without the lock.
	running atomic.Int32
	base    *state
	// peers, when set (by the Cache), returns the other guards of the
	// same rules over the same workspace: a fresh baseline takes the
	// regions a running one guards from its baseline (see inherited).
	peers func(*Guard) []*Guard
	// broken is the error of the last repair that could not walk the
	// whole trees: the baseline is kept and every Begin repairs against
	// it, failing, until a whole walk succeeds.
	broken error
	// isBroken mirrors broken != nil, for the Cache.
	isBroken atomic.Bool
	cache    *cache
	// last is the state the last walk found, at the watcher's generation
	// lastGen; lastOK says every directory it listed was watched.
	last    *state
	lastGen uint64
	lastOK  bool
	// stream: the last walk went past MaxEntries; scans stream at once
	// until one visits no more than that.
	stream bool
	// walks counts whole walks, listed the entries the last one listed,
	// held the most children one of its listings held, hashed the bytes
	// read to hash files (tests).
	walks, listed, held int
	hashed              int64
}

// New returns a Guard for the protect rules of opts.Checker over
// opts.Trees. A Guard with no protect rules or no trees does nothing.
func New(opts Options) (*Guard, error) {
	if opts.Checker == nil {
		return nil, errors.New("protectguard: no checker")
	}
	opts.MaxEntries = cmp.Or(opts.MaxEntries, DefaultMaxEntries)
	opts.MaxFileSize = cmp.Or(opts.MaxFileSize, DefaultMaxFileSize)
	opts.MaxCopyBytes = cmp.Or(opts.MaxCopyBytes, DefaultMaxCopyBytes)
	g := &Guard{opts: opts, log: cmp.Or(opts.Logger, slog.Default()), cache: newCache()}
	for _, r := range opts.Checker.Rules() {
		if r.List == "protect" && !r.Pattern.Never() {
			g.rules = append(g.rules, r)
			if r.Pattern.Kind() != policy.PatternName {
				g.pathRules = true
			}
		}
	}
	if p := opts.Checker.Policy(); p != nil && !p.Protect.Disabled {
		g.structure = true
	}
	for _, t := range opts.Trees {
		if !filepath.IsAbs(t) {
			return nil, fmt.Errorf("protectguard: tree %q is not absolute", t)
		}
		g.trees = append(g.trees, filepath.Clean(t))
	}
	g.trees = abspath.Tops(g.trees)
	if len(g.rules) == 0 && !g.structure {
		g.trees = nil
	}
	return g, nil
}

// Trees returns the merged trees the guard watches (none when there are
// no protect rules).
func (g *Guard) Trees() []string { return slices.Clone(g.trees) }

// Begin is called before a command starts. When no guarded command is
// running it records a fresh baseline; otherwise it repairs what changed
// since the baseline (a background process's doing) and returns those
// violations. After a repair that could not walk the whole trees, Begin
// first repairs against the same baseline, and fails while it still
// cannot. On success the command counts as running until End. On
// error (a *LimitError, an unreadable tree) it does not: do not call End.
func (g *Guard) Begin(ctx context.Context) ([]Violation, error) {
	if len(g.trees) == 0 {
		return nil, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var vs []Violation
	if g.base != nil && (g.active > 0 || g.broken != nil) {
		// A command is still running (a background process): undo
		// what it changed. Or the last repair could not walk
		// everything: repair against the same baseline before anything
		// else, and refuse the command while that still cannot be done.
		var err error
		if vs, err = g.repairAll(ctx); err != nil {
			return vs, err
		}
	}
	if g.active == 0 || g.base == nil {
		st, err := g.scan(ctx, nil)
		if err != nil {
			return vs, err
		}
		g.base = g.inherited(st)
	}
	g.active++
	g.running.Add(1)
	return vs, nil
}

// End is called after a command (or a background process) has exited,
// once per successful Begin: it walks the trees again and repairs every
// protected path created, changed or removed since the baseline.
func (g *Guard) End(ctx context.Context) ([]Violation, error) {
	if len(g.trees) == 0 {
		return nil, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active > 0 {
		g.active--
		g.running.Add(-1)
	}
	if g.base == nil {
		return nil, nil
	}
	return g.repairAll(ctx)
}

// repairAll repairs against the baseline. When the walk fails (a
// *LimitError, a directory that cannot be read), what the baseline knows
// — its protected paths and git directories — is checked and repaired
// without a whole walk, the guard is marked broken (see Begin), and the
// walk's error is returned, wrapped.
func (g *Guard) repairAll(ctx context.Context) ([]Violation, error) {
	vs, err := g.repair(ctx)
	if err == nil {
		g.broken = nil
		g.isBroken.Store(false)
		return vs, nil
	}
	g.broken = err
	g.isBroken.Store(true)
	if errors.Is(err, ErrRepairFailed) {
		return vs, err
	}
	vs, kerr := g.repairKnown(ctx)
	if kerr != nil {
		return vs, fmt.Errorf("%w; the protected paths known before the command could not be checked either: %v", err, kerr)
	}
	return vs, fmt.Errorf("%w; only the protected paths and git directories known before the command were checked (and repaired), and every later command is refused until a whole walk succeeds", err)
}

// Active returns the number of guarded commands still running.
func (g *Guard) Active() int {
	return int(g.running.Load())
}

// protectedBy returns the first protect rule matching abs.
func (g *Guard) protectedBy(abs string) (policy.Rule, bool) {
	rel, inside := g.opts.Checker.Inside(abs)
	for _, r := range g.rules {
		if r.Pattern.Match(abs, rel, inside) {
			return r, true
		}
	}
	return policy.Rule{}, false
}

// mayMatchBelow reports whether a protect rule can match at or below dir.
func (g *Guard) mayMatchBelow(dir string) bool {
	rel, inside := g.opts.Checker.Inside(dir)
	for _, r := range g.rules {
		if r.Pattern.MayMatchBelow(dir, rel, inside) {
			return true
		}
	}
	return false
}

func ruleName(r policy.Rule) string {
	return fmt.Sprintf("%s %q", r.Source, r.Pattern.String())
}
