package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/policy/internal/shellscan"
	"mvdan.cc/sh/v3/syntax"
)

// Caps of the command gate. A longer or deeper command is never allowed.
const (
	// MaxCommandLen is the longest command the gate parses, in bytes.
	MaxCommandLen = shellscan.DefaultMaxLen
	// MaxCommandDepth is the deepest nesting (syntax and recursive parses
	// of sh -c and eval strings) the gate follows.
	MaxCommandDepth = shellscan.DefaultMaxDepth
	// maxGlobMatches caps the names a glob may expand to; more is Ask.
	maxGlobMatches = 10000
	// maxGlobDirs caps the directories a glob expansion reads.
	maxGlobDirs = 1000
	// maxTreeEntries caps the entries a recursive claim, or the search for
	// a hard-linked file's other names, walks; more is Ask.
	maxTreeEntries = 200000
)

// CommandError reports a command the gate refuses to judge: one containing
// a NUL byte (Err is ErrNUL).
type CommandError struct {
	Command string
	Err     error
}

func (e *CommandError) Error() string {
	cmd := e.Command
	if len(cmd) > 80 {
		cmd = cmd[:80] + "..."
	}
	return fmt.Sprintf("command %q: %v", cmd, e.Err)
}

// Unwrap returns the underlying error.
func (e *CommandError) Unwrap() error { return e.Err }

// CommandVerdict is the judgement of a whole command by the command gate.
//
// # The command gate
//
// The gate allows only what it can account for completely; everything
// else is at least Ask, with a reason naming the class. DecideCommand
// parses the command with mvdan.cc/sh/v3/syntax twice, as bash and as
// POSIX sh (dash is /bin/sh on Debian), and judges both readings; bash-only
// syntax POSIX sh cannot parse is Ask. Every simple command anywhere — in
// lists, pipelines, subshells, groups, control structures, functions,
// command and process substitutions, sh -c, eval, trap and alias strings,
// find -exec and xargs — is a segment, judged after quote removal and
// after unwrapping wrappers (env, command, exec, nohup, nice, time,
// timeout, stdbuf, setsid, ionice, xargs, busybox, sudo, doas): per
// segment the policy's CommandDecider decides first, then the first
// CommandRule whose words are a word-boundary prefix of the segment's,
// then ShellDefault; across segments the strictest wins.
//
// Uncertainty is never allowed (see package shellscan for the full list):
// a command name or operand only known at run time, a glob past its caps,
// arithmetic or subscripts on variables, shell state that changes
// expansion (IFS, GLOBIGNORE, shopt, namerefs, printf -v HOME), a segment
// after a link maker in the same line, running a file the line writes,
// unknown git subcommands (aliases). Code the gate cannot read — scripts,
// python -c, program-running options (go test -exec, make --eval, tar
// --to-command, ...), variables such as PATH, LD_PRELOAD or GIT_* — is
// at least Ask whenever the policy could be bypassed by it: it has a Deny
// or Ask command rule, a CommandDecider, or a ShellDefault other than
// Allow.
//
// Path claims. Redirect targets are write claims and < is a read claim;
// every operand and option value is a candidate, judged when a file of
// that name exists (links followed); known writers' operands and write
// options are write claims; globs are expanded against the file system as
// the shell does and each match judged, and the directories a glob lists
// are read claims; recursive readers and deleters claim their whole tree
// (Ask, naming the first path in it the policy does not allow); a file
// with several hard links is judged by all its names in the root. "~",
// $HOME and ${HOME} expand to the checker's home; cd and pushd are tracked
// as a set of possible directories. The cwd itself is a read claim. A
// claim that cannot be resolved is at least Ask.
//
// The gate is a gate, not a sandbox: it only ever adds restrictions, it
// cannot see what programs do (a script the agent wrote, make, npm
// scripts), and it judges names, not file contents. The OS backends
// derived from the same policy are the boundary. Its soundness is checked
// by running what it allows: package gateoracle.
type CommandVerdict struct {
	Decision Decision `json:"decision"`
	// Rule and Reason come from the strictest element.
	Rule     string           `json:"rule"`
	Reason   string           `json:"reason"`
	Segments []SegmentVerdict `json:"segments"`
	Claims   []ClaimVerdict   `json:"claims"`
}

