// Package shellscan is the pure syntax walk behind policy's command gate.
//
// Scan parses a command with mvdan.cc/sh/v3/syntax and returns every simple
// command in it as a Segment — with its literal words after quote removal,
// or the reason they cannot be known — and every path the command names as
// a Claim, with the operation, where the path came from and the directory
// it resolves against. It never decides anything: package policy judges
// the result (and touches the file system for candidates, globs, trees and
// links).
//
// # Dialects
//
// The command runs under /bin/sh: dash on Debian, bash or busybox ash
// elsewhere. Scan parses it as bash and as POSIX sh and walks both
// readings; bash-only syntax POSIX sh cannot parse becomes a Dynamic
// segment, so the gate asks.
//
// # Segments
//
// Every simple command anywhere in the tree is a segment: lists, pipelines,
// subshells, groups, if/for/while/until/case, function bodies, command and
// process substitutions (also inside arithmetic, tests, assignments,
// redirections and here-documents), `sh -c STRING`, `eval STRING`, alias
// values, trap actions, find -exec commands, xargs commands and the
// command-valued environment variables (GIT_SSH_COMMAND, PAGER, ...).
// Wrappers (env, command, builtin, exec, nohup, nice, time, timeout,
// stdbuf, setsid, ionice, xargs, busybox, sudo, doas) are unwrapped; a
// segment carries one Form per layer so that rules can judge each.
//
// # What is not understood
//
// The tables that make a segment opaque or dynamic are in one place each:
// programs.go (program-running options and subcommands, programs that
// always run other code, file-list options, link makers, makefiles),
// git.go (known git subcommands, options that run programs or write),
// writer.go (writers, environment variables), recursive.go (recursive
// readers and deleters) and audit.go (arithmetic and subscripts on
// variables, quotes inside ${...}, here-documents joined by backslash,
// braces around ~, namerefs, printf -v into HOME/PWD/CDPATH/PS4,
// aliases). Options are matched as getopt_long reads them (opts.go).
//
// # Words
//
// Quote removal, backslash escapes and $'...' ANSI-C decoding are applied
// before matching, so "r"m, \rm and $'\x72m' are all the word "rm". Brace
// expansion of arguments is performed (up to 64 words); in the command name
// it makes the name dynamic. $"..." (locale translation), parameter
// expansion other than $HOME, and command, arithmetic and process
// substitution make a word Dynamic; unquoted glob characters make it a Glob.
//
// # Claims
//
// Redirect targets, every operand and option value (a literal that does
// not look like a path is a Candidate, judged when such a file exists; a
// Dynamic one is an unresolved Operand, except for programs that never
// open operands), the operands of known writers, the directories a glob
// lists, and the trees of recursive programs (Recursive, NamesOnly for
// listers) are claims. "~" and $HOME are expanded with Options.Home; cd,
// pushd and popd are tracked as a set of possible directories through
// lists, conditionals, loops and function calls; a glob claims the
// directory it is rooted in (Claim.Path) and carries its pattern
// (Claim.Glob); a for loop's variable over known items claims the items.
package shellscan

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Default caps.
const (
	DefaultMaxLen   = 256 << 10
	DefaultMaxDepth = 64
	// maxSteps bounds the statements walked in total (function re-walks,
	// loops, recursion), so no input makes the walk slow.
	maxSteps = 20000
	// maxDirs bounds the possible working directories tracked at once.
	maxDirs = 8
)

// Op is the operation a claim makes on its path.
type Op uint8

const (
	// Read covers reading, listing and executing.
	Read Op = iota + 1
	// Write covers creating, modifying and deleting.
	Write
)

// String returns "read" or "write".
func (o Op) String() string {
	if o == Write {
		return "write"
	}
	return "read"
}

// WordKind says how much of a word is known before the command runs.
type WordKind uint8

const (
	// Literal words are fully known.
	Literal WordKind = iota
	// Glob words contain unquoted glob characters; the shell replaces them
	// with matching file names, if any.
	Glob
	// Dynamic words depend on run-time values.
	Dynamic
)

// Word is one word of a segment.
type Word struct {
	// Value is the word after quote removal (Literal), with its glob
	// characters (Glob), or as written (Dynamic).
	Value string
	Kind  WordKind
	// Pattern is the glob pattern of a Glob word, quoted metacharacters
	// escaped with a backslash; "" when it cannot be expressed (extglob).
	Pattern string
}

// Form is one way of reading a segment's words: with a wrapper or without.
type Form struct {
	Words []Word
	// Wrapper marks a form that keeps an ordinary wrapper (env, nohup,
	// timeout, ...): only rules that name the wrapper judge it; the default
	// does not apply. Forms of privileged wrappers (sudo, doas) and of
	// path-named wrappers are judged in full.
	Wrapper bool
	// OpenTail reports that more words are appended at run time (xargs).
	OpenTail bool
}

