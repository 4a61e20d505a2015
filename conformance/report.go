package conformance

import (
	"time"

	"github.com/cordon-sandbox/cordon/executor"
)

// Outcome is what a case observed.
type Outcome string

// The outcomes. A case passes when its outcome equals its expected outcome
// (Denied, Allowed or OK); Gap and Unsupported neither pass nor fail;
// everything else fails.
const (
	// Denied: the isolated action had no effect, verified from outside,
	// while its control twin had one.
	Denied Outcome = "denied"
	// Allowed: the action took effect (a leak, when Denied was expected).
	Allowed Outcome = "allowed"
	// OK: a functional property held.
	OK Outcome = "ok"
	// Broken: a functional property did not hold.
	Broken Outcome = "broken"
	// Gap: the action took effect, and the executor had declared a gap on
	// the case's control (Describe), or refused the policy as
	// unenforceable in strict mode.
	Gap Outcome = "gap"
	// SetupError: the case could not decide: the control twin failed, the
	// fixture or the probe was broken, the executor returned an error, or
	// the case hung.
	SetupError Outcome = "setup-error"
	// Unsupported: the case does not apply here (git not installed, an
	// executor without Starter, a facility this OS lacks).
	Unsupported Outcome = "unsupported"
)

// Layer groups cases by what they exercise.
type Layer string

// The layers.
const (
	Functional Layer = "functional" // running commands: exit status, output, environment
	Process    Layer = "process"    // process hygiene and the process boundary
	Filesystem Layer = "filesystem" // reads and writes
	Network    Layer = "network"    // sockets
	Protected  Layer = "protect"    // protected paths (.git/hooks, ...)
)

// CaseInfo describes a case, for listings and documentation.
type CaseInfo struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Layer Layer  `json:"layer"`
	// Control is the executor control the case checks; a Gap declared on
	// it turns a leak into Gap. Empty for purely functional cases.
	Control executor.Control `json:"control,omitempty"`
	// Isolation is set for cases that check the sandbox rather than the
	// process plumbing (they are informational under FunctionalOnly).
	Isolation bool `json:"isolation"`
	// Expected is the outcome a conforming sandboxed executor produces.
	Expected Outcome `json:"expected"`
	// Verified says how the outcome is decided, from outside.
	Verified string `json:"verified"`
}

// CaseResult is the result of one case.
type CaseResult struct {
	CaseInfo
	Outcome Outcome `json:"outcome"`
	// Passed is set when Outcome equals Expected.
	Passed bool `json:"passed"`
	// Failed is set when the result counts as a failure: not passed, not a
	// Gap or Unsupported, and Required.
	Failed bool `json:"failed"`
	// Required is false for isolation cases under FunctionalOnly: they run
	// and are reported, but their outcome decides nothing.
	Required bool `json:"required"`
	// Reason explains an outcome other than the expected one.
	Reason string `json:"reason,omitempty"`
	// Gap is the declared gap's reason, when the outcome is Gap.
	Gap string `json:"gap,omitempty"`
	// Evidence lists what was run and what the host observed.
	Evidence []string `json:"evidence"`
	// Twin lists the control twin's evidence: the same action allowed by
	// policy, through executor.Local, or unsandboxed.
	Twin     []string      `json:"twin,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Report is the result of Check.
type Report struct {
	// Backend and Capabilities come from the executor's Describe, when it
	// implements executor.Describer.
	Backend      string                 `json:"backend,omitempty"`
	Capabilities *executor.Capabilities `json:"capabilities,omitempty"`
	// Probe says which probe binary the cases used and how it was obtained.
	Probe          string        `json:"probe"`
	FunctionalOnly bool          `json:"functional_only"`
	Started        time.Time     `json:"started"`
	Duration       time.Duration `json:"duration_ns"`
	Cases          []CaseResult  `json:"cases"`
	Summary        Summary       `json:"summary"`
}

// Summary counts the results.
type Summary struct {
	Total  int `json:"total"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	// Outcomes counts each outcome.
	Outcomes map[Outcome]int `json:"outcomes"`
}

// OK reports whether no case failed.
func (r *Report) OK() bool { return r.Summary.Failed == 0 }

// Failures returns the failed cases.
func (r *Report) Failures() []CaseResult {
	var out []CaseResult
	for _, c := range r.Cases {
		if c.Failed {
			out = append(out, c)
		}
	}
	return out
}

func (r *Report) add(c CaseResult) {
	r.Cases = append(r.Cases, c)
	r.Summary.Total++
	if c.Passed {
		r.Summary.Passed++
	}
	if c.Failed {
		r.Summary.Failed++
	}
	if r.Summary.Outcomes == nil {
		r.Summary.Outcomes = map[Outcome]int{}
	}
	r.Summary.Outcomes[c.Outcome]++
}

// grade fills Passed and Failed.
func (c *CaseResult) grade() {
	c.Passed = c.Outcome == c.Expected
	c.Failed = c.Required && !c.Passed && c.Outcome != Gap && c.Outcome != Unsupported
}
