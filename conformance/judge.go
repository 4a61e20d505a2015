//go:build unix

package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/conformance/internal/canary"
	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// defaultPath is PATH in every request.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// requestTimeout bounds every request that does not set its own timeout,
// well inside the case watchdog.
const requestTimeout = 30 * time.Second

// policyFor returns the preset of mode with the probe directory added to
// System, so that commands may read and execute the probe.
func (c *caseRun) policyFor(m policy.Mode) *policy.Policy {
	p := m.Policy()
	p.System = policy.DefaultSystem()
	if c.probe.dir != "" { // cases that need no probe have none
		p.System = append(p.System, c.probe.dir)
	}
	return p
}

// coding is the default case policy.
func (c *caseRun) coding() *policy.Policy { return c.policyFor(policy.Coding) }

// env is every request's environment: minimal, with HOME the fake home.
func (c *caseRun) env() []string {
	env := []string{"PATH=" + defaultPath, "HOME=" + c.fx.home, "LANG=C", CaseTagEnv + "=" + c.fx.tag}
	return append(env, c.opts.env...)
}

// req returns a realistic request: cwd the root, the minimal environment,
// the fixture's root and home, a safety timeout.
func (c *caseRun) req(cmd string, p *policy.Policy) *executor.Request {
	if p == nil {
		p = c.coding()
	}
	return &executor.Request{
		Command: cmd,
		Dir:     c.fx.root,
		Env:     c.env(),
		Timeout: requestTimeout,
		Policy:  p,
		Root:    c.fx.root,
		Home:    c.fx.home,
	}
}