// Segment is one simple command.
type Segment struct {
	// Text is the segment as written.
	Text string
	// Forms lists the readings to judge, outermost wrapper first; the last
	// is the real command. Empty when the command name is not known.
	Forms []Form
	// Dynamic says why the command cannot be known before it runs: a
	// non-literal command name, a parse error, an exceeded cap. A dynamic
	// segment is never allowed.
	Dynamic string
	// Opaque says why the segment runs code the gate cannot read (python
	// -c, sh script.sh, awk programs, ...).
	Opaque string
	// Depth is the nesting depth of recursive parses (sh -c, eval).
	Depth int
}

// Words returns the words of the real command (the last form), or nil.
func (s *Segment) Words() []Word {
	if len(s.Forms) == 0 {
		return nil
	}
	return s.Forms[len(s.Forms)-1].Words
}

// Claim is a path a command names, with the operation it makes.
type Claim struct {
	// Arg is the word as written.
	Arg string
	// Path is the path with "~" and $HOME expanded; for a glob, the
	// directory the glob is rooted in. Relative paths resolve against Dir.
	Path string
	// Glob is the whole glob pattern (quoted metacharacters escaped), when
	// the claim is a glob.
	Glob string
	Op   Op
	// Source says where the claim comes from: "redirect", "argument",
	// "writer argument", "cd", "command", "script", "option".
	Source string
	// Dir is the directory a relative Path resolves against: "" for the
	// command's working directory, otherwise an absolute path or one
	// relative to that working directory (after cd). It is written as the
	// cd arguments were (not cleaned), so that a caller can resolve it both
	// physically and logically.
	Dir string
	// Unresolved says why Path cannot be known; such a claim must never be
	// allowed.
	Unresolved string
	// Candidate marks an operand that does not look like a path (no "/",
	// ".", "~"): it is judged only when a file of that name exists.
	Candidate bool
	// Recursive marks a claim on the whole tree under Path (grep -r, find,
	// cp -r, rm -r, git add -A, ...).
	Recursive bool
	// WorkTree marks a recursive claim on the whole git work tree that
	// contains Path (git add -A, stash -u and clean act on all of it
	// wherever git runs): the judge walks from the nearest directory
	// above Path that holds .git.
	WorkTree bool
	// NamesOnly marks a recursive read that lists names (find, tree, du,
	// ls -R) without reading any file's contents: only the directories
	// it lists are judged.
	NamesOnly bool
	// Operand marks a claim on a word whose value is only known at run
	// time (a variable, a command substitution), judged as unresolved;
	// Unresolved says why.
	Operand bool
	// NewRepository marks git init's write of DIR/.git/config: when
	// DIR/.git does not exist, git creates a new repository, which the
	// judge takes as a write of DIR/.git (a new git directory, whose
	// config and hooks the executor's guard sanitizes after the
	// command); when it exists (git init again), as the write of its
	// config.
	NewRepository bool
}

// Options configures Scan.
type Options struct {
	// Home expands "~" and $HOME; "" means unknown, and then such paths are
	// unresolved claims.
	Home string
	// MaxLen caps the command length in bytes (0: DefaultMaxLen).
	MaxLen int
	// MaxDepth caps syntactic nesting and recursive parses (0:
	// DefaultMaxDepth).
	MaxDepth int
}

// Result is what Scan found.
type Result struct {
	Segments []Segment
	Claims   []Claim
}

var (
	parsers = sync.Pool{New: func() any {
		return syntax.NewParser(syntax.Variant(syntax.LangBash))
	}}
	posixParsers = sync.Pool{New: func() any {
		return syntax.NewParser(syntax.Variant(syntax.LangPOSIX))
	}}
)

