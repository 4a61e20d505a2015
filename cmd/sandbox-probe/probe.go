package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/executor"
)

// probeOptions are the flags of probe (and of sandbox-probe without a
// subcommand).
type probeOptions struct {
	backends    []string
	pf          policyFlags
	json        bool
	cases, skip []string
	bestEffort  bool
	caseTimeout time.Duration
	probe       string
}

func (o *probeOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&o.backends, "backend", nil, "backends to probe, comma-separated: "+strings.Join(backendNames(), ",")+"; default: every OS sandbox available here")
	o.pf.add(cmd, true)
	f.Lookup("policy").Usage = "also check that each backend can enforce this policy file here (strict mode), running the command true under it in --root"
	f.Lookup("root").Usage = "workspace root for the --policy check; default: the current directory"
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	f.StringSliceVar(&o.cases, "case", nil, "run only the cases whose id or layer matches one of these patterns (path.Match syntax: net-*, protect)")
	f.StringSliceVar(&o.skip, "skip", nil, "leave out the cases whose id or layer matches one of these patterns")
	f.BoolVar(&o.bestEffort, "best-effort", false, "build the backends in best-effort mode (they run despite gaps; every gap is still reported)")
	f.StringVar(&o.probe, "probe", "", "the conformance probe program to run inside the sandboxes (a static cordon-probe); default: $"+conformance.ProbeEnv+", else a copy of this program")
	f.DurationVar(&o.caseTimeout, "case-timeout", 0, "watchdog per case (default "+conformance.DefaultCaseTimeout.String()+")")
}