// probeCmd returns the shell command running the probe with args, tagged
// so the suite can find it.
func (c *caseRun) probeCmd(args ...string) string {
	words := []string{shellQuote(c.probe.path), "--tag=" + c.fx.tag}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// probes joins several probe invocations into one command; each runs
// whatever the previous ones returned.
func (c *caseRun) probes(invocations ...[]string) string {
	cmds := make([]string, len(invocations))
	for i, args := range invocations {
		cmds[i] = c.probeCmd(args...)
	}
	return strings.Join(cmds, "; ")
}

// role says whose command a run is, for error handling.
type role int

const (
	roleFunctional role = iota // a functional check: an error is Broken
	roleAct                    // the isolated action: an error ends the case
	roleTwin                   // the control twin: an error is a SetupError
)

// run runs req on x and logs it. Errors end the case: a strict-mode
// refusal is a Gap, an unavailable backend Unsupported, anything else
// Broken (for a functional check) or SetupError.
func (c *caseRun) run(x executor.Executor, label string, req *executor.Request, r role) *executor.Result {
	res, err := x.Run(c.ctx, req)
	c.noteRun(label, req, res, err, r)
	return res
}

func (c *caseRun) noteRun(label string, req *executor.Request, res *executor.Result, err error, r role) {
	logf := c.logf
	if r == roleTwin {
		logf = c.twinf
	}
	if err != nil {
		logf("%s: %s → error: %v", label, clip(c.sanitize(req.Command), 400), err)
		c.runError(err, r)
	}
	if res == nil {
		logf("%s: %s → no result and no error", label, clip(c.sanitize(req.Command), 400))
		c.runError(errors.New("Run returned neither a result nor an error"), r)
	}
	logf("%s: %s → %s", label, clip(c.sanitize(req.Command), 400), describeResult(res))
	for _, rec := range probe.Parse(res.Stdout) {
		logf("  probe: %s", rec)
	}
}

// runError ends the case after Run failed. A strict refusal is a Gap only
// when it names the control the case checks, on the isolated action of an
// isolation case: an executor that refuses what it could run, or refuses
// for an unrelated reason, never passes for one that enforces. Unsupported
// is reserved for an executor that could not be created at all.
func (c *caseRun) runError(err error, r role) {
	var unenf *executor.UnenforceableError
	switch {
	case errors.As(err, &unenf) && r == roleAct && c.def.Control != "" && refusalNames(unenf, c.def.Control):
		c.end(Gap, "the executor refused the policy as unenforceable on %s: %v", c.def.Control, err)
	case errors.As(err, &unenf) && r == roleFunctional:
		c.brokenf("the executor refused a command it must run: %v", err)
	case errors.As(err, &unenf):
		c.setupf("the executor refused the case's policy for a reason other than %q, the control the case checks, so the case proves nothing: %v", c.def.Control, err)
	case c.ctx.Err() != nil:
		c.setupf("the case ran out of time: %v", err)
	case r == roleFunctional:
		c.brokenf("Run returned an error for a command that can run: %v", err)
	default:
		c.setupf("the executor failed to run the command: %v", err)
	}
}

// refusalNames reports whether a refusal lists a gap on control.
func refusalNames(e *executor.UnenforceableError, control executor.Control) bool {
	for _, g := range e.Gaps {
		if g.Control == control {
			return true
		}
	}
	return false
}

func describeResult(r *executor.Result) string {
	s := fmt.Sprintf("exit %d", r.ExitCode)
	if r.Signal != "" {
		s += " signal " + r.Signal
	}
	if r.TimedOut {
		s += " timed out"
	}
	if r.Truncated {
		s += " truncated"
	}
	s += fmt.Sprintf(", %d+%d bytes of output", len(r.Stdout), len(r.Stderr))
	if len(r.Stderr) > 0 {
		s += fmt.Sprintf(", stderr %q", clip(string(r.Stderr), 200))
	}
	return s
}

// hostProbe runs the probe as a plain child of the host, the twin of a
// process or functional case, and returns its output; a probe that fails
// to run is a setup error.
func (c *caseRun) hostProbe(stdin io.Reader, args ...string) []byte {
	cmd := exec.CommandContext(c.ctx, c.probe.path, args...)
	cmd.Stdin = stdin
	out, err := cmd.Output()
	if err != nil {
		c.setupf("twin: the probe on the host (%s): %v (%q)", strings.Join(args, " "), err, clip(string(out), 200))
	}
	return out
}

// records returns the probe records in res's stdout.
func records(res *executor.Result) []probe.Record { return probe.Parse(res.Stdout) }

// attempt is one command of an isolation case: the action, or its twin.
type attempt struct {
	label string
	x     executor.Executor
	req   *executor.Request
	// during, if set, runs on the host while the command runs; finished
	// is closed when Run has returned.
	during func(finished <-chan struct{})
}

func (c *caseRun) perform(a attempt, r role) *executor.Result {
	if a.during == nil {
		return c.run(a.x, a.label, a.req, r)
	}
	type out struct {
		res *executor.Result
		err error
	}
	ch := make(chan out, 1)
	finished := make(chan struct{})
	go func() {
		res, err := a.x.Run(c.ctx, a.req)
		close(finished)
		ch <- out{res, err}
	}()
	a.during(finished)
	o := <-ch
	c.noteRun(a.label, a.req, o.res, o.err, r)
	return o.res
}

// observer arms a host-side observation before an attempt and returns the
// check to make after it: whether the action took effect, and what the
// host saw.
type observer func(c *caseRun) func(res *executor.Result) (took bool, seen string)

// act is the isolated action on the case's executor under p.
func (c *caseRun) act(cmd string, p *policy.Policy) attempt {
	return attempt{label: "action", x: c.x, req: c.req(cmd, p)}
}

// twinPolicy is the same action on the case's executor under a policy
// that allows it.
func (c *caseRun) twinPolicy(what, cmd string, p *policy.Policy) attempt {
	return attempt{label: "twin (" + what + ")", x: c.x, req: c.req(cmd, p)}
}

// twinLocal is the same action through executor.Local, unsandboxed.
func (c *caseRun) twinLocal(cmd string) attempt {
	return attempt{label: "twin (executor.Local)", x: c.local, req: c.req(cmd, nil)}
}

// isolate decides an isolation case that expects Denied: the action under
// the case's executor must have no effect seen from outside, the probe
// must have run (its records show it tried), and the twin must take
// effect. A leak is Allowed whatever the twin does.
func (c *caseRun) isolate(obs observer, act, twin attempt) {
	check := obs(c)
	res := c.perform(act, roleAct)
	took, seen := check(res)
	c.logf("host: %s", seen)
	if took {
		c.end(Allowed, "")
	}
	if len(records(res)) == 0 {
		c.setupf("the probe did not run inside the sandbox (no probe record in its output), so the absent effect proves nothing")
	}
	check = obs(c)
	tres := c.perform(twin, roleTwin)
	ttook, tseen := check(tres)
	c.twinf("host: %s", tseen)
	if !ttook {
		c.setupf("the control twin had no effect either: the fixture, the probe or the twin policy is broken, so the denial proves nothing")
	}
	c.end(Denied, "")
}

// permit decides a case that expects Allowed: the action must take effect.
func (c *caseRun) permit(obs observer, act attempt) {
	check := obs(c)
	res := c.perform(act, roleAct)
	took, seen := check(res)
	c.logf("host: %s", seen)
	if took {
		c.end(Allowed, "")
	}
	if len(records(res)) == 0 {
		c.setupf("the probe did not run inside the sandbox (no probe record in its output)")
	}
	c.end(Denied, "the action had no effect, but this executor must permit it")
}

// tokensShown: the action took effect when any token appears in the output.
func tokensShown(tokens ...string) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		return func(res *executor.Result) (bool, string) {
			var shown []string
			for _, t := range tokens {
				if bytes.Contains(res.Stdout, []byte(t)) || bytes.Contains(res.Stderr, []byte(t)) {
					shown = append(shown, t)
				}
			}
			if len(shown) == 0 {
				return false, fmt.Sprintf("none of %d canary tokens appears in the output", len(tokens))
			}
			return true, fmt.Sprintf("%d of %d canary tokens appear in the output: %s", len(shown), len(tokens), strings.Join(shown, ", "))
		}
	}
}

