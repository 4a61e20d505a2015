package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// PathVerdict is the JSON form of a path decision (explain PATH --json,
// and batch answers for path cases).
type PathVerdict struct {
	Kind     string `json:"kind"` // "path"
	Decision string `json:"decision"`
	Op       string `json:"op"`
	Rule     string `json:"rule"`
	Path     string `json:"path"`
	Rel      string `json:"rel,omitempty"`
	Inside   bool   `json:"inside"`
	Reason   string `json:"reason"`
}

// CommandVerdict is the JSON form of a command decision.
type CommandVerdict struct {
	Kind    string `json:"kind"` // "command"
	Command string `json:"command"`
	Cwd     string `json:"cwd"`
	// Decision, Rule and Reason come from the strictest element; Path is
	// the resolved path of the claim that decided, "" when a segment did.
	Decision string           `json:"decision"`
	Rule     string           `json:"rule"`
	Path     string           `json:"path"`
	Reason   string           `json:"reason"`
	Segments []SegmentVerdict `json:"segments"`
	Claims   []ClaimVerdict   `json:"claims"`
}

// SegmentVerdict is one simple command of a command.
type SegmentVerdict struct {
	Text     string   `json:"text"`
	Words    []string `json:"words"`
	Decision string   `json:"decision"`
	Rule     string   `json:"rule"`
	Reason   string   `json:"reason"`
	Dynamic  string   `json:"dynamic,omitempty"`
	Opaque   string   `json:"opaque,omitempty"`
}

// ClaimVerdict is one path claim of a command.
type ClaimVerdict struct {
	Arg      string `json:"arg"`
	Source   string `json:"source"`
	Op       string `json:"op"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	Path     string `json:"path"`
	Inside   bool   `json:"inside"`
	Reason   string `json:"reason"`
}

func pathVerdictJSON(v *policy.Verdict) *PathVerdict {
	return &PathVerdict{Kind: "path", Decision: v.Decision.String(), Op: v.Op.String(), Rule: v.Rule,
		Path: v.Path, Rel: v.Rel, Inside: v.Inside, Reason: v.Reason}
}

func commandVerdictJSON(cmd, cwd string, v *policy.CommandVerdict) *CommandVerdict {
	out := &CommandVerdict{Kind: "command", Command: cmd, Cwd: cwd, Decision: v.Decision.String(), Rule: v.Rule,
		Reason: v.Reason, Segments: []SegmentVerdict{}, Claims: []ClaimVerdict{}}
	for _, s := range v.Segments {
		words := s.Words
		if words == nil {
			words = []string{}
		}
		out.Segments = append(out.Segments, SegmentVerdict{Text: s.Text, Words: words, Decision: s.Decision.String(),
			Rule: s.Rule, Reason: s.Reason, Dynamic: s.Dynamic, Opaque: s.Opaque})
	}
	decidedBySegment := false
	for _, s := range v.Segments {
		if s.Decision == v.Decision && s.Rule == v.Rule && s.Reason == v.Reason {
			decidedBySegment = true
		}
	}
	for _, c := range v.Claims {
		cv := ClaimVerdict{Arg: c.Arg, Source: c.Source}
		if c.Verdict != nil {
			cv.Op = c.Verdict.Op.String()
			cv.Decision = c.Verdict.Decision.String()
			cv.Rule = c.Verdict.Rule
			cv.Path = c.Verdict.Path
			cv.Inside = c.Verdict.Inside
			cv.Reason = c.Verdict.Reason
			if !decidedBySegment && out.Path == "" && c.Verdict.Decision == v.Decision && c.Verdict.Rule == v.Rule {
				out.Path = c.Verdict.Path
			}
		}
		out.Claims = append(out.Claims, cv)
	}
	return out
}

type explainOptions struct {
	pf      policyFlags
	write   bool
	command string
	cwd     string
	batch   bool
	json    bool
	expect  string
	host    string
	backend string
}

func (a *app) explainCommand() *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain [--policy FILE] [--root DIR] (PATH [--write] | --command CMD [--cwd DIR] | --host NAME[:PORT] | --batch) [--json]",
		Short: "Show the policy's verdict on a path or a command, the deciding rule and the resolved path",
		Long: `explain judges one path (read, or write with --write) or one command
(--command) with the policy, without touching anything: the decision, the
rule that decided, the resolved path, and for a command every segment and
every path claim with its own verdict, or one network destination
(--host NAME[:PORT], port 443 when none is given): the decision, the rule
of network.allow/deny/unknown and, for an allowed name, the addresses the
proxy would connect to (resolved here, after its resolved-address guard).

PATH and --cwd are relative to the workspace root (as in the workspace's
tools); --policy and --root are relative to the current directory.

--batch reads JSON lines from stdin, one case per line:
  {"path": "...", "op": "read"|"write"}, {"command": "...", "cwd": "..."}
  or {"host": "NAME[:PORT]"}
(optionally "cwd" for paths, "id" echoed back, "expect": "allow"|"ask"|"deny")
and writes one JSON answer per non-empty line, in order, each with "line":
its line number. A line that cannot be judged gets {"line": N, "error": "..."}.

Exit status: 0 judged (whatever the decision); 1 an --expect did not hold
or a batch line could not be judged; 2 usage or setup error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.explain(o, args)
		},
	}
	o.pf.add(cmd, true)
	o.pf.dryRun = true // judges and renders; runs nothing
	f := cmd.Flags()
	f.BoolVar(&o.write, "write", false, "judge writing PATH instead of reading it")
	f.StringVar(&o.command, "command", "", "judge the shell command CMD")
	f.StringVar(&o.cwd, "cwd", "", "the command's working directory (and the base of a relative PATH); default: the root")
	f.BoolVar(&o.batch, "batch", false, "read JSON cases from stdin, write one JSON answer per line")
	f.BoolVar(&o.json, "json", false, "print the verdict as JSON")
	f.StringVar(&o.expect, "expect", "", "exit 1 unless the decision is this one (allow, ask or deny)")
	f.StringVar(&o.host, "host", "", "judge a connection to NAME[:PORT] (port 443 when none is given) by the policy's network setting")
	f.StringVar(&o.backend, "backend", "", "with --command: judge it as a workspace on this backend does, with its sandbox auto-allow ("+strings.Join(backendNames(), ", ")+")")
	return cmd
}