// Scan parses src and returns its segments and claims. Input that cannot be
// parsed, or exceeds a cap, yields a Dynamic segment saying why.
func Scan(src string, opts Options) *Result {
	if opts.MaxLen <= 0 {
		opts.MaxLen = DefaultMaxLen
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	w := &walker{opts: opts, res: &Result{Segments: make([]Segment, 0, 4), Claims: make([]Claim, 0, 4)}}
	if len(src) > opts.MaxLen {
		w.dynamic(ctx{}, src[:64]+"...", fmt.Sprintf("command is %d bytes, longer than the %d-byte cap", len(src), opts.MaxLen))
		return w.res
	}
	st := &cwdState{dirs: []string{""}}
	w.source(ctx{depth: 0}, src, st, "")
	w.res.Segments = dedupeSegments(w.res.Segments)
	return w.res
}

// dedupeSegments drops segments equal to an earlier one: the bash and the
// POSIX reading of a command mostly agree.
func dedupeSegments(segs []Segment) []Segment {
	if len(segs) < 2 {
		return segs
	}
	seen := make(map[string]bool, len(segs))
	out := segs[:0]
	var b strings.Builder
	for _, s := range segs {
		b.Reset()
		b.WriteString(s.Text)
		b.WriteByte(0)
		b.WriteString(s.Dynamic)
		b.WriteByte(0)
		b.WriteString(s.Opaque)
		b.WriteByte(byte(s.Depth))
		for _, f := range s.Forms {
			b.WriteByte(0)
			if f.Wrapper {
				b.WriteByte('w')
			}
			if f.OpenTail {
				b.WriteByte('t')
			}
			for _, w := range f.Words {
				b.WriteByte(1)
				b.WriteByte(byte(w.Kind))
				b.WriteString(w.Value)
				b.WriteByte(2)
				b.WriteString(w.Pattern)
			}
		}
		if k := b.String(); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

// ctx is the source being walked and the nesting depth.
type ctx struct {
	src   string
	depth int
}

func (c ctx) text(n syntax.Node) string {
	s, e := n.Pos().Offset(), n.End().Offset()
	if s <= e && e <= uint(len(c.src)) {
		return c.src[s:e]
	}
	return ""
}

func (c ctx) deeper() ctx { return ctx{src: c.src, depth: c.depth + 1} }

type walker struct {
	opts Options
	res  *Result

	seenClaims map[Claim]struct{}
	// quiet > 0 suppresses segments (re-walks for claims and directories).
	quiet int
	steps int
	// curName is the program whose operands are being claimed.
	curName string
	// candidateMode makes claim record candidates, recursiveMode
	// recursive claims.
	candidateMode, recursiveMode, namesMode bool
	// newRepository marks the claims made meanwhile as
	// Claim.NewRepository.
	newRepository bool
	// workTreeMode makes recursive claims cover the whole git work tree
	// around the path.
	workTreeMode bool
	// findStarts are the trees of the find whose -exec command is being
	// walked, claimed for its {} (with the directory state findCst).
	findStarts []xword
	findCst    *cwdState
	aborted    bool
	capHit     bool

	shellState
}

func (s shellState) clone() shellState {
	out := s
	out.funcs, out.funcSrc, out.active = nil, nil, nil
	if s.funcs != nil {
		out.funcs, out.funcSrc = make(map[string]*syntax.Stmt, len(s.funcs)), make(map[string]string, len(s.funcSrc))
		for k, v := range s.funcs {
			out.funcs[k] = v
		}
		for k, v := range s.funcSrc {
			out.funcSrc[k] = v
		}
	}
	if s.written != nil {
		out.written = make(map[string]bool, len(s.written))
		for k, v := range s.written {
			out.written[k] = v
		}
	}
	if s.active != nil {
		out.active = make(map[string]bool, len(s.active))
		for k, v := range s.active {
			out.active[k] = v
		}
	}
	return out
}

// loopVar is a for loop's variable over known items.
type loopVar struct {
	items []xword
	st    *cwdState
}

// loopItems returns the items of the loop variable x is exactly a
// reference to ($f, ${f}, "$f", "${f}").
func (w *walker) loopItems(x *xword) ([]xword, *cwdState, bool) {
	if x.Kind != Dynamic || len(w.loopVars) == 0 {
		return nil, nil, false
	}
	r := strings.TrimSuffix(strings.TrimPrefix(x.raw, `"`), `"`)
	if len(r) != len(x.raw)-2 && r != x.raw {
		return nil, nil, false
	}
	name, ok := strings.CutPrefix(r, "$")
	if !ok {
		return nil, nil, false
	}
	if b, ok := strings.CutPrefix(name, "{"); ok {
		name, ok = strings.CutSuffix(b, "}")
		if !ok {
			return nil, nil, false
		}
	}
	lv, ok := w.loopVars[name]
	if !ok || !isName(name) {
		return nil, nil, false
	}
	return lv.items, lv.st, true
}

// shellState is what a walk learns about the shell's state: functions,
// and variables that change how later words resolve.
type shellState struct {
	funcs   map[string]*syntax.Stmt
	funcSrc map[string]string
	active  map[string]bool

	homeChanged string
	pwdChanged  string
	cdpath      bool
	loopVars    map[string]loopVar

	// written are the paths (cleaned, as written) this command line
	// writes, for programs run later in it; linkMade names a segment
	// that may create links.
	written  map[string]bool
	linkMade string
}

// dynamic records a dynamic segment.
func (w *walker) dynamic(c ctx, text, reason string) {
	if w.quiet > 0 {
		return
	}
	w.res.Segments = append(w.res.Segments, Segment{Text: text, Dynamic: reason, Depth: c.depth})
}

// source parses src and walks it at depth c.depth. what names the origin
// for error messages ("" at the top).
func (w *walker) source(c ctx, src string, st *cwdState, what string) {
	if strings.IndexByte(src, 0) >= 0 {
		w.dynamic(c, src, "command contains a NUL byte")
		return
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		reason := "cannot parse command: " + err.Error()
		if what != "" {
			reason = "cannot parse " + what + ": " + err.Error()
		}
		w.dynamic(c, src, reason)
		return
	}
	// The command runs under /bin/sh, which is dash on Debian and bash
	// or busybox ash elsewhere: it is judged as every one of them reads
	// it. Bash-only syntax that POSIX sh cannot parse is read by dash as
	// something else (`cmd &>f` is `cmd &` and `>f`); what POSIX sh
	// parses differently ($'...' is a "$" and a quoted string to dash)
	// is walked a second time, in the POSIX reading.
	w.audit(ctx{src: src, depth: c.depth}, f)
	if needsPOSIX(src) {
		pp := posixParsers.Get().(*syntax.Parser)
		pf, perr := pp.Parse(strings.NewReader(src), "")
		posixParsers.Put(pp)
		if perr != nil {
			w.dynamic(c, src, "bash-only syntax, which /bin/sh (dash, a POSIX shell) reads differently: "+perr.Error()+
				"; write the command in POSIX sh syntax")
			w.stmts(ctx{src: src, depth: c.depth}, f.Stmts, st)
			return
		}
		if readsAlike(src) {
			w.stmts(ctx{src: src, depth: c.depth}, f.Stmts, st)
			return
		}
		pst := st.clone()
		saved := w.shellState.clone()
		w.stmts(ctx{src: src, depth: c.depth}, f.Stmts, st)
		after := w.shellState
		w.shellState = saved
		w.stmts(ctx{src: src, depth: c.depth}, pf.Stmts, pst)
		w.shellState = after
		st.union(pst)
		return
	}
	w.stmts(ctx{src: src, depth: c.depth}, f.Stmts, st)
}

// needsPOSIX reports whether src contains anything bash and POSIX sh may
// read differently: $'...', $"...", bash-only operators and keywords,
// brace expansion, arrays, [[ ]], (( )) and ${...} forms. A string
// without any of these characters parses the same in both.
func needsPOSIX(src string) bool {
	return strings.ContainsAny(src, "$&|<>{}[]()=") || strings.Contains(src, "function") ||
		strings.Contains(src, "select") || strings.Contains(src, "coproc")
}

// readsAlike reports a command that both parsers accepted and that has
// none of the constructs they read differently — $'...', $"...", [[, ((
// and the bash keywords that are plain commands to POSIX sh — so one walk
// covers both readings.
func readsAlike(src string) bool {
	for _, s := range []string{"$'", "$\"", "[[", "((", "declare", "local", "export", "readonly", "typeset",
		"let", "time", "coproc", "select", "function"} {
		if strings.Contains(src, s) {
			return false
		}
	}
	return true
}

func (w *walker) tooDeep(c ctx, n syntax.Node) bool {
	if c.depth <= w.opts.MaxDepth {
		return false
	}
	if !w.capHit {
		w.capHit = true
		text := c.text(n)
		if text == "" {
			text = c.src // a node of a string parsed for eval or sh -c
		}
		w.res.Segments = append(w.res.Segments, Segment{Text: text, Depth: c.depth,
			Dynamic: fmt.Sprintf("command nests deeper than %d levels", w.opts.MaxDepth)})
	}
	return true
}

func (w *walker) step(c ctx, n syntax.Node) bool {
	if w.aborted {
		return false
	}
	w.steps++
	if w.steps > maxSteps {
		w.aborted = true
		text := c.text(n)
		if text == "" {
			text = c.src // a node of a string parsed for eval or sh -c
		}
		w.res.Segments = append(w.res.Segments, Segment{Text: text, Depth: c.depth,
			Dynamic: fmt.Sprintf("command needs more than %d steps to analyse", maxSteps)})
		return false
	}
	return !w.tooDeep(c, n)
}

func (w *walker) stmts(c ctx, list []*syntax.Stmt, st *cwdState) {
	for _, s := range list {
		w.stmt(c, s, st)
	}
}

func (w *walker) stmt(c ctx, s *syntax.Stmt, st *cwdState) {
	if !w.step(c, s) {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		st = st.clone()
	}
	for _, r := range s.Redirs {
		w.redirect(c, r, st)
	}
	switch cmd := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		w.call(c, cmd, s.Redirs, st)
	case *syntax.IfClause:
		w.ifClause(c.deeper(), cmd, st)
	case *syntax.WhileClause:
		w.loop(c.deeper(), st, func(st *cwdState) {
			w.stmts(c.deeper(), cmd.Cond, st)
			w.stmts(c.deeper(), cmd.Do, st)
		})
	case *syntax.ForClause:
		d := c.deeper()
		switch l := cmd.Loop.(type) {
		case *syntax.WordIter:
			w.assigned(l.Name.Value)
			var items []xword
			known := len(l.Items) > 0
			for _, it := range l.Items {
				for _, x := range w.expandWord(d, it, st) {
					if looksLikePath(&x) || x.Kind == Glob {
						w.claim(&x, Read, "argument", st)
					}
					if x.Kind == Dynamic {
						known = false
					}
					items = append(items, x)
				}
			}
			if known {
				// "$f" in the body is one of the items: claims on it
				// are claims on each item, where the loop began.
				if w.loopVars == nil {
					w.loopVars = map[string]loopVar{}
				}
				w.loopVars[l.Name.Value] = loopVar{items: items, st: st.clone()}
				defer delete(w.loopVars, l.Name.Value)
			}
		case *syntax.CStyleLoop:
			w.arith(d, l, st)
		}
		w.loop(d, st, func(st *cwdState) { w.stmts(d, cmd.Do, st) })
	case *syntax.CaseClause:
		d := c.deeper()
		w.nested(d, cmd.Word, st)
		out := st.clone()
		for _, it := range cmd.Items {
			for _, p := range it.Patterns {
				w.nested(d, p, st)
			}
			br := st.clone()
			w.stmts(d, it.Stmts, br)
			out.union(br)
		}
		st.set(out)
	case *syntax.Block:
		w.stmts(c.deeper(), cmd.Stmts, st)
	case *syntax.Subshell:
		w.stmts(c.deeper(), cmd.Stmts, st.clone())
	case *syntax.BinaryCmd:
		d := c.deeper()
		switch cmd.Op {
		case syntax.AndStmt, syntax.OrStmt:
			w.stmt(d, cmd.X, st)
			y := st.clone()
			w.stmt(d, cmd.Y, y)
			st.union(y)
		default: // pipes: each side in a subshell, the last one maybe not (lastpipe)
			w.stmt(d, cmd.X, st.clone())
			y := st.clone()
			w.stmt(d, cmd.Y, y)
			st.union(y)
		}
	case *syntax.FuncDecl:
		d := c.deeper()
		if w.funcs == nil {
			w.funcs, w.funcSrc = map[string]*syntax.Stmt{}, map[string]string{}
		}
		if cmd.Name != nil {
			w.funcs[cmd.Name.Value] = cmd.Body
			w.funcSrc[cmd.Name.Value] = c.src
		}
		for _, n := range cmd.Names {
			w.funcs[n.Value] = cmd.Body
			w.funcSrc[n.Value] = c.src
		}
		w.stmt(d, cmd.Body, st.clone())
	case *syntax.ArithmCmd:
		w.arith(c.deeper(), cmd, st)
	case *syntax.TestClause:
		w.testClause(c.deeper(), cmd.X, st)
	case *syntax.DeclClause:
		w.decl(c, cmd, st)
	case *syntax.LetClause:
		w.arith(c.deeper(), cmd, st)
	case *syntax.TimeClause:
		if cmd.Stmt != nil {
			// Bash's time keyword accepts "--" before the command
			// (time -p -- rm x runs rm): it is not the command name.
			if ce, ok := cmd.Stmt.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 1 && ce.Args[0].Lit() == "--" {
				ce.Args = ce.Args[1:]
			}
			w.stmt(c.deeper(), cmd.Stmt, st)
		}
	case *syntax.CoprocClause:
		w.stmt(c.deeper(), cmd.Stmt, st.clone())
	case *syntax.TestDecl:
		w.stmt(c.deeper(), cmd.Body, st.clone())
	default:
		w.dynamic(c, c.text(s), fmt.Sprintf("unsupported shell construct %T", cmd))
	}
}

func (w *walker) ifClause(c ctx, ic *syntax.IfClause, st *cwdState) {
	w.stmts(c, ic.Cond, st)
	then := st.clone()
	w.stmts(c, ic.Then, then)
	if ic.Else != nil {
		if ic.Else.ThenPos.IsValid() { // elif
			w.ifClause(c, ic.Else, st)
		} else {
			w.stmts(c, ic.Else.Then, st)
		}
	}
	st.union(then)
}

// loop walks body until the set of possible directories is stable (at most
// three passes); segments are recorded on the first pass only.
func (w *walker) loop(c ctx, st *cwdState, body func(*cwdState)) {
	for pass := 0; pass < 3; pass++ {
		if pass > 0 {
			w.quiet++
		}
		next := st.clone()
		body(next)
		if pass > 0 {
			w.quiet--
		}
		before := st.clone()
		st.union(next)
		if st.equal(before) {
			return
		}
	}
	if st.unknown == "" {
		st.unknown = "the working directory changes in a loop"
	}
}

// redirect records the claim of a redirection and walks its words.
func (w *walker) redirect(c ctx, r *syntax.Redirect, st *cwdState) {
	if r.Hdoc != nil {
		w.nested(c, r.Hdoc, st)
	}
	if r.Word == nil {
		return
	}
	var op Op
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		op = Write
	case syntax.RdrIn:
		op = Read
	case syntax.DplOut, syntax.DplIn:
		// N>&M and >&- duplicate or close descriptors; bash's ">&file" (a
		// word that is not a number) redirects stdout and stderr to file.
		lit := r.Word.Lit()
		if lit == "-" || isNumber(strings.TrimSuffix(lit, "-")) {
			return
		}
		op = Write
		if r.Op == syntax.DplIn {
			op = Read
		}
	default: // here-documents and here-strings are not paths
		w.nested(c, r.Word, st)
		return
	}
	for _, x := range w.expandWord(c, r.Word, st) {
		if x.procSubst {
			continue
		}
		if x.Kind == Literal && isPseudoDevice(x.path) {
			continue
		}
		w.claim(&x, op, "redirect", st)
	}
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// nested walks the command and process substitutions inside a node (a
// word, an arithmetic or test expression) as segments in a subshell.
func (w *walker) nested(c ctx, n syntax.Node, st *cwdState) {
	if n == nil {
		return
	}
	if wd, ok := n.(*syntax.Word); ok && flatWord(wd) {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(c.deeper(), n.Stmts, st.clone())
			return false
		case *syntax.ProcSubst:
			w.stmts(c.deeper(), n.Stmts, st.clone())
			return false
		}
		return true
	})
}

