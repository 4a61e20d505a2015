package workspace

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// RuleSandboxAutoAllow is the rule of a command the sandbox auto-allowed:
// its only ask came from shell_default and the executor enforces the
// policy strictly (see Session.AutoAllow).
const RuleSandboxAutoAllow = "sandbox_auto_allow"

// tradedControls are the controls whose gaps sandbox auto-allow accepts,
// with what each trades. Each is observation, not escape: what the
// command can learn or touch through them is named here and in the README.
var tradedControls = map[executor.Control]string{
	executor.ControlFSNewFiles: "a path matching a denied or protected pattern that the command itself creates is not masked until the next command (protected ones are undone when it ends)",
	executor.ControlFSMetadata: "the command can see that ungranted paths exist, with their size and times, not read them",
	executor.ControlProcInfo:   "the command can read other processes' command lines and status in /proc",
	executor.ControlNetUnix:    "the command can connect to pathname Unix sockets in the system trees (/etc, /opt, ...) or created while it runs: a daemon listening there could act for it",
}

// criticalControls must each be enforced, or declared only as a
// concurrent or traded gap, for the sandbox to auto-allow.
var criticalControls = []executor.Control{
	executor.ControlFSRead, executor.ControlFSWrite, executor.ControlProtect,
	executor.ControlNetTCP, executor.ControlNetUDP, executor.ControlNetUnix, executor.ControlNetAbstract,
	executor.ControlSignal, executor.ControlProcessTree, executor.ControlHostProcess, executor.ControlKernelObjects,
}

// AutoAllow says whether a session's sandbox earns autonomy: whether a
// command whose only ask comes from shell_default runs without asking.
type AutoAllow struct {
	// On reports that it does.
	On bool `json:"on"`
	// Exclusive reports that the executor declares a gap only a process
	// running alongside a command can reach (bwrap's start-time path
	// resolution): an auto-allowed command then runs only while no other
	// command or background process of the workspace runs (else it asks),
	// and other commands wait for it to end.
	Exclusive bool `json:"exclusive,omitempty"`
	// Why explains On: what the executor enforces and what is traded, or
	// what stops it.
	Why string `json:"why"`
}

// autoAllow decides AutoAllow from the executor's capabilities and the
// policy: never assumed, derived from Describe.
func autoAllow(enabled bool, caps executor.Capabilities, p *policy.Policy) AutoAllow {
	if !enabled {
		return AutoAllow{Why: "sandbox auto-allow is off (WithSandboxAutoAllow(false))"}
	}
	if p.ShellDefault != policy.Ask {
		return AutoAllow{Why: "shell_default is " + p.ShellDefault.String() + ", not ask"}
	}
	if !caps.Sandboxed {
		return AutoAllow{Why: fmt.Sprintf("the %s executor enforces no isolation: the gate is the only defence, so every command it asks about is asked", caps.Backend)}
	}
	if caps.BestEffort {
		return AutoAllow{Why: fmt.Sprintf("the %s executor runs in best-effort mode: it may enforce less than the policy", caps.Backend)}
	}
	switch p.Network {
	case policy.NetworkFull:
		return AutoAllow{Why: "network is full: an auto-allowed command could send anything it can read"}
	}
	critical := criticalControls
	if p.Network == policy.NetworkAllowList {
		critical = append(critical[:len(critical):len(critical)], executor.ControlNetAllowList)
	}
	var blockers, traded []string
	exclusive := false
	for _, g := range caps.Gaps {
		switch {
		case tradedControls[g.Control] != "":
			// One line per control: a backend declares a gap per rule.
			if t := string(g.Control) + ": " + tradedControls[g.Control]; !slices.Contains(traded, t) {
				traded = append(traded, t)
			}
		case g.Concurrent:
			exclusive = true
		default:
			blockers = append(blockers, string(g.Control)+" ("+clip(g.Reason, 160)+")")
		}
	}
	for _, c := range critical {
		if _, gap := caps.Gap(c); !gap && !hasControl(caps, c) {
			blockers = append(blockers, string(c)+" (neither enforced nor declared)")
		}
	}
	if len(blockers) > 0 {
		return AutoAllow{Why: fmt.Sprintf("the %s executor declares gaps in %s", caps.Backend, strings.Join(blockers, "; "))}
	}
	why := fmt.Sprintf("the %s sandbox enforces the policy strictly (fs-read, fs-write, protect, network, processes, kernel objects)", caps.Backend)
	if exclusive {
		why += "; an auto-allowed command runs only while nothing else of the workspace runs, since the sandbox declares a gap a concurrent process could reach"
	}
	if len(traded) > 0 {
		why += "; traded: " + strings.Join(traded, "; ")
	}
	return AutoAllow{On: true, Exclusive: exclusive, Why: why}
}