func (a *app) explain(o *explainOptions, args []string) error {
	modes := 0
	if len(args) > 0 {
		modes++
	}
	if o.pf.cmd.Flags().Changed("command") {
		modes++
	}
	if o.batch {
		modes++
	}
	if o.pf.cmd.Flags().Changed("host") {
		modes++
	}
	switch {
	case modes == 0:
		return usageErrorf("explain: give a PATH, --command CMD, --host NAME[:PORT] or --batch")
	case modes > 1:
		return usageErrorf("explain: PATH, --command, --host and --batch are exclusive")
	case len(args) > 1:
		return usageErrorf("explain: one PATH at a time (got %d; use --batch for many)", len(args))
	case o.write && len(args) == 0:
		return usageErrorf("explain: --write applies to a PATH")
	case o.backend != "" && !o.pf.cmd.Flags().Changed("command"):
		return usageErrorf("explain: --backend applies to --command")
	}
	var expect *policy.Decision
	if o.expect != "" {
		var d policy.Decision
		if err := d.UnmarshalText([]byte(o.expect)); err != nil {
			return usageErrorf("--expect: %v", err)
		}
		expect = &d
	}
	ws, err := o.pf.load()
	if err != nil {
		return err
	}
	ws.announce(a.stderr)
	c, err := ws.checker()
	if err != nil {
		return err
	}
	if o.batch {
		return a.explainBatch(c, ws)
	}
	var decision policy.Decision
	if o.pf.cmd.Flags().Changed("host") {
		hv, err := hostVerdictFor(c, o.host)
		if err != nil {
			return usageErrorf("explain --host: %v", err)
		}
		decision = hv.decision
		if o.json {
			if err := writeJSON(a.stdout, hv); err != nil {
				return err
			}
		} else {
			a.printHostVerdict(hv)
		}
	} else if len(args) == 1 {
		op := policy.Read
		if o.write {
			op = policy.Write
		}
		cwd, err := ws.inRoot(c, o.cwd)
		if err != nil {
			return err
		}
		v, err := c.DecidePathAt(cwd, args[0], op)
		if err != nil {
			return setupError(fmt.Errorf("explain %q: %w", args[0], err))
		}
		decision = v.Decision
		if o.json {
			if err := writeJSON(a.stdout, pathVerdictJSON(v)); err != nil {
				return err
			}
		} else {
			a.printPathVerdict(v)
		}
	} else {
		cwd, err := ws.inRoot(c, o.cwd)
		if err != nil {
			return err
		}
		var v *policy.CommandVerdict
		if o.backend != "" {
			v, err = a.decideOnBackend(o, ws)
		} else {
			v, err = c.DecideCommand(o.command, cwd)
		}
		if err != nil {
			return setupError(fmt.Errorf("explain --command: %w", err))
		}
		decision = v.Decision
		if o.json {
			if err := writeJSON(a.stdout, commandVerdictJSON(o.command, cwd, v)); err != nil {
				return err
			}
		} else {
			a.printCommandVerdict(o.command, cwd, v)
		}
	}
	if expect != nil && decision != *expect {
		return failedf("explain: decision %s, expected %s", decision, *expect)
	}
	return nil
}

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeJSONLine writes v as one compact JSON line.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (a *app) paintDecision(p palette, d string) cell {
	switch d {
	case "allow":
		return cell{text: d, paint: p.green}
	case "ask":
		return cell{text: d, paint: p.yellow}
	default:
		return cell{text: d, paint: p.red}
	}
}