// SegmentVerdict is the command-rule verdict of one simple command.
type SegmentVerdict struct {
	// Text is the segment as it appears in the command.
	Text string `json:"text"`
	// Words are the literal words after quote removal, assignments skipped
	// and wrappers unwrapped; empty when not literal. Non-literal arguments
	// appear as written.
	Words    []string `json:"words"`
	Decision Decision `json:"decision"`
	Rule     string   `json:"rule"`
	Reason   string   `json:"reason"`
	// Dynamic says why the command could not be known before it runs.
	Dynamic string `json:"dynamic,omitempty"`
	// Opaque says why the segment runs code the gate cannot read.
	Opaque string `json:"opaque,omitempty"`
}

// ClaimVerdict is the path verdict of one path claim.
type ClaimVerdict struct {
	// Arg is the word as written in the command.
	Arg string `json:"arg"`
	// Source says where the claim came from: "redirect", "argument",
	// "writer argument", "option", "glob" (a directory the shell lists to
	// expand a glob), "cd", "command", "script", "cwd".
	Source  string   `json:"source"`
	Verdict *Verdict `json:"verdict"`
}

// ruleWords is a command rule split into words.
type ruleWords struct {
	index  int
	words  []string
	action Decision
	source string
}

func (c *Checker) commandRules() []ruleWords {
	p := c.Policy()
	out := make([]ruleWords, 0, len(p.CommandRules))
	for i, r := range p.CommandRules {
		out = append(out, ruleWords{
			index:  i,
			words:  strings.Fields(r.Pattern),
			action: r.Action,
			source: fmt.Sprintf("%s %q", p.source("command_rules", i), r.Pattern),
		})
	}
	return out
}

// restrictive reports whether unreadable code could bypass the policy.
func restrictive(p *Policy) bool {
	if p.ShellDefault != Allow || p.CommandDecider != nil {
		return true
	}
	for _, r := range p.CommandRules {
		if r.Action != Allow {
			return true
		}
	}
	return false
}