// flatWord reports a word without nested nodes that could hold commands.
func flatWord(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}

// arith walks an arithmetic node. Besides substitutions, bash evaluates
// array subscripts in quoted arithmetic strings, so a literal containing
// "$(" or "`" there is dynamic.
func (w *walker) arith(c ctx, n syntax.Node, st *cwdState) {
	w.nested(c, n, st)
	syntax.Walk(n, func(n syntax.Node) bool {
		if wd, ok := n.(*syntax.Word); ok {
			x := w.evalParts(wd.Parts, c.text(wd))
			if x.Kind != Dynamic && (strings.Contains(x.Value, "$(") || strings.Contains(x.Value, "`")) {
				w.dynamic(c, c.text(wd), "arithmetic evaluates a quoted command substitution")
			}
			return false
		}
		return true
	})
}

// testClause walks [[ ... ]]: substitutions, and file-test operands as
// read claims.
func (w *walker) testClause(c ctx, x syntax.TestExpr, st *cwdState) {
	w.arith(c, x, st)
	syntax.Walk(x, func(n syntax.Node) bool {
		if u, ok := n.(*syntax.UnaryTest); ok {
			if wd, ok := u.X.(*syntax.Word); ok && isFileTest(u.Op) {
				for _, xw := range w.evalWordNoNest(c, wd) {
					if looksLikePath(&xw) || xw.Kind == Literal {
						w.claim(&xw, Read, "argument", st)
					}
				}
			}
		}
		return true
	})
}