func (a *app) probeCommand() *cobra.Command {
	o := &probeOptions{}
	cmd := &cobra.Command{
		Use:   "probe [--backend landlock,bwrap,docker,seatbelt,local] [--policy FILE] [--json]",
		Short: "Run the conformance suite on backends and print what isolation holds",
		Long: `probe runs cordon's conformance suite on each backend: every case on a
fresh executor, fixture and policy, verified from outside the sandbox (host
file hashes and listings, canary servers that count connections), each
isolation case with a control twin. The table has a row per case and a
column per backend; the outcomes are denied, allowed, ok, broken, gap (a gap
the backend declared), setup-error and unsupported. A failed case is shown
in UPPER CASE. Then come the gaps each backend declares and a verdict.

The cases use their own fixture policies, so their expectations are known.
--policy additionally checks that each backend can enforce that policy here
in strict mode, by running ` + "`true`" + ` under it in --root.

local is the unsandboxed reference: its isolation cases run and report
(allowed), but only its functional cases decide.

Exit status: 0 every case passed, 1 a case or the policy check failed,
2 usage or setup error (an unknown or unavailable backend).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runProbe(cmd.Context(), o, nil)
		},
	}
	o.addFlags(cmd)
	return cmd
}

// ProbeReport is the output of probe (--json).
type ProbeReport struct {
	Backends []ProbeBackend `json:"backends"`
	// OK is false when any case or policy check failed.
	OK bool `json:"ok"`
	// Verdict is the one-line verdict the table ends with.
	Verdict string `json:"verdict"`
}

// ProbeBackend is one backend's column.
type ProbeBackend struct {
	Name      string `json:"name"`
	Sandboxed bool   `json:"sandboxed"`
	// Report is conformance.Check's report (see package conformance).
	Report *conformance.Report `json:"report"`
	// Policy is the --policy check, when asked for.
	Policy *PolicyCheck `json:"policy,omitempty"`
	// Error is set when the suite could not run to the end.
	Error string `json:"error,omitempty"`
}

// PolicyCheck says whether a backend enforces the --policy file here.
type PolicyCheck struct {
	Policy string `json:"policy"`
	Root   string `json:"root"`
	// Outcome is "enforced" (ran `true` under the policy), "unenforceable"
	// (strict mode refused: Gaps lists why), "setup-error" (Error says
	// why) or "unsandboxed" (local: nothing is enforced; not a failure).
	Outcome string         `json:"outcome"`
	Gaps    []executor.Gap `json:"gaps,omitempty"`
	Error   string         `json:"error,omitempty"`
	OK      bool           `json:"ok"`
}

// DefaultReport is the output of sandbox-probe --json without a
// subcommand: detect's report and probe's.
type DefaultReport struct {
	Detect *DetectReport `json:"detect"`
	Probe  *ProbeReport  `json:"probe"`
}

// runDefault is sandbox-probe without a subcommand: detect, then probe on
// every usable OS sandbox backend (or those of --backend).
func (a *app) runDefault(ctx context.Context, o *probeOptions) error {
	// Check the input before detect prints anything: a usage error leaves
	// stdout empty.
	if _, err := parseBackends(o.backends); err != nil {
		return err
	}
	if _, err := selectCases(o); err != nil {
		return err
	}
	if o.pf.given() {
		if _, err := o.pf.load(); err != nil {
			return err
		}
	}
	rep := detect(ctx, a.backendOptions(o.bestEffort))
	// A backend named on the command line that cannot run here is a setup
	// error, reported before anything reaches stdout.
	named, _ := parseBackends(o.backends)
	if err := unavailableNamed(named, rep.Backends); err != nil {
		return err
	}
	if !o.json {
		a.printDetect(rep)
		fmt.Fprintln(a.stdout)
	}
	if len(o.backends) == 0 && len(rep.Usable) == 0 {
		if o.json {
			if err := writeJSON(a.stdout, &DefaultReport{Detect: rep, Probe: &ProbeReport{Backends: []ProbeBackend{},
				Verdict: "no OS sandbox backend is usable on this host"}}); err != nil {
				return err
			}
		}
		return failedf("no OS sandbox backend is usable on this host (see detect's reasons and fixes)")
	}
	return a.runProbe(ctx, o, rep)
}

// unavailableNamed returns the setup error for the first backend of list
// that avs says cannot run here, or nil.
func unavailableNamed(list []*backend, avs []*availability) error {
	for _, b := range list {
		for _, av := range avs {
			if av.Name != b.Name || av.Available {
				continue
			}
			msg := fmt.Sprintf("backend %s is unavailable: %s", av.Name, av.Reason)
			if av.Fix != "" {
				msg += " (fix: " + av.Fix + ")"
			}
			return setupError(errors.New(msg))
		}
	}
	return nil
}

// selectCases returns the cases --case and --skip select, in catalogue
// order; a malformed pattern, or one that matches no case, is a usage
// error naming its flag.
func selectCases(o *probeOptions) ([]conformance.CaseInfo, error) {
	cases, err := conformance.SelectCases(o.cases, o.skip)
	var pe *conformance.PatternError
	if !errors.As(err, &pe) {
		return cases, err
	}
	flag := "case"
	if !slices.Contains(o.cases, pe.Pattern) {
		flag = "skip"
	}
	if errors.Is(err, conformance.ErrNoCase) {
		return nil, usageErrorf("--%s %q matches no conformance case (see sandbox-probe probe --help; ids like write-outside, layers like network)", flag, pe.Pattern)
	}
	return nil, usageErrorf("--%s %q: %v", flag, pe.Pattern, pe.Err)
}

// runProbe runs the suite on the chosen backends. det is detect's report
// when called without a subcommand (its availability is reused).
func (a *app) runProbe(ctx context.Context, o *probeOptions, det *DetectReport) error {
	list, err := parseBackends(o.backends)
	if err != nil {
		return err
	}
	cases, err := selectCases(o)
	if err != nil {
		return err
	}
	var ws *workspaceSpec
	if o.pf.given() {
		if ws, err = o.pf.load(); err != nil {
			return err
		}
	}
	bo := a.backendOptions(o.bestEffort)
	// The suite's canaries listen on this host's loopback, which a
	// network-full twin must reach: on kubernetes that is the node's
	// network, as in the backend's own conformance test (network none
	// is what the cases check, and it is the same either way).
	bo.KubeHostNetwork = true
	if len(list) == 0 {
		avs := []*availability(nil)
		if det != nil {
			avs = det.Backends
		} else {
			avs = checkBackends(ctx, nil, bo)
		}
		for _, av := range avs {
			if av.Available && av.Sandboxed {
				b, _ := lookupBackend(av.Name)
				list = append(list, b)
			}
		}
		if len(list) == 0 {
			return failedf("no OS sandbox backend is usable on this host (run sandbox-probe detect for the reasons and fixes)")
		}
	} else {
		avs := checkBackends(ctx, list, bo)
		if det != nil {
			avs = det.Backends
		}
		if err := unavailableNamed(list, avs); err != nil {
			return err
		}
	}
	prog := newProgress(a.stderr)
	rep := &ProbeReport{Backends: []ProbeBackend{}, OK: true}
	for _, b := range list {
		pb := ProbeBackend{Name: b.Name, Sandboxed: b.Sandboxed}
		// As the backends' own conformance tests do: the fixture's fake
		// home holds a .gitconfig canary the sandbox hides, and git
		// refuses to start when it sees a global config it cannot read.
		opts := []conformance.Option{conformance.WithEnv("GIT_CONFIG_GLOBAL=/dev/null")}
		if len(o.cases) > 0 {
			opts = append(opts, conformance.Select(o.cases...))
		}
		if len(o.skip) > 0 {
			opts = append(opts, conformance.Skip(o.skip...))
		}
		if o.caseTimeout > 0 {
			opts = append(opts, conformance.WithCaseTimeout(o.caseTimeout))
		}
		if !b.Sandboxed {
			opts = append(opts, conformance.FunctionalOnly())
		}
		if o.probe != "" {
			opts = append(opts, conformance.WithProbe(o.probe))
		} else if b.Name == "docker" && bo.DockerImage != "" && os.Getenv(conformance.ProbeEnv) == "" {
			if ok, why := selfStaticLinux(); !ok {
				fmt.Fprintf(a.stderr, "sandbox-probe: warning: in image mode the conformance probe runs inside %s, and this program, which the suite copies as the probe, %s; build sandbox-probe with CGO_ENABLED=0 (make probe does) or pass --probe with a static cordon-probe\n", bo.DockerImage, why)
			}
		}
		n := 0
		opts = append(opts, conformance.WithProgress(func(id string, done *conformance.CaseResult) {
			if done == nil {
				n++
				prog.show(fmt.Sprintf("[%s %d/%d] %s", b.Name, n, len(cases), id))
			}
		}))
		newExec := func() (executor.Executor, error) { return b.New(bo) }
		r, err := conformance.Check(ctx, newExec, opts...)
		prog.clear()
		if err != nil {
			if ctx.Err() != nil {
				return &exitError{code: 130, err: fmt.Errorf("probe interrupted during %s", b.Name)}
			}
			if errors.Is(err, conformance.ErrNoCase) {
				return usageErrorf("probe: %v", err)
			}
			pb.Error = oneLine(err.Error())
			rep.OK = false
		}
		pb.Report = r
		if r != nil && !r.OK() {
			rep.OK = false
		}
		if ws != nil {
			prog.show(fmt.Sprintf("[%s] checking %s", b.Name, ws.source))
			pb.Policy = checkPolicy(ctx, b, bo, ws)
			prog.clear()
			if !pb.Policy.OK {
				rep.OK = false
			}
		}
		rep.Backends = append(rep.Backends, pb)
	}
	var failed []string
	rep.Verdict, failed = verdict(rep)
	if o.json {
		var v any = rep
		if det != nil {
			v = &DefaultReport{Detect: det, Probe: rep}
		}
		if err := writeJSON(a.stdout, v); err != nil {
			return err
		}
	} else {
		a.printProbe(rep)
	}
	if !rep.OK {
		if len(failed) == 0 {
			failed = []string{"the suite did not run to the end"}
		}
		return failedf("probe: %d check(s) failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

// policyCheckTimeout bounds the --policy check's command.
const policyCheckTimeout = 60 * time.Second

// checkPolicy runs `true` under the policy on a fresh executor of b.
func checkPolicy(ctx context.Context, b *backend, bo backendOptions, ws *workspaceSpec) *PolicyCheck {
	pc := &PolicyCheck{Policy: ws.source, Root: ws.root}
	x, err := b.New(bo)
	if err != nil {
		pc.Outcome, pc.Error = "setup-error", oneLine(err.Error())
		return pc
	}
	defer closeExecutor(x)
	req := &executor.Request{Command: "true", Dir: ws.root, Env: minimalEnv(ws.home), Timeout: policyCheckTimeout,
		Policy: ws.policy, Root: ws.root, Home: ws.home}
	res, err := x.Run(ctx, req)
	var ue *executor.UnenforceableError
	switch {
	case errors.As(err, &ue):
		pc.Outcome, pc.Gaps = "unenforceable", ue.Gaps
		pc.Error = "strict mode refuses this policy here (--best-effort runs it anyway, with these gaps)"
	case err != nil:
		pc.Outcome, pc.Error = "setup-error", oneLine(err.Error())
	case res.ExitCode != 0:
		pc.Outcome = "setup-error"
		pc.Error = fmt.Sprintf("`true` under the policy exited %d: %s", res.ExitCode, oneLine(string(res.Stderr)))
	case !b.Sandboxed:
		pc.Outcome, pc.OK = "unsandboxed", true
	default:
		pc.Outcome, pc.OK = "enforced", true
		if d, ok := x.(executor.Describer); ok {
			if caps := d.Describe(ctx); caps.BestEffort {
				pc.Gaps = caps.Gaps
			}
		}
	}
	return pc
}

// minimalEnv is the environment of the commands sandbox-probe runs itself.
func minimalEnv(home string) []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	if home != "" {
		env = append(env, "HOME="+home)
	}
	return env
}

// verdict sums the report up in one line, and lists the failed checks
// (backend:case, backend:policy).
func verdict(rep *ProbeReport) (string, []string) {
	var parts, failed []string
	for _, b := range rep.Backends {
		if b.Report == nil {
			parts = append(parts, b.Name+" did not run: "+b.Error)
			continue
		}
		s := b.Report.Summary
		part := fmt.Sprintf("%s %d/%d passed", b.Name, s.Passed, s.Total)
		if g := s.Outcomes[conformance.Gap]; g > 0 {
			part += fmt.Sprintf(", %d gap(s)", g)
		}
		if u := s.Outcomes[conformance.Unsupported]; u > 0 {
			part += fmt.Sprintf(", %d unsupported", u)
		}
		if b.Report.FunctionalOnly {
			part += " (no isolation: functional cases only)"
		}
		if s.Failed > 0 {
			part += fmt.Sprintf(", %d FAILED", s.Failed)
		}
		for _, c := range b.Report.Failures() {
			failed = append(failed, b.Name+":"+c.ID)
		}
		if b.Error != "" {
			part += " (stopped: " + b.Error + ")"
		}
		if b.Policy != nil {
			part += ", policy " + b.Policy.Outcome
			if !b.Policy.OK {
				failed = append(failed, b.Name+":policy")
			}
		}
		parts = append(parts, part)
	}
	head := "PASS"
	if !rep.OK {
		head = "FAIL"
	}
	out := head + ": " + strings.Join(parts, "; ")
	if len(failed) > 0 {
		out += " — failed: " + strings.Join(failed, ", ")
	}
	return out, failed
}

func (a *app) printProbe(rep *ProbeReport) {
	p := newPalette(a.color, a.stdout)
	header := []string{"case", "layer", "expected"}
	for _, b := range rep.Backends {
		header = append(header, b.Name)
	}
	t := &table{header: header}
	for _, info := range conformance.Cases() {
		row := []cell{{text: info.ID}, {text: string(info.Layer)}, {text: string(info.Expected)}}
		seen := false
		for _, b := range rep.Backends {
			r := findCase(b.Report, info.ID)
			if r == nil {
				row = append(row, cell{text: "-", paint: p.dim})
				continue
			}
			seen = true
			row = append(row, outcomeCell(p, r))
		}
		if seen {
			t.add(row...)
		}
	}
	_ = t.write(a.stdout, p)
	fmt.Fprintln(a.stdout, p.dim("UPPER CASE: the case failed; gap: declared by the backend, not enforced here; unsupported: does not apply here"))

	fmt.Fprintf(a.stdout, "\n%s\n", p.bold("declared gaps:"))
	gt := &table{wrap: wrapWidth}
	for _, b := range rep.Backends {
		if b.Report == nil || b.Report.Capabilities == nil {
			continue
		}
		caps := b.Report.Capabilities
		if !caps.Sandboxed {
			gt.add(cell{text: "  " + b.Name}, cell{text: "everything"}, cell{text: "no isolation at all (the unsandboxed reference)", paint: p.dim})
			continue
		}
		if len(caps.Gaps) == 0 {
			gt.add(cell{text: "  " + b.Name}, cell{text: "none"})
		}
		for _, g := range caps.Gaps {
			gt.add(cell{text: "  " + b.Name}, cell{text: string(g.Control), paint: p.yellow}, cell{text: oneLine(g.Reason)})
		}
	}
	_ = gt.write(a.stdout, p)

	var fails []cell
	for _, b := range rep.Backends {
		if b.Error != "" {
			fails = append(fails, cell{text: fmt.Sprintf("  %s: the suite stopped: %s", b.Name, b.Error)})
		}
		if b.Report == nil {
			continue
		}
		for _, c := range b.Report.Failures() {
			msg := fmt.Sprintf("  %s %s: %s, expected %s", b.Name, c.ID, c.Outcome, c.Expected)
			if c.Reason != "" {
				msg += ": " + oneLine(c.Reason)
			}
			fails = append(fails, cell{text: msg})
		}
	}
	if len(fails) > 0 {
		fmt.Fprintf(a.stdout, "\n%s\n", p.bold("failures:"))
		for _, c := range fails {
			fmt.Fprintln(a.stdout, p.red(c.text))
		}
	}

	var pol []ProbeBackend
	for _, b := range rep.Backends {
		if b.Policy != nil {
			pol = append(pol, b)
		}
	}
	if len(pol) > 0 {
		fmt.Fprintf(a.stdout, "\n%s %s in %s\n", p.bold("policy check:"), pol[0].Policy.Policy, pol[0].Policy.Root)
		pt := &table{wrap: wrapWidth}
		for _, b := range pol {
			c := cell{text: b.Policy.Outcome, paint: p.green}
			if !b.Policy.OK {
				c.paint = p.red
			}
			pt.add(cell{text: "  " + b.Name}, c, cell{text: b.Policy.Error})
			for _, g := range b.Policy.Gaps {
				pt.add(cell{text: ""}, cell{text: string(g.Control), paint: p.yellow}, cell{text: oneLine(g.Reason)})
			}
		}
		_ = pt.write(a.stdout, p)
	}
	head := p.green("verdict:")
	if !rep.OK {
		head = p.red("verdict:")
	}
	fmt.Fprintf(a.stdout, "\n%s %s\n", head, rep.Verdict)
}

func findCase(r *conformance.Report, id string) *conformance.CaseResult {
	if r == nil {
		return nil
	}
	for i := range r.Cases {
		if r.Cases[i].ID == id {
			return &r.Cases[i]
		}
	}
	return nil
}

func outcomeCell(p palette, r *conformance.CaseResult) cell {
	text := string(r.Outcome)
	switch {
	case r.Failed:
		return cell{text: strings.ToUpper(text), paint: p.red}
	case r.Outcome == conformance.Gap:
		return cell{text: text, paint: p.yellow}
	case r.Outcome == conformance.Unsupported, !r.Required && !r.Passed:
		return cell{text: text, paint: p.dim}
	case r.Passed:
		return cell{text: text, paint: p.green}
	}
	return cell{text: text}
}

// progress shows one self-replacing status line on a terminal, and nothing
// elsewhere.
type progress struct {
	w  io.Writer
	on bool
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, on: isTerminal(w)}
}

func (p *progress) show(s string) {
	if p.on {
		fmt.Fprintf(p.w, "\r\x1b[K%s", s)
	}
}

func (p *progress) clear() {
	if p.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
