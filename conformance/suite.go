//go:build unix

package conformance

import (
	"context"
	"errors"
	"fmt"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/conformance/internal/procscan"
	"github.com/cordon-sandbox/cordon/executor"
)

// caseDef is one case of the catalogue.
type caseDef struct {
	CaseInfo
	// probe is set for cases that run the probe program.
	probe bool
	run   func(c *caseRun)
}

// suite is one Run or Check: the selected cases and the probe.
type suite struct {
	opts  *options
	cases []*caseDef
	probe *probeBin
	local *executor.Local
}

func newSuite(ctx context.Context, opts []Option) (*suite, error) {
	// The allow-list cases name hosts under .test (never in DNS), which
	// the executors' proxies in this process resolve to loopback canaries.
	netallow.SetResolver(testResolve)
	o := buildOptions(opts)
	if o.tempDir == "" {
		o.tempDir = defaultTempDir()
	}
	cases, err := o.selected(catalogue())
	if err != nil {
		return nil, err
	}
	s := &suite{opts: o, cases: cases, local: executor.NewLocal()}
	needProbe := false
	for _, d := range cases {
		needProbe = needProbe || d.probe
	}
	if needProbe {
		s.probe = obtainProbe(ctx, o)
	} else {
		s.probe = &probeBin{err: errors.New("no selected case needs the probe")}
	}
	return s, nil
}

func (s *suite) close() { s.probe.remove() }

// Run runs every selected case as a subtest of t, grouped by layer
// (t.Run("network/net-udp", ...)), each on a fresh executor from
// newExecutor, a fresh fixture and a fresh policy, under a watchdog
// (WithCaseTimeout). A case that does not get its expected outcome fails
// with t.Errorf and the run goes on; a declared gap, an unsupported case,
// and (under FunctionalOnly) an isolation case are skipped with the
// reason. Every case logs its evidence with t.Logf, visible with go test -v.
//
// newExecutor is called in the subtest's goroutine, so it may call
// t.Skip or t.Fatal and register t.Cleanup (Run does not close the
// executor). A backend's test:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, func(t *testing.T) executor.Executor {
//			x, err := bwrap.New(bwrap.Config{})
//			if err != nil {
//				t.Skipf("bwrap unavailable: %v", err)
//			}
//			return x
//		})
//	}
func Run(t *testing.T, newExecutor func(t *testing.T) executor.Executor, opts ...Option) {
	t.Helper()
	s, err := newSuite(t.Context(), opts)
	if err != nil {
		t.Errorf("conformance: %v", err)
		return
	}
	t.Cleanup(s.close)
	t.Logf("conformance: probe %s", s.probe.describe())
	for _, layer := range layers {
		var cases []*caseDef
		for _, d := range s.cases {
			if d.Layer == layer {
				cases = append(cases, d)
			}
		}
		if len(cases) == 0 {
			continue
		}
		t.Run(string(layer), func(t *testing.T) {
			for _, d := range cases {
				t.Run(d.ID, func(t *testing.T) {
					x := newExecutor(t)
					var xerr error
					if x == nil {
						xerr = errors.New("newExecutor returned nil")
					}
					res, _ := s.runCase(t.Context(), d, x, xerr)
					reportTo(t, &res)
				})
			}
		})
	}
}

// reportTo logs a result's evidence on t and fails or skips it.
func reportTo(t *testing.T, r *CaseResult) {
	t.Helper()
	t.Logf("%s: %s [layer %s, control %q]", r.ID, r.Title, r.Layer, r.Control)
	for _, e := range r.Evidence {
		t.Logf("  evidence: %s", e)
	}
	for _, e := range r.Twin {
		t.Logf("  control twin: %s", e)
	}
	msg := fmt.Sprintf("outcome %s, expected %s", r.Outcome, r.Expected)
	if r.Reason != "" {
		msg += ": " + r.Reason
	}
	switch {
	case r.Failed:
		t.Errorf("%s: %s", r.ID, msg)
	case r.Outcome == Gap:
		t.Skipf("declared gap on %s: %s (%s)", r.Control, r.Gap, msg)
	case r.Outcome == Unsupported:
		t.Skipf("unsupported: %s", r.Reason)
	case !r.Required && !r.Passed:
		t.Skipf("functional only: the executor enforces no isolation (%s)", msg)
	default:
		t.Logf("  %s", msg)
	}
}