func isFileTest(op syntax.UnTestOperator) bool {
	switch op {
	case syntax.TsExists, syntax.TsRegFile, syntax.TsDirect, syntax.TsCharSp, syntax.TsBlckSp,
		syntax.TsNmPipe, syntax.TsSocket, syntax.TsSmbLink, syntax.TsSticky, syntax.TsGIDSet,
		syntax.TsUIDSet, syntax.TsGrpOwn, syntax.TsUsrOwn, syntax.TsModif, syntax.TsRead,
		syntax.TsWrite, syntax.TsExec, syntax.TsNoEmpty:
		return true
	}
	return false
}

// evalWordNoNest evaluates a word whose substitutions were already walked.
func (w *walker) evalWordNoNest(c ctx, wd *syntax.Word) []xword {
	return w.expandOnly(c, wd)
}

// decl handles declare/export/local/readonly/typeset/nameref.
func (w *walker) decl(c ctx, d *syntax.DeclClause, st *cwdState) {
	words := []xword{{Word: Word{Value: d.Variant.Value}, raw: d.Variant.Value, path: d.Variant.Value}}
	opaque := ""
	for _, a := range d.Args {
		if r := w.assign(c, a, st); r != "" && opaque == "" {
			opaque = r
		}
		if a.Naked && a.Name == nil && a.Value != nil {
			words = append(words, w.expandOnly(c, a.Value)...)
			continue
		}
		txt := c.text(a)
		words = append(words, xword{Word: Word{Value: txt, Kind: Dynamic}, raw: txt, dyn: "assignment", path: txt})
	}
	seg := Segment{Text: c.text(d), Depth: c.depth, Opaque: opaque}
	seg.Forms = []Form{{Words: plainWords(words)}}
	w.emit(seg)
}