func where(v *policy.Verdict) string {
	if v.Inside {
		return "inside the root (" + v.Rel + ")"
	}
	return "outside the root"
}

func (a *app) printPathVerdict(v *policy.Verdict) {
	p := newPalette(a.color, a.stdout)
	d := a.paintDecision(p, v.Decision.String())
	fmt.Fprintf(a.stdout, "%s %s %s\n", d.paint(d.text), v.Op, v.Path)
	t := &table{}
	t.addText("  rule:", v.Rule)
	t.addText("  where:", where(v))
	t.addText("  reason:", v.Reason)
	_ = t.write(a.stdout, p)
}

func (a *app) printCommandVerdict(cmd, cwd string, v *policy.CommandVerdict) {
	p := newPalette(a.color, a.stdout)
	d := a.paintDecision(p, v.Decision.String())
	fmt.Fprintf(a.stdout, "%s %s\n", d.paint(d.text), cmd)
	t := &table{}
	t.addText("  cwd:", cwd)
	t.addText("  rule:", v.Rule)
	t.addText("  reason:", v.Reason)
	_ = t.write(a.stdout, p)
	fmt.Fprintf(a.stdout, "segments (%d):\n", len(v.Segments))
	st := &table{}
	for _, s := range v.Segments {
		why := s.Rule
		if s.Dynamic != "" {
			why += "; dynamic: " + s.Dynamic
		}
		if s.Opaque != "" {
			why += "; opaque: " + s.Opaque
		}
		st.add(cell{text: "  "}, a.paintDecision(p, s.Decision.String()), cell{text: s.Text}, cell{text: why})
	}
	_ = st.write(a.stdout, p)
	fmt.Fprintf(a.stdout, "path claims (%d):\n", len(v.Claims))
	ct := &table{}
	for _, c := range v.Claims {
		if c.Verdict == nil {
			ct.addText("  ", "?", "", c.Arg, "("+c.Source+")", "")
			continue
		}
		arrow := c.Arg
		if c.Verdict.Path != "" && c.Verdict.Path != c.Arg {
			arrow += " -> " + c.Verdict.Path
		}
		ct.add(cell{text: "  "}, a.paintDecision(p, c.Verdict.Decision.String()), cell{text: c.Verdict.Op.String()},
			cell{text: arrow}, cell{text: "(" + c.Source + ")"}, cell{text: c.Verdict.Rule})
	}
	_ = ct.write(a.stdout, p)
}