// hasControl reports a control enforced, or declared only as a gap the
// auto-allow accepts.
func hasControl(caps executor.Capabilities, c executor.Control) bool {
	for _, e := range caps.Enforced {
		if e == c {
			return true
		}
	}
	if g, ok := caps.Gap(c); ok {
		return tradedControls[c] != "" || g.Concurrent
	}
	return false
}

// onlyShellDefault reports a command verdict whose every ask comes from
// shell_default: no path claim, command rule (one that may match
// included) or decider asks. A dynamic or unreadable segment counts as
// shell_default's only when the policy has no command rule but allow
// ones and no decider: then the code the gate cannot read can bypass
// nothing but shell_default, which the sandbox waives; otherwise it could
// run what a rule asks about or denies.
func onlyShellDefault(v *policy.CommandVerdict, p *policy.Policy) bool {
	if v.Decision != policy.Ask {
		return false
	}
	restrictive := p.CommandDecider != nil
	for _, r := range p.CommandRules {
		restrictive = restrictive || r.Action != policy.Allow
	}
	for _, sv := range v.Segments {
		if sv.Decision == policy.Allow {
			continue
		}
		if sv.Decision != policy.Ask {
			return false
		}
		switch sv.Rule {
		case policy.RuleShellDefault:
			if restrictive && (sv.Dynamic != "" || sv.Opaque != "") {
				return false
			}
		case policy.RuleDynamic, policy.RuleUnreadable:
			if restrictive {
				return false
			}
		default:
			return false
		}
	}
	for _, c := range v.Claims {
		if c.Verdict == nil || c.Verdict.Decision != policy.Allow {
			return false
		}
	}
	return true
}

// autoAllowed returns v as the sandbox's auto-allow decides it.
func autoAllowed(v *policy.CommandVerdict, a AutoAllow) *policy.CommandVerdict {
	out := *v
	out.Segments = append([]policy.SegmentVerdict(nil), v.Segments...)
	out.Decision = policy.Allow
	out.Rule = RuleSandboxAutoAllow
	out.Reason = "shell_default asks, but the command runs without asking: " + a.Why
	for i := range out.Segments {
		if out.Segments[i].Decision == policy.Ask {
			out.Segments[i].Decision = policy.Allow
			out.Segments[i].Rule = RuleSandboxAutoAllow
		}
	}
	return &out
}

// runGate orders the workspace's commands for exclusive auto-allowed
// ones: every running command or background process holds one unit, an
// exclusive command all of them.
type runGate struct{ sem *semaphore.Weighted }

func newRunGate() runGate { return runGate{semaphore.NewWeighted(math.MaxInt64)} }

// shared waits until no exclusive command runs and takes a unit.
func (g runGate) shared(ctx context.Context) (func(), error) {
	if err := g.sem.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return sync.OnceFunc(func() { g.sem.Release(1) }), nil
}

// idle reports that nothing runs now (advisory: it may change at once).
func (g runGate) idle() bool {
	if !g.sem.TryAcquire(math.MaxInt64) {
		return false
	}
	g.sem.Release(math.MaxInt64)
	return true
}

// exclusive takes every unit if nothing runs.
func (g runGate) exclusive() (func(), bool) {
	if !g.sem.TryAcquire(math.MaxInt64) {
		return nil, false
	}
	return sync.OnceFunc(func() { g.sem.Release(math.MaxInt64) }), true
}

// autoAllowFor decides AutoAllow for the workspace's own policy: the
// executor's Describe (a sample policy) and, when that earns it, the
// executor's assessment of this policy in the root (executor.Assessor):
// a policy can add gaps of its own (a denied pattern inside the System
// trees stays readable under bwrap). Without an Assessor it stays off.
// The assessment is made once, when the session opens.
func (w *Workspace) autoAllowFor(ctx context.Context, caps executor.Capabilities) AutoAllow {
	p := w.checker.Policy()
	a := autoAllow(w.autoAllow, caps, p)
	if !a.On {
		return a
	}
	as, ok := w.exec.(executor.Assessor)
	if !ok {
		return AutoAllow{Why: fmt.Sprintf("the %s executor cannot assess this workspace's policy (it has no Assess), so its gaps for it are unknown", caps.Backend)}
	}
	gaps, err := as.Assess(ctx, &executor.Request{Command: "true", Dir: w.Root(), Env: w.commandEnv(true), Policy: p, Root: w.Root(), Home: w.Home(), Checker: w.checker})
	if err != nil {
		return AutoAllow{Why: fmt.Sprintf("the %s executor could not assess this workspace's policy: %v", caps.Backend, err)}
	}
	all := caps.Clone()
	all.Gaps = append(all.Gaps, gaps...)
	return autoAllow(w.autoAllow, all, p)
}