func (w *walker) emit(seg Segment) {
	if w.quiet > 0 {
		return
	}
	w.res.Segments = append(w.res.Segments, seg)
}

// call handles a simple command.
func (w *walker) call(c ctx, ce *syntax.CallExpr, redirs []*syntax.Redirect, st *cwdState) {
	opaque := ""
	for _, a := range ce.Assigns {
		if r := w.assign(c, a, st); r != "" && opaque == "" {
			opaque = r
		}
	}
	if len(ce.Args) == 0 {
		if opaque != "" && w.quiet == 0 {
			// PATH=. alone changes every later command.
			w.res.Segments = append(w.res.Segments, Segment{Text: c.text(ce), Opaque: opaque, Depth: c.depth})
		}
		return
	}
	words := make([]xword, 0, len(ce.Args))
	for i, a := range ce.Args {
		n := len(words)
		w.nested(c, a, st)
		words = w.expandInto(words, c, a)
		if i == 0 && (len(words) != 1 || words[0].brace) {
			raw := c.text(a)
			words = append(words[:n], xword{Word: Word{Value: raw, Kind: Dynamic}, raw: raw, dyn: "brace expansion", path: raw, unresolved: "brace expansion"})
		}
	}
	w.command(c, c.text(ce), words, redirs, st, opaque)
}

