package shellscan

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxWrappers bounds how many wrapper layers are unwrapped.
const maxWrappers = 16

// command analyses one simple command given as words: it unwraps wrappers,
// records the segment, recurses into code it can read, flags code it cannot
// read and records path claims. st is the shell's directory state (cd
// changes it).
func (w *walker) command(c ctx, text string, words []xword, redirs []*syntax.Redirect, st *cwdState, opaque string) {
	seg := Segment{Text: text, Depth: c.depth, Opaque: opaque}
	idx := -1
	if w.quiet == 0 {
		idx = len(w.res.Segments)
		w.res.Segments = append(w.res.Segments, Segment{})
	}
	w.analyse(c, &seg, words, redirs, st)
	if idx >= 0 && idx < len(w.res.Segments) {
		w.res.Segments[idx] = seg
	}
}

func (s *Segment) opaque(reason string) {
	if s.Opaque == "" {
		s.Opaque = reason
	}
}

func (s *Segment) dynamic(reason string) {
	if s.Dynamic == "" {
		s.Dynamic = reason
	}
}

// addForms appends the form of words and, when the command name is a path,
// the form with its basename.
func (s *Segment) addForms(words []xword, wrapper, openTail bool) {
	f := Form{Words: plainWords(words), Wrapper: wrapper, OpenTail: openTail}
	s.Forms = append(s.Forms, f)
	if name := words[0].Value; strings.Contains(name, "/") && words[0].Kind == Literal {
		b := Form{Words: append([]Word(nil), f.Words...), Wrapper: wrapper, OpenTail: openTail}
		b.Words[0].Value = path.Base(name)
		s.Forms = append(s.Forms, b)
	}
}

func baseName(x *xword) string {
	if strings.Contains(x.Value, "/") {
		return path.Base(x.Value)
	}
	return x.Value
}

func (w *walker) analyse(c ctx, seg *Segment, words []xword, redirs []*syntax.Redirect, st *cwdState) {
	cur := words
	cst := st // directory state for this command's own claims
	openTail := false
	replace := ""
	for layer := 0; ; layer++ {
		name := &cur[0]
		if name.Kind != Literal {
			reason := name.dyn
			if name.Kind == Glob {
				reason = "glob"
			}
			seg.dynamic(fmt.Sprintf("command name %s is not a literal (%s)", name.raw, reason))
			seg.Forms = append(seg.Forms, Form{Words: plainWords(cur), OpenTail: openTail})
			w.genericClaims(cur[1:], cst, nil)
			return
		}
		if replace != "" && strings.Contains(name.Value, replace) {
			seg.dynamic("xargs replaces " + replace + " in the command name")
			seg.Forms = append(seg.Forms, Form{Words: plainWords(cur), OpenTail: openTail})
			return
		}
		isPath := strings.Contains(name.Value, "/")
		if isPath {
			w.claim(name, Read, "command", cst)
			if w.written[path.Clean(name.path)] {
				seg.dynamic("runs " + name.raw + ", a file this command line writes first")
			}
		}
		if script := scriptOf(baseName(name)); script != nil {
			for _, f := range script {
				if w.written[f] {
					seg.dynamic(baseName(name) + " reads " + f + ", which this command line writes first")
				}
			}
		}
		spec, ok := wrappers[baseName(name)]
		if !ok || layer >= maxWrappers {
			break
		}
		r := spec.parse(w, cur)
		n := len(seg.Forms)
		seg.addForms(cur, !spec.privileged && !isPath, openTail)
		if r.opaque != "" {
			seg.opaque(r.opaque)
		}
		for i := range r.reads {
			w.claim(&r.reads[i], Read, "option", cst)
		}
		for i := range r.writes {
			w.claim(&r.writes[i], Write, "writer argument", cst)
		}
		if r.dir != nil {
			w.claim(r.dir, Read, "cd", cst)
			cst = cst.enter(r.dir, "the command runs in "+r.dir.raw+", which the gate cannot know")
		}
		if r.split != nil {
			split, ok := w.splitString(r.split)
			if !ok {
				seg.dynamic(baseName(name) + " -S splits a string the gate cannot read")
				return
			}
			rest := append(split, cur[r.next:]...)
			cur = append([]xword(nil), rest...)
			if len(cur) == 0 {
				return
			}
			continue
		}
		if r.stop || r.next >= len(cur) {
			if baseName(name) == "xargs" && !r.stop {
				cur = []xword{{Word: Word{Value: "echo"}, raw: "echo", path: "echo"}}
				openTail = true
				continue
			}
			// The wrapper runs nothing else: it is the real command.
			for i := n; i < len(seg.Forms); i++ {
				seg.Forms[i].Wrapper = false
			}
			return
		}
		cur = cur[r.next:]
		if baseName(name) == "xargs" {
			openTail = true
			if r.replace != "" {
				replace = r.replace
			}
		}
		if replace != "" {
			cur = append([]xword(nil), cur...)
			for i := range cur {
				if cur[i].Kind != Dynamic && strings.Contains(cur[i].Value, replace) {
					cur[i].Kind, cur[i].dyn = Dynamic, "xargs replaces "+replace
					cur[i].unresolved = cur[i].dyn
				}
			}
		}
	}
	seg.addForms(cur, false, openTail)
	w.inner(c, seg, cur, redirs, st, cst)
	if openTail && !noFileOperands[baseName(&cur[0])] {
		w.addClaim(Claim{Arg: "xargs", Path: "xargs", Op: Read, Source: "argument", Operand: true,
			Unresolved: "xargs appends operands read from its input, only known at run time"})
	}
}