// decideCommand implements DecideCommand.
func (c *Checker) decideCommand(cmd, cwd string) (*CommandVerdict, error) {
	p := c.Policy()
	if strings.IndexByte(cmd, 0) >= 0 {
		return &CommandVerdict{Decision: Deny, Rule: "gate: NUL byte", Reason: "the command contains a NUL byte"},
			&CommandError{Command: cmd, Err: ErrNUL}
	}
	if !p.AllowShell {
		return &CommandVerdict{Decision: Deny, Rule: "allow_shell: false", Reason: "the policy allows no shell commands"}, nil
	}
	res := shellscan.Scan(cmd, shellscan.Options{Home: c.Home(), MaxLen: MaxCommandLen, MaxDepth: MaxCommandDepth})
	v := &CommandVerdict{
		Decision: Allow,
		Segments: make([]SegmentVerdict, 0, len(res.Segments)),
		Claims:   make([]ClaimVerdict, 0, len(res.Claims)+1),
	}
	rules := c.commandRules()
	restr := restrictive(p)
	for i := range res.Segments {
		v.Segments = append(v.Segments, c.judgeSegment(&res.Segments[i], rules, restr))
	}

	if cwd == "" {
		cwd = c.Root()
	}
	cwdAbs := ""
	var cv *Verdict
	var err error
	if cwd == c.Root() {
		cv = c.DecideResolved(cwd, Read) // the root is resolved once, by NewChecker
	} else {
		cv, err = c.DecidePathAt("", cwd, Read)
	}
	if err != nil {
		cv = unresolvedVerdict(cwd, Read, "the working directory cannot be resolved: "+err.Error())
	} else {
		cwdAbs = cv.Path
	}
	v.Claims = append(v.Claims, ClaimVerdict{Arg: cwd, Source: "cwd", Verdict: cv})
	j := claimJudge{c: c, cwd: cwdAbs, bases: map[string][]string{}}
	for i := range res.Claims {
		if cv := j.judge(&res.Claims[i]); cv.Verdict != nil {
			v.Claims = append(v.Claims, cv)
		}
	}

	reason := ""
	for _, s := range v.Segments {
		if s.Decision.Stricter(v.Decision) || v.Rule == "" && s.Decision == v.Decision {
			v.Decision, v.Rule, reason = s.Decision, s.Rule, fmt.Sprintf("%q: %s", s.Text, s.Reason)
		}
	}
	for _, cl := range v.Claims {
		// A claim as strict as shell_default is the decisive reason:
		// cat ~/.ssh/id_rsa asks because of the path it names.
		if cl.Verdict.Decision.Stricter(v.Decision) ||
			cl.Verdict.Decision == v.Decision && (v.Rule == "" || v.Rule == RuleShellDefault && cl.Verdict.Rule != RuleShellDefault) {
			v.Decision, v.Rule = cl.Verdict.Decision, cl.Verdict.Rule
			reason = fmt.Sprintf("%s %s (%s %q): %s", cl.Verdict.Op, cl.Verdict.Path, cl.Source, cl.Arg, cl.Verdict.Reason)
		}
	}
	v.Reason = reason
	return v, nil
}

// judgeSegment applies the decider, the rules and the default to every
// form of a segment; the strictest wins.
func (c *Checker) judgeSegment(seg *shellscan.Segment, rules []ruleWords, restr bool) SegmentVerdict {
	words := seg.Words()
	sv := SegmentVerdict{Text: seg.Text, Decision: Allow, Dynamic: seg.Dynamic, Opaque: seg.Opaque}
	if seg.Dynamic == "" {
		sv.Words = make([]string, len(words))
		for i, w := range words {
			sv.Words[i] = w.Value
		}
	}
	// The strictest decision wins; on a tie, a specific reason (a rule
	// that may match, a dynamic or unreadable command) replaces the
	// default's, so that what asks is named (sandbox auto-allow waives
	// only shell_default's asks).
	set := func(d Decision, rule, reason string) {
		if d.Stricter(sv.Decision) || d == sv.Decision && (sv.Rule == "" || sv.Rule == RuleShellDefault && rule != RuleShellDefault) {
			sv.Decision, sv.Rule, sv.Reason = d, rule, reason
		}
	}
	for i := range seg.Forms {
		d, rule, reason := c.judgeForm(&seg.Forms[i], rules)
		if rule != "" {
			set(d, rule, reason)
		}
	}
	if seg.Dynamic != "" {
		set(Ask, RuleDynamic, seg.Dynamic)
	}
	if seg.Opaque != "" && restr {
		set(Ask, RuleUnreadable, seg.Opaque+"; it could bypass the command rules")
	}
	if sv.Rule == "" {
		p := c.Policy()
		set(p.ShellDefault, RuleShellDefault, "no command rule matches; shell_default is "+p.ShellDefault.String())
	}
	return sv
}