// allTokensShown: the action took effect when every token appears.
func allTokensShown(tokens ...string) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		any := tokensShown(tokens...)(c)
		return func(res *executor.Result) (bool, string) {
			n := 0
			for _, t := range tokens {
				if bytes.Contains(res.Stdout, []byte(t)) {
					n++
				}
			}
			_, seen := any(res)
			return n == len(tokens), seen
		}
	}
}

// changed: the action took effect when anything at or below paths changed
// on the host (existence, type, mode, content, link count, link target).
func changed(paths ...string) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		before := make([]snapshot, len(paths))
		for i, p := range paths {
			s, err := snap(p)
			if err != nil {
				c.setupf("snapshot of %s: %v", p, err)
			}
			before[i] = s
		}
		return func(*executor.Result) (bool, string) {
			var diffs []string
			n := 0
			for i, p := range paths {
				after, err := snap(p)
				if err != nil {
					diffs = append(diffs, fmt.Sprintf("snapshot of %s: %v", p, err))
					continue
				}
				n += len(after)
				diffs = append(diffs, before[i].diff(after, p)...)
			}
			if len(diffs) == 0 {
				return false, fmt.Sprintf("unchanged: %d entries under %s (listing, sha256, mode, links)", n, strings.Join(paths, ", "))
			}
			if len(diffs) > 12 {
				diffs = append(diffs[:12], fmt.Sprintf("… %d more", len(diffs)-12))
			}
			return true, "changed: " + strings.Join(diffs, "; ")
		}
	}
}

// canaryHit: the action took effect when the canary counted a hit. The
// canary is given a moment, since a connection completes before it is
// accepted; longer when the probe claims success.
func canaryHit(cn *canary.Canary) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		n := cn.Hits()
		return func(res *executor.Result) (bool, string) {
			wait := 300 * time.Millisecond
			for _, r := range records(res) {
				if r.OK {
					wait = 2 * time.Second
				}
			}
			h := cn.WaitHits(n, wait)
			if h == n {
				return false, fmt.Sprintf("%s canary %s received nothing", cn.Network(), cn.Addr())
			}
			return true, fmt.Sprintf("%s canary %s received %d: %q", cn.Network(), cn.Addr(), h-n, cn.Payloads()[n:])
		}
	}
}

// anyOf: the action took effect when any observer says so.
func anyOf(obs ...observer) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		checks := make([]func(*executor.Result) (bool, string), len(obs))
		for i, o := range obs {
			checks[i] = o(c)
		}
		return func(res *executor.Result) (bool, string) {
			took := false
			var seen []string
			for _, ch := range checks {
				t, s := ch(res)
				took = took || t
				seen = append(seen, s)
			}
			return took, strings.Join(seen, "; ")
		}
	}
}

// snapshot maps a path relative to the snapshot's top ("." for the top)
// to a description of what is there.
type snapshot map[string]string

func snap(top string) (snapshot, error) {
	s := snapshot{}
	if _, err := os.Lstat(top); errors.Is(err, fs.ErrNotExist) {
		s["."] = "absent"
		return s, nil
	}
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v", fi.Mode())
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && !fi.IsDir() {
			desc += fmt.Sprintf(" links=%d", st.Nlink)
		}
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			desc += fmt.Sprintf(" size=%d sha256=%s", len(b), hex.EncodeToString(h[:8]))
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			desc += " -> " + t
		}
		s[rel] = desc
		return nil
	})
	return s, err
}

func (s snapshot) diff(after snapshot, top string) []string {
	var out []string
	keys := map[string]bool{}
	for k := range s {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		b, a := s[k], after[k]
		name := filepath.Join(top, k)
		switch {
		case b == a:
		case b == "" || b == "absent":
			out = append(out, "added "+name+" ("+a+")")
		case a == "" || a == "absent":
			out = append(out, "removed "+name)
		default:
			out = append(out, "changed "+name+" ("+b+" → "+a+")")
		}
	}
	return out
}

// shellQuote quotes s as one shell word (executor.ShellQuote; the suite's
// words hold no NUL byte).
func shellQuote(s string) string {
	q, _ := executor.ShellQuote(s)
	return q
}

// waitFor polls cond every 10 ms until it holds, d passes, or stop closes.
func waitFor(ctx context.Context, d time.Duration, stop <-chan struct{}, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-stop:
			return cond()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