// setsExpansion reports set options that change expansion or what runs:
// anything but -e, -u, -x, -v, -o pipefail and their + forms, and -f
// (noglob), which only removes expansion.
func setsExpansion(args []xword) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Kind != Literal {
			return true
		}
		v := a.Value
		switch {
		case v == "--" || v == "-":
			return false
		case v == "-o" || v == "+o":
			if i+1 >= len(args) {
				return false
			}
			i++
			switch args[i].Value {
			case "pipefail", "errexit", "nounset", "xtrace", "verbose", "noglob", "noclobber":
			default:
				return true
			}
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			if strings.Trim(v[1:], "euxvfC") != "" {
				return true
			}
		default:
			return false // positional parameters
		}
	}
	return false
}

// splitString splits env -S's string into words with the shell's rules.
func (w *walker) splitString(x *xword) ([]xword, bool) {
	if x.Kind != Literal || strings.Contains(x.Value, `\`) {
		// env -S has escapes of its own (\_ is a space).
		return nil, false
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(x.Value), "")
	parsers.Put(p)
	if err != nil || len(f.Stmts) > 1 {
		return nil, false
	}
	if len(f.Stmts) == 0 {
		return nil, true
	}
	ce, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(f.Stmts[0].Redirs) > 0 {
		return nil, false
	}
	c := ctx{src: x.Value}
	var out []xword
	for _, a := range ce.Args {
		xs := w.expandOnly(c, a)
		for _, x := range xs {
			if x.Kind == Dynamic {
				return nil, false
			}
		}
		out = append(out, xs...)
	}
	return out, true
}

// inner handles the real command: recursion into readable code, opaque
// code, cd tracking and path claims.
func (w *walker) inner(c ctx, seg *Segment, cur []xword, redirs []*syntax.Redirect, st, cst *cwdState) {
	name := baseName(&cur[0])
	args := cur[1:]
	skip := make([]bool, len(args))
	switch {
	case name == "cd" || name == "pushd":
		w.cd(name, args, st)
		return
	case name == "popd":
		st.dirs, st.unknown = nil, "popd returns to a directory the gate does not track"
		return
	case shells[name]:
		w.shell(c, seg, name, args, redirs, st, cst, skip)
	case name == "eval":
		code, ok := joinLiteral(args)
		if !ok {
			seg.dynamic("eval of a non-literal string")
			return
		}
		w.recurse(c, code, st, "eval")
		return
	case name == "alias":
		for _, a := range args {
			if a.Kind != Literal {
				seg.dynamic("alias with a non-literal value")
				continue
			}
			if _, v, ok := strings.Cut(a.Value, "="); ok {
				w.recurse(c, v, st.clone(), "alias")
			}
		}
		return
	case name == "trap":
		ops := args
		for len(ops) > 0 && ops[0].Kind == Literal && strings.HasPrefix(ops[0].Value, "-") && ops[0].Value != "-" {
			if ops[0].Value == "--" {
				ops = ops[1:]
				break
			}
			ops = ops[1:]
		}
		if len(ops) >= 2 {
			if ops[0].Kind != Literal {
				seg.dynamic("trap with a non-literal action")
			} else if ops[0].Value != "-" {
				w.recurse(c, ops[0].Value, st.clone(), "trap")
			}
		}
		return
	case name == "source" || name == ".":
		if len(args) > 0 {
			seg.opaque(name + " runs " + args[0].raw + ", which the gate cannot read")
			w.claim(&args[0], Read, "script", cst)
			skip[0] = true
		}
	case name == "hash":
		for _, a := range args {
			if a.Kind != Literal || strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "p") {
				seg.opaque("hash -p maps a command name to another program")
			}
		}
	case name == "enable":
		for _, a := range args {
			if a.Kind != Literal || strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "f") {
				seg.opaque("enable -f loads a builtin the gate cannot read")
			}
		}
	case name == "read" || name == "getopts" || name == "printf":
		for _, a := range args {
			if a.Kind == Literal && !strings.HasPrefix(a.Value, "-") {
				w.assigned(a.Value)
			}
		}
	case interpreters[name] != nil || isPython(name):
		w.interpreter(seg, name, args, cst, skip)
	case awks[name]:
		w.awk(seg, name, args, cst, skip)
	case name == "sed":
		w.sed(seg, args, cst, skip)
	case name == "git":
		cst = w.git(seg, cur, cst, skip)
	case name == "find":
		w.find(c, seg, args, cst, cst, skip)
	case name == "deno":
		if len(args) > 0 && args[0].Value == "eval" {
			seg.opaque("deno eval runs code the gate cannot read")
		}
	case name == "pwsh" || name == "powershell":
		seg.opaque(name + " runs code the gate cannot read")
	case name == "dd":
		w.dd(args, cst, skip)
	case name == "zip":
		for i := range args {
			if args[i].Kind != Literal || !strings.HasPrefix(args[i].Value, "-") {
				w.claim(&args[i], Write, "writer argument", cst) // the archive
				break
			}
		}
	case name == "tar":
		w.recursiveMode = true
		w.tar(seg, args, cst, skip)
		w.recursiveMode = false
	default:
		if spec, ok := writers[name]; ok {
			w.recursiveMode, _ = recursive(name, args)
			w.writer(name, spec, args, cst, skip)
			w.recursiveMode = false
		}
	}
	if why := programOpaque(name, args); why != "" {
		seg.opaque(why)
	}
	if why := fileList(name, args); why != "" {
		w.addClaim(Claim{Arg: name, Path: name, Op: Read, Source: "option", Operand: true, Unresolved: why})
	}
	if linkMaker(name, args) {
		w.linkMade = name
	} else if w.linkMade != "" {
		seg.dynamic(w.linkMade + " earlier in this command line can create links that " + name +
			" would follow, which the gate cannot see before they exist; run it on its own first")
	}
	if name == "shopt" || name == "set" && setsExpansion(args) {
		seg.opaque(name + " changes how later words expand (globs, aliases, options)")
	}
	rec, dot, names := recursiveNames(name, args)
	w.curName, w.recursiveMode, w.namesMode = name, rec, names
	w.genericClaims(args, cst, skip)
	// The shell itself lists the directories a glob reads, whatever
	// the program then does with the names (echo s*/*, dd x=s*/*).
	w.recursiveMode, w.namesMode = false, true
	for i := range args {
		if args[i].Kind == Glob {
			w.claim(&args[i], Read, "glob", cst)
		}
	}
	w.recursiveMode, w.namesMode = rec, names
	if dot && namesNoPath(name, args) {
		here := xword{Word: Word{Value: "."}, raw: name, path: "."}
		w.claim(&here, Read, "argument", cst)
	}
	w.curName, w.recursiveMode, w.namesMode = "", false, false
	if body, ok := w.funcs[cur[0].Value]; ok && !w.active[cur[0].Value] {
		w.callFunc(c, cur[0].Value, body, st)
	}
}

// callFunc re-walks a function body where it is called, for the directory
// changes and the claims it makes there; its segments were recorded where
// it was defined.
func (w *walker) callFunc(c ctx, name string, body *syntax.Stmt, st *cwdState) {
	if w.active == nil {
		w.active = map[string]bool{}
	}
	w.active[name] = true
	w.quiet++
	w.stmt(ctx{src: w.funcSrc[name], depth: c.depth + 1}, body, st)
	w.quiet--
	delete(w.active, name)
}

func joinLiteral(args []xword) (string, bool) {
	parts := make([]string, len(args))
	for i, a := range args {
		if a.Kind != Literal {
			return "", false
		}
		parts[i] = a.Value
	}
	return strings.Join(parts, " "), true
}

// cd tracks cd and pushd.
func (w *walker) cd(name string, args []xword, st *cwdState) {
	var ops []xword
	end := false
	for _, a := range args {
		if !end && a.Kind == Literal && a.Value == "--" {
			end = true
			continue
		}
		if !end && a.Kind == Literal && len(a.Value) > 1 && (a.Value[0] == '-' || name == "pushd" && a.Value[0] == '+') {
			if name == "pushd" && a.Value != "-n" {
				ops = append(ops, a) // pushd +N / -N rotate the stack
			}
			continue
		}
		ops = append(ops, a)
	}
	if len(ops) == 0 {
		if name == "pushd" {
			st.dirs, st.unknown = nil, "pushd swaps to a directory the gate does not track"
			return
		}
		switch {
		case w.homeChanged != "":
			st.dirs, st.unknown = nil, w.homeChanged
		case w.opts.Home == "":
			st.dirs, st.unknown = nil, "cd goes to the home directory, which is not configured"
		default:
			st.cd(w.opts.Home)
		}
		return
	}
	if len(ops) > 1 {
		st.dirs, st.unknown = nil, name+" with several operands"
		return
	}
	t := ops[0]
	if t.Kind == Literal && (t.Value == "-" || strings.HasPrefix(t.Value, "+") || strings.HasPrefix(t.Value, "-")) {
		st.dirs, st.unknown = nil, name+" "+t.raw+" goes to a directory the gate does not track"
		return
	}
	w.claim(&t, Read, "cd", st)
	if t.Kind != Literal || t.unresolved != "" {
		st.dirs, st.unknown = nil, name+" "+t.raw+" goes to a directory the gate cannot know"
		return
	}
	if t.Value == "" {
		return
	}
	if w.cdpath && !path.IsAbs(t.path) && t.path != "." && t.path != ".." &&
		!strings.HasPrefix(t.path, "./") && !strings.HasPrefix(t.path, "../") {
		st.dirs, st.unknown = nil, "CDPATH is set, so "+name+" "+t.raw+" may go elsewhere"
		return
	}
	st.cd(t.path)
}

// shells run -c strings or scripts.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "yash": true, "posh": true, "rbash": true, "lksh": true, "pdksh": true,
}

func (w *walker) shell(c ctx, seg *Segment, name string, args []xword, redirs []*syntax.Redirect, st, cst *cwdState, skip []bool) {
	cflag, stdin, noop := false, false, false
	i := 0
loop:
	for ; i < len(args); i++ {
		a := &args[i]
		skip[i] = true
		if a.Kind != Literal {
			break
		}
		v := a.Value
		switch {
		case v == "--" || v == "-":
			i++
			break loop
		case strings.HasPrefix(v, "--"):
			switch v {
			case "--rcfile", "--init-file":
				i++
				if i < len(args) {
					skip[i] = true
				}
			case "--version", "--help":
				noop = true
			}
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			for j := 1; j < len(v); j++ {
				switch v[j] {
				case 'c':
					cflag = true
				case 's':
					stdin = true
				case 'o', 'O':
					if j == len(v)-1 {
						i++
						if i < len(args) {
							skip[i] = true
						}
					}
					j = len(v)
				}
			}
		default:
			skip[i] = false
			break loop
		}
	}
	switch {
	case cflag:
		if i >= len(args) {
			return
		}
		skip[i] = true
		s := &args[i]
		if s.Kind != Literal {
			seg.dynamic(name + " -c with a non-literal command string")
			return
		}
		w.recurse(c, s.Value, cst.clone(), name+" -c")
		for j := i + 1; j < len(args); j++ {
			skip[j] = true // $0, $1, ... of the inner script
		}
	case noop:
	case i < len(args) && !stdin:
		skip[i] = true
		seg.opaque(name + " runs script " + args[i].raw + ", which the gate cannot read")
		w.claim(&args[i], Read, "script", cst)
	default:
		if body, ok := w.stdinDocument(redirs); ok {
			w.recurse(c, body, cst.clone(), name+" standard input")
			return
		}
		seg.opaque(name + " reads commands from standard input, which the gate cannot read")
	}
}

// stdinDocument returns the literal body of a here-document or here-string
// on standard input.
func (w *walker) stdinDocument(redirs []*syntax.Redirect) (string, bool) {
	body, ok := "", false
	for _, r := range redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body, ok = "", true
			if r.Hdoc != nil {
				for _, p := range r.Hdoc.Parts {
					lit, isLit := p.(*syntax.Lit)
					if !isLit || strings.Contains(lit.Value, `\`) {
						return "", false
					}
					body += lit.Value
				}
			}
		case syntax.WordHdoc:
			x := w.evalParts(r.Word.Parts, "")
			if x.Kind == Dynamic {
				return "", false
			}
			body, ok = x.Value+"\n", true
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			body, ok = "", false
		}
	}
	return body, ok
}

// interp describes an interpreter's options.
type interp struct {
	// inline letters take code as their argument (python -c, perl -e).
	inline string
	// inlineLong are long options taking code.
	inlineLong []string
	// arg letters take an argument that is not code.
	arg string
	// attached letters take the rest of their cluster (perl -Mfoo).
	attached string
	// inPlace letters edit operands in place (perl -i).
	inPlace string
}

var interpreters = map[string]*interp{
	"node":      {inline: "ep", inlineLong: []string{"--eval", "--print"}, arg: "r", attached: ""},
	"nodejs":    {inline: "ep", inlineLong: []string{"--eval", "--print"}, arg: "r"},
	"bun":       {inline: "ep", inlineLong: []string{"--eval", "--print"}},
	"perl":      {inline: "eE", arg: "I", attached: "0lxCdDMmI", inPlace: "i"},
	"ruby":      {inline: "e", arg: "IrCE", attached: "KTWx0lF", inPlace: "i"},
	"php":       {inline: "rBRFE", arg: "cdfzt"},
	"lua":       {inline: "e", arg: "l"},
	"luajit":    {inline: "e", arg: "lj"},
	"Rscript":   {inline: "e"},
	"R":         {inline: "e"},
	"osascript": {inline: "e"},
	"tclsh":     {},
	"wish":      {},
	"expect":    {inline: "c"},
	"pypy":      {inline: "c", arg: "WXQm"},
	"pypy3":     {inline: "c", arg: "WXQm"},
}

var pythonSpec = &interp{inline: "c", arg: "WXQ"}

func isPython(name string) bool {
	if !strings.HasPrefix(name, "python") {
		return false
	}
	for _, r := range name[len("python"):] {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

func (w *walker) interpreter(seg *Segment, name string, args []xword, cst *cwdState, skip []bool) {
	spec := interpreters[name]
	if spec == nil {
		spec = pythonSpec
	}
	python := isPython(name) || strings.HasPrefix(name, "pypy")
	inPlace := false
	i := 0
loop:
	for ; i < len(args); i++ {
		a := &args[i]
		if a.Kind != Literal {
			break
		}
		v := a.Value
		switch {
		case v == "-":
			seg.opaque(name + " reads code from standard input, which the gate cannot read")
			return
		case v == "--":
			i++
			break loop
		case strings.HasPrefix(v, "--"):
			opt, _, _ := strings.Cut(v, "=")
			for _, l := range spec.inlineLong {
				if opt == l {
					seg.opaque(name + " " + opt + " runs code the gate cannot read")
					return
				}
			}
		case len(v) > 1 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				ch := v[j]
				switch {
				case strings.IndexByte(spec.inline, ch) >= 0:
					seg.opaque(name + " -" + string(ch) + " runs code the gate cannot read")
					return
				case python && ch == 'm':
					return // a module with its own arguments
				case strings.IndexByte(spec.inPlace, ch) >= 0:
					inPlace = true
					j = len(v)
				case strings.IndexByte(spec.arg, ch) >= 0:
					if j == len(v)-1 {
						i++
						if i < len(args) {
							skip[i] = true
						}
					}
					j = len(v)
				case strings.IndexByte(spec.attached, ch) >= 0:
					j = len(v)
				}
			}
		default:
			break loop
		}
	}
	if i >= len(args) {
		seg.opaque(name + " reads code from standard input, which the gate cannot read")
		return
	}
	skip[i] = true
	w.claim(&args[i], Read, "script", cst)
	if inPlace {
		for j := i + 1; j < len(args); j++ {
			skip[j] = true
			w.claim(&args[j], Write, "writer argument", cst)
		}
	}
}

var awks = map[string]bool{"awk": true, "gawk": true, "mawk": true, "nawk": true, "busybox-awk": true}

func (w *walker) awk(seg *Segment, name string, args []xword, cst *cwdState, skip []bool) {
	progGiven := false
	i := 0
	for ; i < len(args); i++ {
		a := &args[i]
		if a.Kind != Literal {
			break
		}
		v := a.Value
		if v == "--" {
			skip[i] = true
			i++
			break
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		skip[i] = true
		opt, val, hasVal := v, "", false
		if strings.HasPrefix(v, "--") {
			opt, val, hasVal = strings.Cut(v, "=")
		} else if len(v) > 2 {
			opt, val, hasVal = v[:2], v[2:], true
		}
		switch opt {
		case "-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load":
			seg.opaque(name + " " + opt + " loads a program the gate cannot read")
			progGiven = true
		case "-e", "--source":
			progGiven = true
			if !hasVal && i+1 < len(args) {
				i++
				skip[i] = true
				val = args[i].Value
				if args[i].Kind != Literal {
					val = "system"
				}
			}
			w.awkProgram(seg, name, val)
			continue
		case "-F", "--field-separator", "-v", "--assign":
		default:
			continue
		}
		if !hasVal && i+1 < len(args) {
			i++
			skip[i] = true
		}
	}
	if !progGiven && i < len(args) {
		skip[i] = true
		if args[i].Kind != Literal {
			seg.opaque(name + " runs a program the gate cannot read")
		} else {
			w.awkProgram(seg, name, args[i].Value)
		}
	}
}

// awkProgram flags awk programs that can run commands or write files.
func (w *walker) awkProgram(seg *Segment, name, prog string) {
	if strings.Contains(prog, "system") || strings.ContainsAny(prog, "|><") || strings.Contains(prog, "@load") ||
		strings.Contains(prog, "getline") || strings.Contains(prog, "@include") || strings.Contains(prog, "ARGV") ||
		strings.Contains(prog, "ARGC") || strings.Contains(prog, "ENVIRON") {
		seg.opaque(name + " program can run commands or write files")
	}
}

// git: -c and --config-env set configuration that can run commands
// (aliases with "!", core.pager, core.sshCommand, ...); global options are
// removed in an extra form so that rules such as "git push" see the
// subcommand.
// git returns the directory state its operands resolve against (after -C).
func (w *walker) git(seg *Segment, cur []xword, cst *cwdState, skip []bool) *cwdState {
	args := cur[1:]
	var workTree, workTreeOpt *xword
	gitDirOpt := false // --git-dir or --work-tree: git init may not make .git here
	i := 0
	for ; i < len(args); i++ {
		a := &args[i]
		if a.Kind != Literal {
			break
		}
		v := a.Value
		if len(v) < 2 || v[0] != '-' {
			break
		}
		skip[i] = true
		opt, _, hasVal := strings.Cut(v, "=")
		if opt == "-c" || opt == "--config-env" || opt == "--exec-path" || strings.HasPrefix(v, "-c") {
			seg.opaque("git " + opt + " sets configuration that can run commands")
		}
		pathOpt := opt == "-C" || opt == "--git-dir" || opt == "--work-tree"
		if opt == "--git-dir" || opt == "--work-tree" {
			gitDirOpt = true
		}
		// -C enters its directory (cst, below): a work tree named
		// by it would be joined to itself.
		treeOpt := opt == "--work-tree"
		if opt == "--work-tree" {
			if hasVal {
				x := subword(w, a, opt+"=")
				workTreeOpt = &x
			} else if i+1 < len(args) {
				workTreeOpt = &args[i+1]
			}
		}
		switch opt {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--attr-source":
		default:
			continue
		}
		if hasVal {
			if pathOpt {
				x := subword(w, a, opt+"=")
				w.claim(&x, Read, "option", cst)
				if treeOpt {
					workTree = &x
				}
			}
			continue
		}
		if i+1 < len(args) {
			i++
			skip[i] = true
			if pathOpt {
				w.claim(&args[i], Read, "option", cst)
				if treeOpt {
					workTree = &args[i]
				}
			}
		}
		if opt == "-C" {
			// Later operands are relative to -C's directory.
			var d *xword
			if hasVal {
				x := subword(w, a, "-C=")
				d = &x
			} else if i < len(args) {
				d = &args[i]
			}
			if d != nil {
				cst = cst.enter(d, "git -C "+d.raw+" runs in a directory the gate cannot know")
			}
		}
	}
	if i > 0 && i < len(args) {
		git := xword{Word: Word{Value: "git"}, raw: cur[0].raw, path: "git"}
		form := append([]xword{git}, args[i:]...)
		seg.Forms = append(seg.Forms, Form{Words: plainWords(form)})
	}
	if i >= len(args) || args[i].Kind != Literal {
		return cst
	}
	sub, rest := args[i].Value, args[i+1:]
	if why := gitOpaque(sub, rest); why != "" {
		seg.opaque(why)
	}
	var gitOps []int
	for j := 0; j < len(rest); j++ {
		r := &rest[j]
		if r.Kind != Literal || !strings.HasPrefix(r.Value, "-") {
			gitOps = append(gitOps, j)
			continue
		}
		for _, o := range append(gitWrites["*"], gitWrites[sub]...) {
			if !optIs(r.Value, o) {
				continue
			}
			switch {
			case strings.Contains(r.Value, "=") && strings.HasPrefix(o, "--"):
				x := subword(w, r, r.Value[:strings.IndexByte(r.Value, '=')+1])
				w.claim(&x, Write, "writer argument", cst)
				skip[i+1+j] = true
			case strings.HasPrefix(o, "--") || r.Value == o:
				if j+1 < len(rest) {
					w.claim(&rest[j+1], Write, "writer argument", cst)
					skip[i+1+j], skip[i+2+j] = true, true
				}
			default: // -oVALUE
				if k := strings.IndexByte(r.Value, o[1]); k+1 < len(r.Value) {
					x := subword(w, r, r.Value[:k+1])
					w.claim(&x, Write, "writer argument", cst)
				} else if j+1 < len(rest) {
					w.claim(&rest[j+1], Write, "writer argument", cst)
				}
			}
		}
	}
	initOp, initRedirect := -1, false
	if sub == "init" {
		initOp, initRedirect = initOperand(rest)
	}
	switch {
	case sub == "init" && initOp >= 0:
		w.claim(&rest[initOp], Write, "writer argument", cst)
	case gitWriteOperands[sub] && len(gitOps) > 0:
		w.claim(&rest[gitOps[0]], Write, "writer argument", cst)
	case sub == "init", sub == "worktree", sub == "bundle":
		// git init writes .git in the working directory (or -C);
		// worktree and bundle write their path operands (init's
		// words are option values: initOperand found no operand).
		if sub != "init" {
			for _, k := range gitOps {
				w.claim(&rest[k], Write, "writer argument", cst)
			}
		}
		if sub == "init" {
			here := xword{Word: Word{Value: ".git"}, raw: "git init", path: ".git"}
			if workTree != nil {
				here = *workTree
			}
			w.claim(&here, Write, "writer argument", cst)
		}
	case sub == "add" || sub == "stash":
		for _, k := range gitOps {
			if v := rest[k].Value; rest[k].Kind != Literal || strings.HasPrefix(v, ":") || strings.ContainsAny(v, "*?[") {
				// pathspec magic and git's own globs match anywhere
				// in the work tree.
				tree := xword{Word: Word{Value: "."}, raw: "git " + sub, path: "."}
				w.recursiveMode, w.workTreeMode = true, true
				w.claim(&tree, Read, "argument", cst)
				w.recursiveMode, w.workTreeMode = false, false
				break
			}
			if sub == "add" {
				// git add DIR adds every file under it.
				w.recursiveMode = true
				w.claim(&rest[k], Read, "argument", cst)
				w.recursiveMode = false
			}
		}
	case sub == "diff" && hasArg(rest, "--no-index"):
		w.recursiveMode = true
		for _, k := range gitOps {
			w.claim(&rest[k], Read, "argument", cst)
		}
		w.recursiveMode = false
	}
	if op, ok := gitRecursive(sub, rest); ok {
		// The whole work tree, wherever in it git runs.
		tree := xword{Word: Word{Value: "."}, raw: "git " + sub, path: "."}
		w.recursiveMode, w.workTreeMode = true, true
		w.claim(&tree, op, "argument", cst)
		w.recursiveMode, w.workTreeMode = false, false
	}
	if gitConfigWrite(sub, rest) && (initOp < 0 || rest[initOp].Kind == Literal) {
		// (git init DIR with DIR known only at run time: the
		// operand's unresolved claim asks.)
		cfg := xword{Word: Word{Value: ".git/config"}, raw: "git " + sub, path: ".git/config"}
		if workTree != nil && workTree.Kind == Literal {
			cfg.path = path.Join(workTree.path, ".git/config")
		}
		if sub == "init" {
			// git init DIR makes (or initialises again) DIR/.git; a
			// bare repository (--bare) has no .git, and its
			// directory is the operand claimed above.
			if initOp >= 0 {
				cfg.path = path.Join(rest[initOp].path, ".git/config")
			}
			switch {
			case hasArg(rest, "--bare"):
				// The directory itself is the git directory.
				cfg.path = path.Clean(path.Join(path.Dir(cfg.path), "..", "config"))
			case !initRedirect && !gitDirOpt && seg.Opaque == "":
				// A new repository only where git makes DIR/.git
				// itself: not with --git-dir, --work-tree,
				// --separate-git-dir, a template, GIT_DIR and the
				// like (opaque), or a word known at run time.
				w.newRepository = true
			}
		}
		w.claim(&cfg, Write, "writer argument", cst)
		w.newRepository = false
	}
	if workTreeOpt != nil {
		// git --work-tree=DIR checkout/reset/... writes into DIR.
		w.claim(workTreeOpt, Write, "writer argument", cst)
	}
	switch sub {
	case "config":
		global, file, set := false, "", 0
		for _, r := range rest {
			switch {
			case r.Value == "--global":
				global = true
			case r.Value == "--system":
				file = "/etc/gitconfig"
			case strings.HasPrefix(r.Value, "--file="):
				file = strings.TrimPrefix(r.Value, "--file=")
			case r.Value == "--add" || r.Value == "--unset" || r.Value == "--unset-all" || r.Value == "--replace-all" ||
				r.Value == "--rename-section" || r.Value == "--remove-section" || r.Value == "--edit" || r.Value == "-e" ||
				r.Value == "set" || r.Value == "unset" || r.Value == "edit" || r.Value == "rename-section" || r.Value == "remove-section":
				set = 2
			case !strings.HasPrefix(r.Value, "-"):
				set++
			}
		}
		if set >= 2 {
			target := ".git/config"
			switch {
			case file != "":
				target = file
			case global:
				target = "~/.gitconfig"
			}
			x := w.evalParts([]syntax.WordPart{&syntax.Lit{Value: target}}, "git config")
			w.claim(&x, Write, "writer argument", cst)
		}
	case "clone":
		var ops []int
		for j := range rest {
			if !strings.HasPrefix(rest[j].Value, "-") {
				ops = append(ops, j)
			}
		}
		if len(ops) >= 2 {
			w.claim(&rest[ops[len(ops)-1]], Write, "writer argument", cst)
			skip[i+1+ops[len(ops)-1]] = true
		} else {
			dot := xword{Word: Word{Value: "."}, raw: "git clone", path: "."}
			w.claim(&dot, Write, "writer argument", cst)
		}
	}
	return cst
}

// find: starting points are read claims, -delete makes them writes,
// -exec/-execdir/-ok/-okdir commands are segments of their own.
func (w *walker) find(c ctx, seg *Segment, args []xword, st, cst *cwdState, skip []bool) {
	i := 0
	for i < len(args) && args[i].Kind == Literal {
		v := args[i].Value
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			skip[i] = true
			i++
			continue
		}
		if v == "-D" && i+1 < len(args) {
			skip[i], skip[i+1] = true, true
			i += 2
			continue
		}
		break
	}
	var starts []int
	for ; i < len(args); i++ {
		v := args[i].Value
		if args[i].Kind == Literal && (strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ",") {
			break
		}
		starts = append(starts, i)
		skip[i] = true
	}
	startOp := Read
	for j := i; j < len(args); j++ {
		skip[j] = true
		a := &args[j]
		if a.Kind != Literal {
			continue
		}
		switch a.Value {
		case "-delete":
			startOp = Write
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if j+1 < len(args) {
				j++
				skip[j] = true
				w.claim(&args[j], Write, "writer argument", cst)
			}
		case "-files0-from":
			if j+1 < len(args) {
				j++
				skip[j] = true
				w.claim(&args[j], Read, "option", cst)
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			k := j + 1
			for k < len(args) && !(args[k].Kind == Literal && (args[k].Value == ";" || args[k].Value == "+")) {
				k++
			}
			inner := append([]xword(nil), args[j+1:k]...)
			for n := range inner {
				skip[j+1+n] = true
				if inner[n].Kind != Dynamic && strings.Contains(inner[n].Value, "{}") {
					inner[n].Kind, inner[n].dyn = Dynamic, "find replaces {}"
					inner[n].unresolved = "find replaces {} with each file it finds"
					inner[n].found = inner[n].Value == "{}"
				}
			}
			if len(inner) == 0 {
				seg.dynamic("find " + a.Value + " without a command")
			} else {
				ist := st
				if strings.HasSuffix(a.Value, "dir") {
					ist = &cwdState{unknown: "find " + a.Value + " runs in each found file's directory"}
				}
				raws := make([]string, len(inner))
				for n := range inner {
					raws[n] = inner[n].raw
				}
				// {} is a file find found: a claim on the trees
				// find walks.
				saved, savedCst := w.findStarts, w.findCst
				w.findStarts, w.findCst = findStarts(args, starts), cst
				w.command(c, strings.Join(raws, " "), inner, nil, ist.clone(), "")
				w.findStarts, w.findCst = saved, savedCst
			}
			if k < len(args) {
				skip[k] = true
			}
			j = k
		}
	}
	src := "argument"
	if startOp == Write {
		src = "writer argument"
	}
	w.recursiveMode, w.namesMode = true, true
	for _, s := range findStarts(args, starts) {
		w.claim(&s, startOp, src, cst)
	}
	w.recursiveMode, w.namesMode = false, false
}

// findStarts returns the trees find walks: its start operands, or ".".
func findStarts(args []xword, starts []int) []xword {
	if len(starts) == 0 {
		return []xword{{Word: Word{Value: "."}, raw: "find", path: "."}}
	}
	out := make([]xword, len(starts))
	for i, s := range starts {
		out[i] = args[s]
	}
	return out
}