// judgeForm judges one reading of a segment. It returns an empty rule when
// it has no opinion (a wrapper form no rule names).
func (c *Checker) judgeForm(f *shellscan.Form, rules []ruleWords) (Decision, string, string) {
	p := c.Policy()
	if !f.Wrapper && p.CommandDecider != nil {
		if d, ok := p.CommandDecider(formText(f)); ok {
			return d, "command_decider", "decided by the policy's command decider"
		}
	}
	possible, possRule, possReason := Allow, "", ""
	for _, r := range rules {
		switch matchRule(r, f) {
		case matchDefinite:
			d, rule, reason := r.action, r.source, "matches command rule "+fmt.Sprintf("%q", strings.Join(r.words, " "))
			if possible.Stricter(d) {
				return possible, possRule, possReason
			}
			return d, rule, reason
		case matchPossible:
			if r.action != Allow && possRule == "" {
				possible, possRule = Ask, r.source
				possReason = "may match command rule " + fmt.Sprintf("%q", strings.Join(r.words, " ")) +
					" (a word is only known at run time, or the rule's words appear after options)"
			}
		}
	}
	if f.Wrapper {
		return possible, possRule, possReason
	}
	d := p.ShellDefault
	if possRule != "" && !d.Stricter(possible) {
		// As strict as the default or stricter: the rule that may match
		// is what decides.
		return possible, possRule, possReason
	}
	return d, RuleShellDefault, "no command rule matches; shell_default is " + d.String()
}

// The rules of command segments no command rule decides.
const (
	// RuleShellDefault: no command rule matches.
	RuleShellDefault = "default: shell_default"
	// RuleDynamic: the command is known only when it runs.
	RuleDynamic = "gate: dynamic command"
	// RuleUnreadable: the segment runs code the gate cannot read.
	RuleUnreadable = "gate: unreadable code"
)

func formText(f *shellscan.Form) string {
	parts := make([]string, len(f.Words))
	for i, w := range f.Words {
		parts[i] = w.Value
		if w.Kind == shellscan.Literal {
			if q, err := syntax.Quote(w.Value, syntax.LangBash); err == nil {
				parts[i] = q
			}
		}
	}
	return strings.Join(parts, " ")
}

type ruleMatch uint8

const (
	matchNone ruleMatch = iota
	matchPossible
	matchDefinite
)

// matchRule reports whether the rule's words are a word-boundary prefix of
// the form's words. Glob and dynamic words, and an open tail, make a match
// possible; so does, for rules that are not Allow, the rule's later words
// appearing in order after options (kubectl -n x delete).
func matchRule(r ruleWords, f *shellscan.Form) ruleMatch {
	if len(r.words) == 0 {
		return matchNone
	}
	m := matchDefinite
	for i, rw := range r.words {
		if i >= len(f.Words) {
			if f.OpenTail {
				m = matchPossible
				break
			}
			m = matchNone
			break
		}
		if wm := matchWord(&f.Words[i], rw); wm == matchNone {
			m = matchNone
			break
		} else if wm == matchPossible {
			m = matchPossible
		}
	}
	if m != matchNone || r.action == Allow || len(r.words) < 2 {
		return m
	}
	// Loose: first word equal, the rest in order among the later words.
	if matchWord(&f.Words[0], r.words[0]) == matchNone {
		return matchNone
	}
	k := 1
	for _, w := range f.Words[1:] {
		if k < len(r.words) && matchWord(&w, r.words[k]) != matchNone {
			k++
		}
	}
	if k == len(r.words) || f.OpenTail {
		return matchPossible
	}
	return matchNone
}

func matchWord(w *shellscan.Word, rw string) ruleMatch {
	switch w.Kind {
	case shellscan.Literal:
		if w.Value == rw {
			return matchDefinite
		}
		return matchNone
	case shellscan.Glob:
		if w.Pattern == "" {
			return matchPossible
		}
		ok, err := path.Match(w.Pattern, rw)
		if ok || err != nil || w.Value == rw {
			return matchPossible
		}
		return matchNone
	default:
		return matchPossible
	}
}

func unresolvedVerdict(p string, op Op, reason string) *Verdict {
	return &Verdict{Decision: Ask, Op: op, Rule: RuleUnresolvedPath, Path: p, Reason: reason}
}

// RuleUnresolvedPath is the Rule of a path claim the gate could not
// resolve (a variable, a glob, a substitution): its Path is the word as
// written, not a path, so approving the command must grant nothing for
// it.
const RuleUnresolvedPath = "gate: unresolved path"