// Check runs the selected cases outside go test, one after the other, each
// on a fresh executor from newExecutor (closed afterwards when it
// implements io.Closer), and returns the report. It returns an error for
// invalid options (an unknown case pattern wraps ErrNoCase) and, with the
// partial report, when ctx ends. A newExecutor error is that case's
// result: Unsupported when it wraps errors.ErrUnsupported, SetupError
// otherwise.
func Check(ctx context.Context, newExecutor func() (executor.Executor, error), opts ...Option) (*Report, error) {
	s, err := newSuite(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer s.close()
	rep := &Report{Probe: s.probe.describe(), FunctionalOnly: s.opts.functionalOnly, Started: time.Now(), Cases: []CaseResult{}}
	defer func() { rep.Duration = time.Since(rep.Started) }()
	for _, d := range s.cases {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if s.opts.progress != nil {
			s.opts.progress(d.ID, nil)
		}
		x, xerr := newExecutor()
		if xerr == nil && x == nil {
			xerr = errors.New("newExecutor returned nil")
		}
		res, caps := s.runCase(ctx, d, x, xerr)
		if cl, ok := x.(io.Closer); ok && xerr == nil {
			if err := cl.Close(); err != nil {
				res.Evidence = append(res.Evidence, "closing the executor: "+err.Error())
			}
		}
		if rep.Capabilities == nil && caps != nil {
			rep.Capabilities = caps
			rep.Backend = caps.Backend
		}
		rep.add(res)
		if s.opts.progress != nil {
			s.opts.progress(d.ID, &res)
		}
	}
	return rep, ctx.Err()
}

// ErrNoCase is wrapped by the error for a Select or Skip pattern that
// matches no case.
var ErrNoCase = errors.New("no such conformance case")

// watchdogGrace is how long a case may take to return after its watchdog
// cancelled its context, before it is declared hung.
var watchdogGrace = 10 * time.Second

// runCase runs one case with its own fixture under the watchdog.
func (s *suite) runCase(parent context.Context, d *caseDef, x executor.Executor, xerr error) (res CaseResult, caps *executor.Capabilities) {
	start := time.Now()
	res = CaseResult{CaseInfo: d.CaseInfo, Required: !d.Isolation || !s.opts.functionalOnly, Evidence: []string{}}
	defer func() {
		res.Duration = time.Since(start)
		res.grade()
	}()
	if xerr != nil {
		res.Outcome, res.Reason = SetupError, "creating the executor: "+xerr.Error()
		if errors.Is(xerr, errors.ErrUnsupported) {
			res.Outcome = Unsupported
		}
		return res, nil
	}
	if d.probe && s.probe.err != nil {
		res.Outcome, res.Reason = SetupError, "probe: "+s.probe.err.Error()
		return res, nil
	}
	fx, err := newFixture(s.opts.tempDir)
	if err != nil {
		res.Outcome, res.Reason = SetupError, "fixture: "+err.Error()
		return res, nil
	}
	defer func() {
		if err := fx.close(); err != nil {
			res.Evidence = append(res.Evidence, "fixture cleanup: "+err.Error())
		}
	}()

	ctx, cancel := context.WithTimeout(parent, s.opts.caseTimeout)
	defer cancel()
	if ds, ok := x.(executor.Describer); ok {
		cp := ds.Describe(ctx)
		caps = &cp
	}
	c := &caseRun{ctx: ctx, def: d, x: x, local: s.local, fx: fx, probe: s.probe, opts: s.opts, caps: caps}
	c.logf("fixture %s (root, home, outside, s); tag %s", fx.base, fx.tag)

	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				c.seal(SetupError, fmt.Sprintf("case panicked: %v\n%s", p, debug.Stack()))
			}
		}()
		d.run(c)
		c.seal("", "")
	}()

	hung, fired := false, time.Time{}
	select {
	case <-done:
	case <-ctx.Done():
		fired = time.Now()
		select {
		case <-done:
		case <-time.After(watchdogGrace):
			hung = true
		}
	}
	switch {
	case hung:
		ps, _ := procscan.Find(fx.tag)
		_ = procscan.Kill(ps)
		c.force(SetupError, fmt.Sprintf("case hung: still running %v after its %v watchdog fired (the executor ignored the context); killed %d tagged processes: %s",
			watchdogGrace, s.opts.caseTimeout, len(ps), cmdlines(ps)))
		select {
		case <-done:
		case <-time.After(watchdogGrace):
		}
	case !fired.IsZero() && c.sealedAfter(fired):
		why := fmt.Sprintf("case exceeded its %v watchdog and was cancelled", s.opts.caseTimeout)
		if parent.Err() != nil {
			why = "case aborted: " + parent.Err().Error()
		}
		c.force(SetupError, why)
	}

	// Nothing may survive a case: a process still carrying the tag was
	// left behind by the executor.
	if left := leftovers(fx.tag); len(left) > 0 {
		_ = procscan.Kill(left)
		c.logf("left behind after the case and killed: %s", cmdlines(left))
		if !hung {
			c.override(Broken, fmt.Sprintf("%d processes outlived their command: %s", len(left), cmdlines(left)))
		}
	}

	out, reason, ev, twin := c.result()
	res.Outcome, res.Reason, res.Evidence, res.Twin = out, reason, ev, twin
	if caps != nil && d.Control != "" {
		if g, ok := caps.Gap(d.Control); ok {
			switch {
			case res.Outcome == Allowed && d.Expected == Denied:
				res.Outcome, res.Gap = Gap, g.Reason
				res.Reason = "the action took effect; the executor declares this gap"
			case res.Outcome == Denied:
				res.Evidence = append(res.Evidence, fmt.Sprintf("declared gap on %s (%s), yet enforced here", d.Control, g.Reason))
			}
		}
	}
	if res.Outcome == Gap && res.Gap == "" {
		res.Gap = res.Reason
	}
	if res.Outcome != res.Expected && res.Reason == "" {
		switch res.Outcome {
		case Allowed:
			res.Reason = "the action took effect and no gap is declared on " + string(d.Control)
		case Denied:
			res.Reason = "the action had no effect, but this executor must permit it"
		}
	}
	return res, caps
}