// assign walks an assignment's value and returns an opaque reason when the
// variable changes what later commands run.
func (w *walker) assign(c ctx, a *syntax.Assign, st *cwdState) string {
	if a.Value != nil {
		w.nested(c, a.Value, st)
	}
	if a.Array != nil {
		w.nested(c, a.Array, st)
	}
	if a.Index != nil {
		w.arith(c, a.Index, st)
	}
	if a.Name == nil {
		return ""
	}
	name := a.Name.Value
	w.assigned(name)
	if a.Value != nil {
		if kind, ok := envVars[name]; ok {
			x := w.evalParts(a.Value.Parts, c.text(a.Value))
			switch kind {
			case envCommand:
				if x.Kind != Literal {
					return name + " is set to a command the gate cannot read"
				}
				w.recurse(c, x.Value, st.clone(), name)
			case envPrompt:
				w.prompt(c, x, st)
			}
		}
	}
	return opaqueVar(name)
}

// assigned notes assignments that change how the gate expands words.
func (w *walker) assigned(name string) {
	delete(w.loopVars, name)
	switch name {
	case "HOME":
		w.homeChanged = "HOME is reassigned in this command"
	case "PWD":
		w.pwdChanged = "PWD is reassigned in this command"
	case "CDPATH":
		w.cdpath = true
	}
}

// prompt walks a prompt string (PS1, PS4, ...): its command substitutions
// run when the prompt is printed.
func (w *walker) prompt(c ctx, x xword, st *cwdState) {
	if x.Kind != Literal {
		return
	}
	if !strings.Contains(x.Value, "$(") && !strings.Contains(x.Value, "`") {
		return
	}
	p := parsers.Get().(*syntax.Parser)
	doc, err := p.Document(strings.NewReader(x.Value))
	parsers.Put(p)
	if err != nil {
		w.dynamic(c, x.Value, "cannot parse prompt string: "+err.Error())
		return
	}
	w.nested(ctx{src: x.Value, depth: c.depth + 1}, doc, st.clone())
}

// recurse parses code found in a string (sh -c, eval, ...) and walks it
// with st (shared for eval, a copy otherwise).
func (w *walker) recurse(c ctx, code string, st *cwdState, what string) {
	d := c.deeper()
	if w.tooDeep(d, &syntax.Lit{}) {
		return
	}
	w.source(d, code, st, what+" string")
}

// claim records a path claim against every possible directory.
func (w *walker) claim(x *xword, op Op, source string, st *cwdState) {
	if items, lst, ok := w.loopItems(x); ok {
		for i := range items {
			w.claim(&items[i], op, source, lst)
		}
		return
	}
	if x.found && w.findStarts != nil {
		starts, cst := w.findStarts, w.findCst
		w.findStarts = nil
		saved := w.recursiveMode
		w.recursiveMode = true
		for i := range starts {
			w.claim(&starts[i], op, source, cst)
		}
		w.recursiveMode, w.findStarts = saved, starts
		return
	}
	if op == Write && x.Kind != Dynamic {
		if w.written == nil {
			w.written = map[string]bool{}
		}
		w.written[path.Clean(x.path)] = true
	}
	cl := Claim{Arg: x.raw, Path: x.path, Op: op, Source: source, Candidate: w.candidateMode, Recursive: w.recursiveMode,
		NamesOnly: w.namesMode && op == Read && (w.recursiveMode || x.Kind == Glob), WorkTree: w.workTreeMode,
		NewRepository: w.newRepository}
	if x.Kind == Literal && isPseudoDevice(x.path) {
		return
	}
	if x.Kind != Dynamic && path.IsAbs(x.path) && procPath(x.path) {
		cl.Unresolved = x.path + " names a file through /proc or a descriptor, which the gate cannot resolve as the command will"
		w.addClaim(cl)
		return
	}
	if x.unresolved != "" {
		cl.Path = x.raw
		cl.Unresolved = x.unresolved
		w.addClaim(cl)
		return
	}
	if x.Kind == Glob {
		cl.Glob = x.pathGlob
		cl.Path = globRoot(x.pathGlob, x.path)
	}
	if cl.Path == "" {
		cl.Path = "."
	}
	if path.IsAbs(cl.Path) {
		w.addClaim(cl)
		return
	}
	if st.unknown != "" {
		cl.Unresolved = st.unknown
		w.addClaim(cl)
		return
	}
	for _, d := range st.dirs {
		cl.Dir = d
		w.addClaim(cl)
	}
}