// claimJudge judges path claims, caching the directories cd led to.
type claimJudge struct {
	c     *Checker
	cwd   string // resolved working directory; "" when unknown
	bases map[string][]string
	errs  map[string]string

	linkIndex    map[fileKey][]string
	linkComplete bool
}

// dirBases returns the absolute directories a claim's Dir stands for: the
// physical resolution and, when the path has "..", the logical one (as cd
// computes it), or the reason it cannot be resolved.
func (j *claimJudge) dirBases(dir string) ([]string, string) {
	if j.cwd == "" {
		return nil, "the working directory cannot be resolved"
	}
	if dir == "" {
		return []string{j.cwd}, ""
	}
	if b, ok := j.bases[dir]; ok {
		return b, j.errs[dir]
	}
	var out []string
	reason := ""
	phys, err := j.c.Resolve(j.cwd, dir)
	if err != nil {
		reason = "cd " + dir + " cannot be resolved: " + err.Error()
	} else {
		out = append(out, phys)
		if strings.Contains(dir, "..") {
			logical := dir
			if !path.IsAbs(dir) {
				logical = path.Join(j.cwd, dir)
			}
			if l, err := j.c.Resolve("", path.Clean(logical)); err == nil && l != phys {
				out = append(out, l)
			}
		}
	}
	j.bases[dir] = out
	if reason != "" {
		if j.errs == nil {
			j.errs = map[string]string{}
		}
		j.errs[dir] = reason
	}
	return out, reason
}

func (j *claimJudge) judge(cl *shellscan.Claim) ClaimVerdict {
	op := Read
	if cl.Op == shellscan.Write {
		op = Write
	}
	out := ClaimVerdict{Arg: cl.Arg, Source: cl.Source}
	if cl.Unresolved != "" {
		out.Verdict = unresolvedVerdict(cl.Path, op, cl.Unresolved)
		return out
	}
	bases := []string{""}
	if !path.IsAbs(cl.Path) {
		var reason string
		bases, reason = j.dirBases(cl.Dir)
		if reason != "" {
			out.Verdict = unresolvedVerdict(cl.Path, op, reason)
			return out
		}
	}
	for _, base := range bases {
		p := cl.Path
		if cl.NewRepository && !exists(base, path.Dir(p)) {
			// git init makes a new git directory: a write of the
			// directory, not of a protected file in an existing one
			// (the guard sanitizes what the command leaves in it).
			p = path.Dir(p)
		}
		v, fi, ok := j.decideUnderInfo(base, p, op)
		if cl.Candidate && (ok && fi == nil || !ok && !exists(base, p)) {
			continue // a word that names no file is not a path
		}
		var err error
		if !ok {
			v, err = j.c.DecidePathAt(base, p, op)
		}
		if err != nil {
			v = unresolvedVerdict(p, op, "the path cannot be resolved: "+err.Error())
		}
		if v.Decision == Allow && v.Path != "" {
			if ok && fi == nil && !cl.Recursive {
				// It does not exist: no links, no tree.
			} else if cl.Recursive && cl.WorkTree {
				top := workTreeTop(v.Path)
				tv := j.c.DecideResolved(top, op)
				if tv.Decision != Allow {
					v = tv
				} else {
					v = j.subtree(top, op, cl.Arg, cl.NamesOnly, v)
				}
			} else if cl.Recursive {
				v = j.subtree(v.Path, op, cl.Arg, cl.NamesOnly, v)
			} else if fi == nil || fi.Mode().IsRegular() {
				v = j.linksInfo(v.Path, fi, op, v)
			}
		}
		if out.Verdict == nil || v.Decision.Stricter(out.Verdict.Decision) {
			out.Verdict = v
		}
		if cl.Glob != "" {
			if g := j.globMatches(base, cl.Glob, op, cl.Recursive, cl.NamesOnly); g != nil && g.Decision.Stricter(out.Verdict.Decision) {
				out.Verdict = g
			}
		}
	}
	// A cd claim resolved the directory later claims resolve against.
	if cl.Source == "cd" && cl.Dir == "" && cl.Glob == "" && len(bases) == 1 && bases[0] == j.cwd &&
		!strings.Contains(cl.Path, "..") && out.Verdict.Rule != "gate: unresolved path" && out.Verdict.Path != "" {
		if _, ok := j.bases[cl.Path]; !ok {
			j.bases[cl.Path] = []string{out.Verdict.Path}
		}
	}
	return out
}