// leftovers waits briefly for tagged processes to be reaped and returns
// those still alive.
func leftovers(tag string) []procscan.Process {
	var ps []procscan.Process
	for i := 0; i < 20; i++ {
		ps, _ = procscan.Find(tag)
		if len(ps) == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ps
}

func cmdlines(ps []procscan.Process) string {
	var s []string
	for _, p := range ps {
		s = append(s, fmt.Sprintf("%d %q", p.Pid, clip(p.Cmdline, 120)))
	}
	return strings.Join(s, "; ")
}

// caseRun is what a case body works with. A body records evidence with
// logf and twinf, checks functional properties with expect, and ends with
// end (or one of its shorthands), which stops the body's goroutine like
// t.FailNow; a body that returns without end is OK when no expectation
// failed and Broken otherwise. Bodies run in their own goroutine and must
// call end only from it.
type caseRun struct {
	ctx   context.Context
	def   *caseDef
	x     executor.Executor
	local *executor.Local
	fx    *fixture
	probe *probeBin
	opts  *options
	caps  *executor.Capabilities

	mu       sync.Mutex
	evidence []string
	twin     []string
	failures []string
	outcome  Outcome
	reason   string
	sealed   bool
	sealedAt time.Time
}

func (c *caseRun) logf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evidence = append(c.evidence, c.sanitize(fmt.Sprintf(format, args...)))
}

func (c *caseRun) twinf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.twin = append(c.twin, c.sanitize(fmt.Sprintf(format, args...)))
}

// sanitize shortens fixture and probe paths in evidence and drops the
// probe's --tag argument.
func (c *caseRun) sanitize(s string) string {
	if c.probe != nil && c.probe.path != "" {
		s = strings.ReplaceAll(s, c.probe.path, "cordon-probe")
	}
	if c.fx != nil && c.fx.base != "" && !strings.HasPrefix(s, "fixture ") {
		s = strings.ReplaceAll(s, " --tag="+c.fx.tag, "")
		s = strings.ReplaceAll(s, c.fx.base, "$FIXTURE")
	}
	return s
}

// expect records a failed functional expectation; the body goes on.
func (c *caseRun) expect(ok bool, format string, args ...any) bool {
	if !ok {
		msg := c.sanitize(fmt.Sprintf(format, args...))
		c.mu.Lock()
		c.failures = append(c.failures, msg)
		c.mu.Unlock()
		c.logf("FAIL: %s", msg)
	}
	return ok
}

// end records the outcome and stops the body.
func (c *caseRun) end(o Outcome, format string, args ...any) {
	c.seal(o, c.sanitize(fmt.Sprintf(format, args...)))
	runtime.Goexit()
}

func (c *caseRun) setupf(format string, args ...any)       { c.end(SetupError, format, args...) }
func (c *caseRun) unsupportedf(format string, args ...any) { c.end(Unsupported, format, args...) }
func (c *caseRun) brokenf(format string, args ...any)      { c.end(Broken, format, args...) }

// seal sets the outcome once; later calls are ignored. An empty outcome
// means "the body returned": OK, or Broken after failed expectations.
func (c *caseRun) seal(o Outcome, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed {
		return
	}
	if o == "" {
		o = OK
		if len(c.failures) > 0 {
			o, reason = Broken, strings.Join(c.failures, "; ")
		}
	}
	c.outcome, c.reason, c.sealed, c.sealedAt = o, reason, true, time.Now()
}

// sealedAfter reports whether the outcome was set after t (or not at all).
func (c *caseRun) sealedAfter(t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.sealed || c.sealedAt.After(t)
}

// force sets the outcome whatever was recorded before, keeping the old
// reason as context.
func (c *caseRun) force(o Outcome, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed && c.reason != "" {
		reason += " (the case had recorded: " + string(c.outcome) + ": " + c.reason + ")"
	}
	c.outcome, c.reason, c.sealed, c.sealedAt = o, reason, true, time.Now()
}

// override replaces a passing outcome with a failing one.
func (c *caseRun) override(o Outcome, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.outcome == Gap || c.outcome == Unsupported || c.outcome == SetupError || c.outcome == Broken {
		c.reason += "; " + reason
		return
	}
	c.outcome, c.reason = o, reason
}

func (c *caseRun) result() (Outcome, string, []string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outcome, c.reason, append([]string{}, c.evidence...), append([]string(nil), c.twin...)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