func (w *walker) addClaim(cl Claim) {
	if len(w.res.Claims) < 32 {
		for _, c := range w.res.Claims {
			if c == cl {
				return
			}
		}
		w.res.Claims = append(w.res.Claims, cl)
		return
	}
	if w.seenClaims == nil {
		w.seenClaims = make(map[Claim]struct{}, len(w.res.Claims))
		for _, c := range w.res.Claims {
			w.seenClaims[c] = struct{}{}
		}
	}
	if _, ok := w.seenClaims[cl]; ok {
		return
	}
	w.seenClaims[cl] = struct{}{}
	w.res.Claims = append(w.res.Claims, cl)
}

// globRoot returns the literal directory a glob pattern is rooted in.
func globRoot(pattern, value string) string {
	if pattern == "" {
		// extglob: cut at the first segment with a glob character.
		pattern = value
	}
	segs := strings.Split(pattern, "/")
	var root []string
	for _, s := range segs {
		if hasGlobMeta(s) {
			break
		}
		root = append(root, unescapeGlob(s))
	}
	r := strings.Join(root, "/")
	if r == "" {
		if strings.HasPrefix(pattern, "/") {
			return "/"
		}
		return "."
	}
	return r
}

func hasGlobMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[', '(', '|':
			return true
		}
	}
	return false
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

// cwdState is the set of directories the shell may be in.
type cwdState struct {
	// dirs are "" (the command's working directory) or paths (absolute, or
	// relative to it).
	dirs []string
	// unknown says why the directory cannot be known ("" when it can).
	unknown string
}

func (s *cwdState) clone() *cwdState {
	return &cwdState{dirs: append([]string(nil), s.dirs...), unknown: s.unknown}
}

func (s *cwdState) set(o *cwdState) { s.dirs, s.unknown = o.dirs, o.unknown }

func (s *cwdState) union(o *cwdState) {
	if s.unknown == "" {
		s.unknown = o.unknown
	}
	for _, d := range o.dirs {
		if !contains(s.dirs, d) {
			s.dirs = append(s.dirs, d)
		}
	}
	if len(s.dirs) > maxDirs && s.unknown == "" {
		s.unknown = "the working directory depends on too many branches"
	}
}

func (s *cwdState) equal(o *cwdState) bool {
	if s.unknown != o.unknown || len(s.dirs) != len(o.dirs) {
		return false
	}
	for _, d := range s.dirs {
		if !contains(o.dirs, d) {
			return false
		}
	}
	return true
}

// cd moves every possible directory to target.
// enter returns a copy of s moved into the directory word d (a wrapper's
// or program's -C); unknown, with why, when d is not a known path.
func (s *cwdState) enter(d *xword, why string) *cwdState {
	out := s.clone()
	if d.Kind != Literal || d.unresolved != "" {
		out.unknown = why
	} else {
		out.cd(d.path)
	}
	return out
}

func (s *cwdState) cd(target string) {
	if path.IsAbs(target) {
		s.dirs, s.unknown = []string{target}, ""
		return
	}
	if s.unknown != "" {
		return
	}
	for i, d := range s.dirs {
		if d == "" {
			s.dirs[i] = target
		} else {
			s.dirs[i] = strings.TrimSuffix(d, "/") + "/" + target
		}
	}
	// Deduplicate.
	var out []string
	for _, d := range s.dirs {
		if !contains(out, d) {
			out = append(out, d)
		}
	}
	s.dirs = out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func plainWords(xs []xword) []Word {
	out := make([]Word, len(xs))
	for i := range xs {
		out[i] = xs[i].Word
	}
	return out
}

// looksLikePath reports whether an argument names a path: it contains "/"
// or "." or starts with "~", and is neither a URL nor a pseudo-device.
func looksLikePath(x *xword) bool {
	if x.procSubst {
		return false
	}
	if x.Kind == Dynamic {
		return x.slash || x.tilde
	}
	v := x.path
	if v == "" || isPseudoDevice(v) {
		return false
	}
	return x.tilde || strings.ContainsAny(v, "/.")
}

// isPseudoDevice reports the device files that are never claims: the
// null, zero and random devices, the terminal, and the standard streams
// and descriptors themselves (/dev/fd/N, but not a path through one).
func isPseudoDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr",
		"/dev/tty", "/dev/random", "/dev/urandom":
		return true
	}
	if n, ok := strings.CutPrefix(p, "/dev/fd/"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		return true
	}
	return false
}

// procPath reports a path through /proc or /dev/fd (other than the
// pseudo-devices): another process's or descriptor's view of the file
// system (/proc/self/cwd/.env, /dev/fd/3/../x), which the gate cannot
// resolve the way the command will.
func procPath(p string) bool {
	for _, pre := range []string{"/proc/", "/dev/fd/", "/dev/std"} {
		if strings.HasPrefix(p, pre) && !isPseudoDevice(p) {
			return true
		}
	}
	p = path.Clean(p)
	return p == "/proc" || strings.HasPrefix(p, "/proc/") || p == "/dev/fd" ||
		strings.HasPrefix(p, "/dev/fd/") && !isPseudoDevice(p) ||
		p == "/dev/stdin" || p == "/dev/stdout" || p == "/dev/stderr" || strings.HasPrefix(p, "/dev/std")
}