// decideUnder judges a relative path under base, a directory that is
// already resolved, with one lstat per component of the path instead of a
// resolution of the whole absolute path. It reports false — and the caller
// uses DecidePathAt — for anything but plain existing directories followed
// by an existing or missing tail: a symlink, "..", a non-directory in the
// middle, an error other than "does not exist".
func (j *claimJudge) decideUnder(base, rel string, op Op) (*Verdict, bool) {
	v, _, ok := j.decideUnderInfo(base, rel, op)
	return v, ok
}

// decideUnderInfo is decideUnder that also returns the file's lstat
// information when it exists (nil when it does not).
func (j *claimJudge) decideUnderInfo(base, rel string, op Op) (*Verdict, fs.FileInfo, bool) {
	if base == "" || path.IsAbs(rel) || rel == "" || strings.HasPrefix(rel, "~") {
		return nil, nil, false
	}
	cur := base
	rest := rel
	var last fs.FileInfo
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
			continue
		case "..":
			return nil, nil, false
		}
		next := cur + "/" + comp
		if cur == "/" {
			next = "/" + comp
		}
		fi, err := os.Lstat(next)
		switch {
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			return nil, nil, false
		case err == nil && !fi.IsDir() && strings.Trim(rest, "/.") != "":
			return nil, nil, false
		case err == nil:
			cur, last = next, fi
		case errors.Is(err, fs.ErrNotExist):
			if strings.Contains(rest, "..") {
				return nil, nil, false
			}
			return j.c.DecideResolved(path.Clean(next+"/"+rest), op), nil, true
		default:
			return nil, nil, false
		}
	}
	if last == nil { // rel named base itself
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil, nil, false
		}
		last = fi
	}
	return j.c.DecideResolved(cur, op), last, true
}