// batchCase is one line of explain --batch input.
type batchCase struct {
	Host    *string `json:"host"`
	Path    *string `json:"path"`
	Op      string  `json:"op"`
	Command *string `json:"command"`
	Cwd     string  `json:"cwd"`
	ID      any     `json:"id"`
	Expect  string  `json:"expect"`
}

// batchAnswer is one line of explain --batch output: the line number,
// the case's id, then the verdict's fields (exactly as explain --json
// prints them) or an error, then the expectation.
type batchAnswer struct {
	Line int
	ID   any
	// verdict is a *PathVerdict or a *CommandVerdict.
	verdict any
	Error   string
	Expect  string
	OK      *bool
}

// MarshalJSON writes {"line", "id"?, verdict fields... | "error", "expect"?, "ok"?}.
func (b batchAnswer) MarshalJSON() ([]byte, error) {
	var out bytes.Buffer
	fmt.Fprintf(&out, `{"line":%d`, b.Line)
	field := func(k string, v any) error {
		raw, err := marshalCompact(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(&out, ",%q:%s", k, raw)
		return nil
	}
	if b.ID != nil {
		if err := field("id", b.ID); err != nil {
			return nil, err
		}
	}
	if b.Error != "" {
		if err := field("error", b.Error); err != nil {
			return nil, err
		}
	} else if b.verdict != nil {
		raw, err := marshalCompact(b.verdict)
		if err != nil {
			return nil, err
		}
		if len(raw) > 2 {
			out.WriteByte(',')
			out.Write(raw[1 : len(raw)-1])
		}
	}
	if b.Expect != "" {
		if err := field("expect", b.Expect); err != nil {
			return nil, err
		}
	}
	if b.OK != nil {
		if err := field("ok", *b.OK); err != nil {
			return nil, err
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// marshalCompact marshals v without HTML escaping or a trailing newline.
func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// maxBatchLine bounds one batch input line.
const maxBatchLine = 4 << 20

// errLineTooLong reports a batch line over maxBatchLine.
var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline. A line longer than
// maxBatchLine is consumed and reported as errLineTooLong.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > maxBatchLine {
				tooLong, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (len(line) > 0 || tooLong) && errors.Is(err, io.EOF) {
			err = nil
		}
		if err != nil {
			return nil, err
		}
		if tooLong {
			return nil, errLineTooLong
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}

func (a *app) explainBatch(c *policy.Checker, ws *workspaceSpec) error {
	r := bufio.NewReaderSize(a.stdin, 64<<10)
	w := bufio.NewWriter(a.stdout)
	bad := 0
	for n := 1; ; n++ {
		line, err := readLine(r)
		if errors.Is(err, io.EOF) {
			break
		}
		var ans batchAnswer
		ans.Line = n
		switch {
		case errors.Is(err, errLineTooLong):
			ans.Error = fmt.Sprintf("longer than %d bytes", maxBatchLine)
		case err != nil:
			return setupError(fmt.Errorf("explain --batch: reading stdin: %w", err))
		case len(bytes.TrimSpace(line)) == 0:
			continue
		default:
			ans = a.judgeBatchLine(c, ws, n, line)
		}
		if ans.Error != "" || (ans.OK != nil && !*ans.OK) {
			bad++
		}
		if err := writeJSONLine(w, ans); err != nil {
			return err
		}
		// Answer each line as it comes, so a caller can pipe cases in
		// and read verdicts back interactively.
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		return failedf("explain --batch: %d line(s) could not be judged or missed their expectation", bad)
	}
	return nil
}

func (a *app) judgeBatchLine(c *policy.Checker, ws *workspaceSpec, n int, line []byte) batchAnswer {
	ans := batchAnswer{Line: n}
	var bc batchCase
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&bc); err != nil {
		ans.Error = oneLine(err.Error())
		return ans
	}
	if dec.More() {
		ans.Error = "more than one JSON value"
		return ans
	}
	ans.ID = bc.ID
	var want *policy.Decision
	if bc.Expect != "" {
		var d policy.Decision
		if err := d.UnmarshalText([]byte(bc.Expect)); err != nil {
			ans.Error = fmt.Sprintf("expect: %v", err)
			return ans
		}
		want = &d
	}
	var got policy.Decision
	switch {
	case bc.Host != nil && (bc.Path != nil || bc.Command != nil):
		ans.Error = "a case has one of \"host\", \"path\" and \"command\""
		return ans
	case bc.Host != nil:
		if bc.Op != "" || bc.Cwd != "" {
			ans.Error = "\"op\" and \"cwd\" do not apply to a host case"
			return ans
		}
		hv, err := hostVerdictFor(c, *bc.Host)
		if err != nil {
			ans.Error = oneLine(err.Error())
			return ans
		}
		got = hv.decision
		ans.verdict = hv
	case bc.Path != nil && bc.Command != nil:
		ans.Error = "a case has either \"path\" or \"command\", not both"
		return ans
	case bc.Path != nil:
		op := policy.Read
		if bc.Op != "" {
			if err := op.UnmarshalText([]byte(bc.Op)); err != nil {
				ans.Error = fmt.Sprintf("op: %v", err)
				return ans
			}
		}
		cwd, err := ws.inRoot(c, bc.Cwd)
		if err != nil {
			ans.Error = oneLine(err.Error())
			return ans
		}
		v, err := c.DecidePathAt(cwd, *bc.Path, op)
		if err != nil {
			ans.Error = oneLine(err.Error())
			return ans
		}
		got = v.Decision
		ans.verdict = pathVerdictJSON(v)
	case bc.Command != nil:
		if bc.Op != "" {
			ans.Error = "\"op\" applies to a path case"
			return ans
		}
		cwd, err := ws.inRoot(c, bc.Cwd)
		if err != nil {
			ans.Error = oneLine(err.Error())
			return ans
		}
		v, err := c.DecideCommand(*bc.Command, cwd)
		if err != nil {
			ans.Error = oneLine(err.Error())
			return ans
		}
		got = v.Decision
		ans.verdict = commandVerdictJSON(*bc.Command, cwd, v)
	default:
		ans.Error = "a case needs \"path\", \"command\" or \"host\""
		return ans
	}
	if want != nil {
		ok := got == *want
		ans.Expect = want.String()
		ans.OK = &ok
	}
	return ans
}

// decideOnBackend judges o.command as a workspace session on o.backend
// does: the policy's verdict, with the sandbox's auto-allow applied.
func (a *app) decideOnBackend(o *explainOptions, ws *workspaceSpec) (*policy.CommandVerdict, error) {
	ctx := context.Background()
	b, err := lookupBackend(o.backend)
	if err != nil {
		return nil, err
	}
	bo := a.backendOptions(false)
	if av := b.Check(ctx, bo); !av.Available {
		return nil, fmt.Errorf("backend %s is unavailable: %s", b.Name, av.Reason)
	}
	x, err := b.New(bo)
	if err != nil {
		return nil, err
	}
	defer closeExecutor(x)
	w, err := workspace.Local(ws.root, append(ws.options(), workspace.WithExecutor(x))...)
	if err != nil {
		return nil, err
	}
	s, err := w.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if aa := s.AutoAllow(); !aa.On {
		fmt.Fprintf(a.stderr, "sandbox-probe: sandbox auto-allow is off on %s: %s\n", b.Name, aa.Why)
	}
	return s.DecideCommand(o.command, o.cwd)
}