// globMatches expands a glob against the file system as the shell does
// (every segment, hidden names only for a segment that starts with "." or
// a bracket, "." and ".." too since dash returns them), judging every
// directory the shell lists on the way, and judges every match (unless
// namesOnly: the program only gets the names), returning the strictest verdict. A glob that matches more than
// maxGlobMatches names, or needs more than maxGlobDirs directory reads,
// is asked: no cap passes silently.
func (j *claimJudge) globMatches(base, glob string, op Op, recursive, namesOnly bool) *Verdict {
	start := base
	rest := glob
	if path.IsAbs(glob) {
		start, rest = "/", strings.TrimLeft(glob, "/")
	}
	cur := []string{""} // matches so far, relative to start
	reads := 0
	for _, seg := range strings.Split(rest, "/") {
		if seg == "" {
			continue
		}
		if !strings.ContainsAny(seg, "*?[") {
			lit := unescapeGlob(seg)
			for i := range cur {
				cur[i] = path.Join(cur[i], lit)
			}
			continue
		}
		var next []string
		for _, m := range cur {
			if reads++; reads > maxGlobDirs {
				return globCap(glob, op, fmt.Sprintf("reads more than %d directories", maxGlobDirs))
			}
			dir := filepath.Join(start, m)
			// The shell lists dir to expand the glob.
			if rd, err := j.c.Resolve("", dir); err == nil {
				if lv := j.c.DecideResolved(rd, Read); lv.Decision != Allow {
					return &Verdict{Decision: lv.Decision, Op: Read, Rule: lv.Rule, Path: rd,
						Reason: "the shell lists " + rd + " to expand " + glob + ": " + lv.Reason}
				}
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			hidden := seg[0] == '.' || seg[0] == '[' || strings.HasPrefix(seg, `\.`)
			names := make([]string, 0, len(entries)+2)
			if hidden {
				names = append(names, ".", "..")
			}
			for _, e := range entries {
				names = append(names, e.Name())
			}
			pat, ok := goPattern(seg)
			if !ok {
				return globCap(glob, op, "uses a bracket form the gate does not expand ([[:class:]], [=c=], [.c.])")
			}
			for _, name := range names {
				if name[0] == '.' && !hidden {
					continue
				}
				ok, err := path.Match(pat, name)
				if err != nil {
					return globCap(glob, op, "it is not a pattern the gate understands: "+err.Error())
				}
				if ok {
					if next = append(next, path.Join(m, name)); len(next) > maxGlobMatches {
						return globCap(glob, op, fmt.Sprintf("matches more than %d names", maxGlobMatches))
					}
				}
			}
		}
		cur = next
		if len(cur) == 0 {
			return nil
		}
	}
	if namesOnly && !recursive {
		return nil // the program gets names; it reads none of the files
	}
	var worst *Verdict
	for _, m := range cur {
		p := m
		if start == "/" {
			p = "/" + m
		}
		v, err := j.c.DecidePathAt(base, p, op)
		if err != nil {
			continue // matched, then vanished
		}
		if v.Decision == Allow && recursive {
			v = j.subtree(v.Path, op, glob, namesOnly, v)
		} else if v.Decision == Allow {
			v = j.linksInfo(v.Path, nil, op, v)
		}
		if worst == nil || v.Decision.Stricter(worst.Decision) {
			worst = v
		}
	}
	return worst
}

// goPattern turns one segment of a shell glob into a path.Match pattern:
// "[!...]" is "[^...]". Character classes and the other POSIX bracket
// forms are not understood (false).
func goPattern(seg string) (string, bool) {
	if strings.Contains(seg, "[[:") || strings.Contains(seg, "[=") || strings.Contains(seg, "[.") {
		return "", false
	}
	var b strings.Builder
	in := false
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c == '\\' && i+1 < len(seg):
			b.WriteByte(c)
			i++
			b.WriteByte(seg[i])
			continue
		case c == '[' && !in:
			in = true
			b.WriteByte(c)
			if i+1 < len(seg) && seg[i+1] == '!' {
				b.WriteByte('^')
				i++
			}
			continue
		case c == ']' && in:
			in = false
		case c == ':' && in:
			return "", false
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

func globCap(glob string, op Op, why string) *Verdict {
	return &Verdict{Decision: Ask, Op: op, Rule: "gate: glob", Path: glob,
		Reason: "the glob " + glob + " " + why + "; name the files instead"}
}

// workTreeTop returns the nearest directory at or above dir that holds a
// .git entry (the work tree git acts on), or dir itself when none does.
func workTreeTop(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == "/" || d == "." || d == "" {
			return dir
		}
	}
}

// exists reports whether a file named p (relative to base) exists.
func exists(base, p string) bool {
	if !path.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	_, err := os.Lstat(p)
	return err == nil
}

// subtree judges a recursive op on the tree under abs (already allowed
// itself): every entry is judged (only directories when namesOnly: a
// program that lists names reads no file), without following symbolic links (each
// link's target is judged instead), and the first that is not allowed
// makes the claim Ask, naming it. A tree larger than maxTreeEntries is
// asked.
func (j *claimJudge) subtree(abs string, op Op, arg string, namesOnly bool, v *Verdict) *Verdict {
	fi, err := os.Lstat(abs)
	if err != nil || !fi.IsDir() {
		if op == Read {
			return j.links(abs, v)
		}
		return v
	}
	n := 0
	var hit *Verdict
	walkErr := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxTreeEntries {
			hit = &Verdict{Decision: Ask, Op: op, Rule: "gate: recursive", Path: abs,
				Reason: fmt.Sprintf("%s recursively covers more than %d files, too many to check; name the files or directories instead", arg, maxTreeEntries)}
			return fs.SkipAll
		}
		if namesOnly && !d.IsDir() {
			return nil // its name is in a listing already judged
		}
		target := p
		if d.Type()&fs.ModeSymlink != 0 {
			if r, err := j.c.Resolve("", p); err == nil {
				target = r
			}
		}
		ev := j.c.DecideResolved(target, op)
		if ev.Decision == Allow && op == Read && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				if _, nlink, ok := linkInfo(fi); ok && nlink > 1 {
					ev = j.links(target, ev)
				}
			}
		}
		if ev.Decision != Allow {
			hit = &Verdict{Decision: Ask, Op: op, Rule: ev.Rule, Path: abs,
				Reason: fmt.Sprintf("%s would recursively %s %s, which the policy does not allow (%s: %s)", arg, op, target, ev.Rule, ev.Reason)}
			return fs.SkipAll
		}
		return nil
	})
	if walkErr != nil && hit == nil {
		return &Verdict{Decision: Ask, Op: op, Rule: "gate: recursive", Path: abs, Reason: "the tree under " + arg + " cannot be walked: " + walkErr.Error()}
	}
	if hit != nil {
		return hit
	}
	return v
}

// links judges a read (linksInfo: a read or a write) of the existing
// regular file abs with more than one name: every other name in the root
// must allow the op, and all of its
// names must be found there — names elsewhere cannot be checked, so such a
// file is asked.
func (j *claimJudge) links(abs string, v *Verdict) *Verdict {
	return j.linksInfo(abs, nil, Read, v)
}

// linksInfo is links with the file's information when the caller has it
// (from an lstat of a regular file).
func (j *claimJudge) linksInfo(abs string, fi fs.FileInfo, op Op, v *Verdict) *Verdict {
	if fi == nil {
		var err error
		if fi, err = os.Stat(abs); err != nil {
			return v
		}
	}
	key, nlink, ok := linkInfo(fi)
	if !ok || nlink < 2 {
		return v
	}
	names, complete := j.rootNames(key)
	for _, n := range names {
		if nv := j.c.DecideResolved(n, op); nv.Decision != Allow {
			return &Verdict{Decision: nv.Decision, Op: op, Rule: nv.Rule, Path: abs,
				Reason: fmt.Sprintf("the file is another name (a hard link) of %s, which may not be %s (%s)", n, opPast(op), nv.Reason)}
		}
	}
	if !complete || uint64(len(names)) < nlink {
		return &Verdict{Decision: Ask, Op: op, Rule: "gate: hard link", Path: abs,
			Reason: fmt.Sprintf("the file has %d names, not all of them in the root, and the gate cannot check the others", nlink)}
	}
	return v
}

func opPast(op Op) string {
	if op == Write {
		return "written"
	}
	return "read"
}

// fileKey identifies a file.
type fileKey struct{ dev, ino uint64 }

// rootNames returns the names in the root of the file (dev, ino), from an
// index of the root's multiply linked files built once per command, and
// whether that index is complete.
func (j *claimJudge) rootNames(key fileKey) ([]string, bool) {
	if j.linkIndex == nil {
		j.linkIndex = map[fileKey][]string{}
		n := 0
		j.linkComplete = filepath.WalkDir(j.c.Root(), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if n++; n > maxTreeEntries {
				return fs.SkipAll
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			if k, nlink, ok := linkInfo(fi); ok && nlink > 1 {
				j.linkIndex[k] = append(j.linkIndex[k], p)
			}
			return nil
		}) == nil && n <= maxTreeEntries
	}
	return j.linkIndex[key], j.linkComplete
}

func unescapeGlob(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}
