package shellscan

import (
	"path"
	"strings"
)

// operandMode says which operands of a writer it writes.
type operandMode uint8

const (
	writeAll       operandMode = iota // rm, mkdir, touch, tee, ...
	writeLast                         // cp, install, ln, rsync, scp: the destination
	writeSkipFirst                    // chmod, chown, chgrp: after the mode or owner
	writeFirst                        // mknod
	writeNone                         // only options write (curl -o, sort -o)
)

// writerSpec describes a command that writes files.
type writerSpec struct {
	arg     string   // short options taking an argument
	argLong []string // long options taking an argument
	mode    operandMode
	// writeOpts and readOpts name options whose argument is written/read.
	writeOpts, readOpts string
	// shortOnly, when set, lists the only letters that make an option;
	// other dash words are operands (chmod -w file).
	shortOnly string
	// remote operands (host:path) are skipped (rsync, scp).
	remote bool
	// cwdWrite: without a write option the command writes into the working
	// directory (wget, curl -O, unzip).
	cwdWrite string
	// singleDash: options are whole words (go -o, gcc -o).
	singleDash bool
}

var ccSpec = writerSpec{arg: "oIDLlxUu", mode: writeNone, writeOpts: "-o"}

var writers = map[string]writerSpec{
	"rm":         {mode: writeAll},
	"rmdir":      {mode: writeAll},
	"unlink":     {mode: writeAll},
	"shred":      {arg: "ns", argLong: []string{"--iterations", "--size", "--random-source"}, mode: writeAll},
	"mv":         {arg: "tS", argLong: []string{"--target-directory", "--suffix"}, mode: writeAll, writeOpts: "-t,--target-directory"},
	"cp":         {arg: "tS", argLong: []string{"--target-directory", "--suffix"}, mode: writeLast, writeOpts: "-t,--target-directory"},
	"install":    {arg: "gmoSt", argLong: []string{"--group", "--mode", "--owner", "--suffix", "--target-directory", "--strip-program"}, mode: writeLast, writeOpts: "-t,--target-directory"},
	"ln":         {arg: "tS", argLong: []string{"--target-directory", "--suffix"}, mode: writeLast, writeOpts: "-t,--target-directory"},
	"touch":      {arg: "dtr", argLong: []string{"--date", "--reference", "--time"}, mode: writeAll, readOpts: "-r,--reference"},
	"mkdir":      {arg: "m", argLong: []string{"--mode", "--context"}, mode: writeAll},
	"mkfifo":     {arg: "m", argLong: []string{"--mode", "--context"}, mode: writeAll},
	"mknod":      {arg: "m", argLong: []string{"--mode", "--context"}, mode: writeFirst},
	"tee":        {mode: writeAll},
	"link":       {mode: writeLast},
	"xxd":        {arg: "cgloOsn", mode: writeLast},
	"ar":         {mode: writeSkipFirst},
	"split":      {arg: "abCdlnt", argLong: []string{"--suffix-length", "--additional-suffix", "--bytes", "--line-bytes", "--lines", "--number", "--separator", "--filter"}, mode: writeLast},
	"csplit":     {arg: "bfn", argLong: []string{"--suffix-format", "--prefix", "--digits"}, mode: writeNone, writeOpts: "-f,--prefix"},
	"mktemp":     {arg: "p", argLong: []string{"--suffix", "--tmpdir"}, mode: writeAll, writeOpts: "-p,--tmpdir"},
	"shuf":       {arg: "einor", argLong: []string{"--echo", "--input-range", "--head-count", "--output", "--random-source"}, mode: writeNone, writeOpts: "-o,--output", readOpts: "--random-source"},
	"iconv":      {arg: "ftco", argLong: []string{"--from-code", "--to-code", "--output"}, mode: writeNone, writeOpts: "-o,--output"},
	"lz4":        {mode: writeLast},
	"zstd":       {arg: "oD", argLong: []string{"--output-dir-flat", "--output-dir-mirror"}, mode: writeNone, writeOpts: "-o,--output-dir-flat,--output-dir-mirror"},
	"ssh-keygen": {arg: "fCNtbZ", mode: writeNone, writeOpts: "-f"},
	"uniq":       {arg: "fsw", argLong: []string{"--skip-fields", "--skip-chars", "--check-chars", "--group", "--all-repeated"}, mode: writeLast},
	"truncate": {arg: "sr", argLong: []string{"--size", "--reference"}, mode: writeAll,
		readOpts: "-r,--reference"},
	"chmod": {mode: writeSkipFirst, shortOnly: "cfvR", readOpts: "--reference"},
	"chown": {mode: writeSkipFirst, shortOnly: "cfvRhHLP", readOpts: "--reference"},
	"chgrp": {mode: writeSkipFirst, shortOnly: "cfvRhHLP", readOpts: "--reference"},
	"rsync": {arg: "efBTM", argLong: []string{"--rsh", "--filter", "--exclude", "--include", "--exclude-from", "--include-from",
		"--temp-dir", "--partial-dir", "--backup-dir", "--log-file", "--password-file", "--files-from", "--compare-dest",
		"--copy-dest", "--link-dest", "--suffix", "--chmod", "--rsync-path", "--timeout", "--bwlimit", "--max-size", "--min-size"},
		mode: writeLast, remote: true, writeOpts: "--log-file,--backup-dir,--partial-dir,--temp-dir,-T",
		readOpts: "--exclude-from,--include-from,--files-from,--password-file"},
	"scp": {arg: "cFiJlmoPSD", mode: writeLast, remote: true, readOpts: "-F,-i"},
	"sort": {arg: "kotTS", argLong: []string{"--key", "--output", "--field-separator", "--temporary-directory", "--buffer-size",
		"--files0-from", "--parallel", "--compress-program", "--batch-size", "--random-source"}, mode: writeNone,
		writeOpts: "-o,--output,-T,--temporary-directory", readOpts: "--files0-from,--random-source"},
	"curl": {arg: "oDcKTdFHXuAeEbxUwmCrYyzQtPK", argLong: []string{"--output", "--output-dir", "--dump-header", "--cookie-jar",
		"--config", "--upload-file", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--form", "--header",
		"--request", "--user", "--user-agent", "--referer", "--cookie", "--proxy", "--max-time", "--connect-timeout",
		"--trace", "--trace-ascii", "--stderr", "--cacert", "--cert", "--key", "--netrc-file", "--write-out", "--retry", "--url"},
		mode: writeNone, writeOpts: "-o,--output,--output-dir,-D,--dump-header,-c,--cookie-jar,--trace,--trace-ascii,--stderr",
		readOpts: "-K,--config,-T,--upload-file,--cacert,--cert,--key,--netrc-file"},
	"wget": {arg: "OoaPiUeBtTwQlARDIX", argLong: []string{"--output-document", "--output-file", "--append-output",
		"--directory-prefix", "--input-file", "--user-agent", "--execute", "--tries", "--timeout", "--wait", "--level",
		"--accept", "--reject", "--header", "--user", "--password", "--post-file", "--body-file", "--load-cookies", "--save-cookies"},
		mode: writeNone, writeOpts: "-O,--output-document,-o,--output-file,-a,--append-output,-P,--directory-prefix,--save-cookies",
		readOpts: "-i,--input-file,--post-file,--body-file,--load-cookies", cwdWrite: "-O,--output-document,-P,--directory-prefix"},
	"unzip":   {arg: "dxP", mode: writeNone, writeOpts: "-d", cwdWrite: "-d"},
	"gcc":     ccSpec,
	"g++":     ccSpec,
	"cc":      ccSpec,
	"c++":     ccSpec,
	"clang":   ccSpec,
	"clang++": ccSpec,
	"go": {argLong: []string{"-o", "-p", "-C", "-tags", "-ldflags", "-gcflags", "-asmflags", "-run", "-bench", "-count",
		"-timeout", "-parallel", "-cpu", "-benchtime", "-mod", "-modfile", "-pkgdir", "-buildmode", "-compiler",
		"-installsuffix", "-covermode", "-coverpkg", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile",
		"-mutexprofile", "-trace", "-outputdir", "-exec", "-toolexec", "-skip", "-shuffle", "-fuzz", "-fuzztime", "-vet", "-list",
		"-overlay", "-pgo", "-benchmem"}, singleDash: true, mode: writeNone,
		writeOpts: "-o,-coverprofile,-cpuprofile,-memprofile,-blockprofile,-mutexprofile,-trace,-outputdir", readOpts: "-C,-modfile,-overlay"},
}

// optArg is one option's argument.
type optArg struct {
	name string
	x    xword
	idx  int // index of the argument word, -1 when attached
}

// parseOptions splits args into operand indexes and option arguments.
func parseOptions(w *walker, args []xword, spec *writerSpec) (operands []int, opts []optArg, longs map[string]bool, shorts string) {
	longs = map[string]bool{}
	end := false
	for i := 0; i < len(args); i++ {
		a := &args[i]
		raw := a.Value
		if a.Kind == Dynamic {
			raw = a.raw
		}
		if end || raw == "-" || !strings.HasPrefix(raw, "-") {
			operands = append(operands, i)
			continue
		}
		if a.Kind == Literal && raw == "--" {
			end = true
			continue
		}
		if spec.shortOnly != "" && !strings.HasPrefix(raw, "--") && strings.Trim(raw[1:], spec.shortOnly) != "" {
			operands = append(operands, i)
			continue
		}
		if strings.HasPrefix(raw, "--") || spec.singleDash {
			name, _, hasEq := strings.Cut(raw, "=")
			name = longName(name, spec.argLong)
			longs[name] = true
			if hasEq {
				opts = append(opts, optArg{name: name, x: subword(w, a, raw[:strings.IndexByte(raw, '=')+1]), idx: -1})
			} else if inList(spec.argLong, name) && i+1 < len(args) {
				i++
				opts = append(opts, optArg{name: name, x: args[i], idx: i})
			}
			continue
		}
		for j := 1; j < len(raw); j++ {
			ch := raw[j]
			shorts += string(ch)
			if strings.IndexByte(spec.arg, ch) >= 0 {
				name := "-" + string(ch)
				if j+1 < len(raw) {
					if a.Kind == Dynamic {
						opts = append(opts, optArg{name: name, x: subword(w, a, raw[:j+1]), idx: -1})
					} else {
						opts = append(opts, optArg{name: name, x: subword(w, a, raw[:j+1]), idx: -1})
					}
				} else if i+1 < len(args) {
					i++
					opts = append(opts, optArg{name: name, x: args[i], idx: i})
				}
				break
			}
		}
	}
	return operands, opts, longs, shorts
}

// longName resolves a GNU-style abbreviation ("--t" for
// "--target-directory") to the first option of list it abbreviates: an
// ambiguous abbreviation is refused by the program, so reading it as any
// of the options it may stand for is never looser.
func longName(name string, list []string) string {
	if inList(list, name) || len(name) < 3 {
		return name
	}
	for _, l := range list {
		if strings.HasPrefix(l, name) {
			return l
		}
	}
	return name
}

func isRemote(x *xword) bool {
	v := x.Value
	i := strings.IndexByte(v, ':')
	return i > 0 && !strings.Contains(v[:i], "/")
}

// writer records the claims of a known writer.
func (w *walker) writer(name string, spec writerSpec, args []xword, cst *cwdState, skip []bool) {
	operands, opts, longs, shorts := parseOptions(w, args, &spec)
	for i := range args {
		skip[i] = true
	}
	wroteByOpt := false
	target := false
	for _, o := range opts {
		switch {
		case optIn(spec.writeOpts, o.name):
			w.claim(&o.x, Write, "writer argument", cst)
			if optIn(spec.cwdWrite, o.name) {
				wroteByOpt = true
			}
			if o.name == "-t" || o.name == "--target-directory" {
				target = true
			}
		case optIn(spec.readOpts, o.name):
			w.claim(&o.x, Read, "option", cst)
			if o.name == "--reference" {
				longs["--reference"] = true
			}
		default:
			w.valueClaim(&o.x, cst)
		}
	}
	if spec.cwdWrite != "" && !wroteByOpt {
		dot := xword{Word: Word{Value: "."}, raw: name, path: "."}
		w.claim(&dot, Write, "writer argument", cst)
	}
	mode := spec.mode
	if mode == writeSkipFirst && longs["--reference"] {
		mode = writeAll
	}
	if name == "install" && strings.Contains(shorts, "d") {
		mode = writeAll
	}
	if (mode == writeLast) && target {
		mode = writeNone
		if name == "mv" {
			mode = writeAll
		}
	}
	for k, i := range operands {
		a := &args[i]
		if spec.remote && isRemote(a) {
			continue
		}
		op, src := Read, "argument"
		switch mode {
		case writeAll:
			op = Write
		case writeLast:
			if k == len(operands)-1 && len(operands) > 1 {
				op = Write
			}
		case writeSkipFirst:
			if k == 0 {
				continue
			}
			op = Write
		case writeFirst:
			if k == 0 {
				op = Write
			} else {
				continue
			}
		case writeNone:
			if target {
				break // sources of cp/install/ln -t DIR
			}
		}
		if op == Write {
			src = "writer argument"
		}
		if mode == writeNone && !target {
			w.argClaim(a, cst)
			continue
		}
		w.claim(a, op, src, cst)
	}
	if name == "ln" && len(operands) == 1 && !target {
		a := args[operands[0]]
		if a.Kind == Literal {
			b := xword{Word: Word{Value: path.Base(a.path)}, raw: a.raw, path: path.Base(a.path)}
			w.claim(&b, Write, "writer argument", cst)
		}
	}
}

// dd: of= is written, if= is read.
func (w *walker) dd(args []xword, cst *cwdState, skip []bool) {
	for i := range args {
		a := &args[i]
		skip[i] = true
		v := a.Value
		if a.Kind == Dynamic {
			v = a.raw
		}
		switch {
		case strings.HasPrefix(v, "of="):
			x := subword(w, a, "of=")
			w.claim(&x, Write, "writer argument", cst)
		case strings.HasPrefix(v, "if="):
			x := subword(w, a, "if=")
			w.claim(&x, Read, "argument", cst)
		}
	}
}

// tar: the archive is written when creating, the directory (-C or the
// working directory) when extracting; files added are read.
func (w *walker) tar(seg *Segment, args []xword, cst *cwdState, skip []bool) {
	var mode byte // c, x, t, r, u, A, d
	var archive, dir *xword
	var pending []byte // bundled letters waiting for their operand
	var operands []int
	setMode := func(ch byte) {
		if strings.IndexByte("cxtruAd", ch) >= 0 && mode == 0 {
			mode = ch
		}
	}
	for i := 0; i < len(args); i++ {
		a := &args[i]
		skip[i] = true
		v := a.Value
		if a.Kind == Dynamic {
			v = a.raw
		}
		if len(pending) > 0 {
			switch pending[0] {
			case 'f':
				archive = a
			case 'C':
				dir = a
			case 'T', 'X':
				w.claim(a, Read, "option", cst)
			}
			pending = pending[1:]
			continue
		}
		switch {
		case i == 0 && v != "" && v[0] != '-' && a.Kind == Literal:
			for j := 0; j < len(v); j++ {
				setMode(v[j])
				if strings.IndexByte("fCTXbN", v[j]) >= 0 {
					pending = append(pending, v[j])
				}
			}
		case strings.HasPrefix(v, "--"):
			name, _, hasEq := strings.Cut(v, "=")
			switch name {
			case "--create":
				setMode('c')
			case "--extract", "--get":
				setMode('x')
			case "--list":
				setMode('t')
			case "--append":
				setMode('r')
			case "--update":
				setMode('u')
			case "--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "--rsh-command":
				seg.opaque("tar " + name + " runs a command the gate cannot read")
			case "--checkpoint-action":
				if strings.Contains(v, "exec") {
					seg.opaque("tar --checkpoint-action=exec runs a command the gate cannot read")
				}
			}
			var x *xword
			if hasEq {
				sw := subword(w, a, name+"=")
				x = &sw
			} else if (name == "--file" || name == "--directory" || name == "--files-from" || name == "--exclude-from") && i+1 < len(args) {
				i++
				skip[i] = true
				x = &args[i]
			}
			if x != nil {
				switch name {
				case "--file":
					archive = x
				case "--directory":
					dir = x
				case "--files-from", "--exclude-from":
					w.claim(x, Read, "option", cst)
				}
			}
		case len(v) > 1 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				ch := v[j]
				setMode(ch)
				if ch == 'I' || ch == 'F' {
					seg.opaque("tar -" + string(ch) + " runs a command the gate cannot read")
				}
				if strings.IndexByte("fCTXbNIFgKLV", ch) >= 0 {
					var x *xword
					if j+1 < len(v) {
						sw := subword(w, a, v[:j+1])
						x = &sw
					} else if i+1 < len(args) {
						i++
						skip[i] = true
						x = &args[i]
					}
					if x != nil {
						switch ch {
						case 'f':
							archive = x
						case 'C':
							dir = x
						case 'T', 'X':
							w.claim(x, Read, "option", cst)
						}
					}
					break
				}
			}
		default:
			operands = append(operands, i)
		}
	}
	creating := mode == 'c' || mode == 'r' || mode == 'u' || mode == 'A'
	if archive != nil && !(archive.Kind == Literal && archive.Value == "-") {
		if creating {
			w.claim(archive, Write, "writer argument", cst)
		} else {
			w.claim(archive, Read, "argument", cst)
		}
	}
	if mode == 'x' {
		if dir != nil {
			w.claim(dir, Write, "writer argument", cst)
		} else {
			dot := xword{Word: Word{Value: "."}, raw: "tar", path: "."}
			w.claim(&dot, Write, "writer argument", cst)
		}
	} else if dir != nil {
		w.claim(dir, Read, "option", cst)
	}
	if creating {
		// Operands are read from -C's directory.
		ocst := cst
		if dir != nil {
			ocst = cst.enter(dir, "tar -C "+dir.raw+" reads its operands from a directory the gate cannot know")
		}
		for _, i := range operands {
			w.claim(&args[i], Read, "argument", ocst)
		}
	}
}

// genericClaims records read claims for path-looking arguments not handled
// otherwise: operands, --flag=value and key=value values, @file values and
// rooted values of short options (-I/usr/include).
func (w *walker) genericClaims(args []xword, cst *cwdState, skip []bool) {
	if _, known := writers[w.curName]; !known && !noFileOperands[w.curName] {
		w.outputClaims(args, cst, skip)
	}
	end := false
	for i := range args {
		if skip != nil && skip[i] {
			continue
		}
		a := &args[i]
		raw := a.Value
		if a.Kind == Dynamic {
			raw = a.raw
		}
		if !end && a.Kind == Literal && raw == "--" {
			end = true
			continue
		}
		if !end && len(raw) > 1 && raw[0] == '-' {
			if k := strings.IndexByte(raw, '='); k > 0 {
				x := subword(w, a, raw[:k+1])
				w.valueClaim(&x, cst)
			} else if raw[1] != '-' && len(raw) > 2 {
				// -fFILE: the value of a short option, attached.
				x := subword(w, a, raw[:2])
				w.valueClaim(&x, cst)
			}
			continue
		}
		w.argClaim(a, cst)
	}
}

// argClaim claims an operand: key=value values, @file and every other
// word. A word that looks like a path is a claim; a literal that does not
// (cat envlink) is a candidate, judged when a file of that name exists; a
// glob is a claim on its matches; a word only known at run time ($F,
// $(cat list)) is an unresolved operand claim — except for the programs
// in noFileOperands, which never open their operands.
func (w *walker) argClaim(a *xword, cst *cwdState) {
	raw := a.Value
	if a.Kind == Dynamic {
		raw = a.raw
	}
	if k := strings.IndexByte(raw, '='); k > 0 && isName(raw[:k]) {
		x := subword(w, a, raw[:k+1])
		w.valueClaim(&x, cst)
		return
	}
	if strings.HasPrefix(raw, "@") && len(raw) > 1 {
		x := subword(w, a, "@")
		w.operand(&x, Read, "argument", cst)
	}
	w.operand(a, Read, "argument", cst)
}

// operand claims any operand word with op (see argClaim).
func (w *walker) operand(a *xword, op Op, source string, cst *cwdState) {
	if a.procSubst {
		return
	}
	if noFileOperands[w.curName] && a.Kind != Literal {
		return
	}
	switch {
	case a.Kind == Literal && isURL(a.path):
		w.candidate(a, op, source, cst)
	case looksLikePath(a), a.Kind == Glob:
		w.claim(a, op, source, cst)
	case a.Kind == Literal:
		w.candidate(a, op, source, cst)
	case a.found && w.findStarts != nil:
		w.claim(a, op, source, cst)
	case a.Kind == Dynamic && w.isLoopVar(a):
		w.claim(a, op, source, cst)
	case a.Kind == Dynamic:
		reason := a.unresolved
		if reason == "" {
			reason = a.dyn
		}
		cl := Claim{Arg: a.raw, Path: a.raw, Op: op, Source: source, Operand: true,
			Unresolved: "operand " + a.raw + " is only known at run time (" + reason + ")"}
		w.addClaim(cl)
	}
}

func (w *walker) isLoopVar(a *xword) bool {
	_, _, ok := w.loopItems(a)
	return ok
}

// candidate claims a literal operand that does not look like a path.
func (w *walker) candidate(a *xword, op Op, source string, cst *cwdState) {
	if a.path == "" || a.path == "-" || isPseudoDevice(a.path) || noFileOperands[w.curName] {
		return
	}
	x := *a
	x.path = path.Clean(a.path)
	w.candidateMode = true
	w.claim(&x, op, source, cst)
	w.candidateMode = false
}

// isURL reports a word shaped like scheme://...
func isURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for k := 0; k < i; k++ {
		c := s[k]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || k > 0 && (c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// noFileOperands are programs and builtins that never open their operands
// as files: a word only known at run time is harmless there.
var noFileOperands = map[string]bool{
	"echo": true, "printf": true, "true": true, "false": true, ":": true, "test": true, "[": true,
	"expr": true, "sleep": true, "seq": true, "basename": true, "dirname": true, "shift": true,
	"exit": true, "return": true, "break": true, "continue": true, "wait": true, "kill": true,
	"local": true, "export": true, "readonly": true, "unset": true, "set": true, "[[": true, "declare": true, "typeset": true,
}

// valueClaim claims an option's value like an operand: a path, a
// candidate (judged when such a file exists), a glob, or — only known at
// run time — unresolved.
func (w *walker) valueClaim(x *xword, cst *cwdState) {
	if strings.HasPrefix(x.Value, "@") && x.Kind != Dynamic {
		y := subword(w, x, "@")
		x = &y
	}
	w.operand(x, Read, "option", cst)
}

// envKind classifies environment variables whose value changes what runs.
type envKind uint8

const (
	envOpaque  envKind = iota // the value loads code the gate cannot read
	envCommand                // the value is a shell command
	envPrompt                 // the value is a prompt string
)

var envVars = map[string]envKind{
	"GIT_SSH_COMMAND": envCommand, "GIT_SSH": envCommand, "GIT_EXTERNAL_DIFF": envCommand,
	"GIT_PAGER": envCommand, "PAGER": envCommand, "MANPAGER": envCommand, "GIT_EDITOR": envCommand,
	"EDITOR": envCommand, "VISUAL": envCommand, "GIT_ASKPASS": envCommand, "SSH_ASKPASS": envCommand,
	"SUDO_ASKPASS": envCommand, "GIT_PROXY_COMMAND": envCommand, "PROMPT_COMMAND": envCommand,
	"LESSOPEN": envCommand, "LESSCLOSE": envCommand, "GIT_SEQUENCE_EDITOR": envCommand,
	"PS0": envPrompt, "PS1": envPrompt, "PS2": envPrompt, "PS3": envPrompt, "PS4": envPrompt,
	"PATH": envOpaque, "LD_PRELOAD": envOpaque, "LD_LIBRARY_PATH": envOpaque, "LD_AUDIT": envOpaque,
	"BASH_ENV": envOpaque, "ENV": envOpaque, "SHELLOPTS": envOpaque, "BASHOPTS": envOpaque,
	"PERL5OPT": envOpaque, "PERL5LIB": envOpaque, "PERLLIB": envOpaque, "PYTHONPATH": envOpaque,
	"PYTHONSTARTUP": envOpaque, "PYTHONHOME": envOpaque, "NODE_OPTIONS": envOpaque, "NODE_PATH": envOpaque,
	"RUBYOPT": envOpaque, "RUBYLIB": envOpaque, "GIT_CONFIG_PARAMETERS": envOpaque, "GIT_CONFIG_COUNT": envOpaque,
	"GIT_EXEC_PATH": envOpaque, "GIT_TEMPLATE_DIR": envOpaque, "GIT_CONFIG_GLOBAL": envOpaque,
	"GIT_CONFIG_SYSTEM": envOpaque, "GIT_DIR": envOpaque, "DYLD_INSERT_LIBRARIES": envOpaque,
	"DYLD_LIBRARY_PATH": envOpaque, "GCONV_PATH": envOpaque, "IFS": envOpaque,
	"BASH_CMDS": envOpaque, "BASH_ALIASES": envOpaque, "GLOBIGNORE": envOpaque, "BASH_COMPAT": envOpaque,
	"BASH_LOADABLES_PATH": envOpaque, "BASH_XTRACEFD": envOpaque, "GOFLAGS": envOpaque, "GOENV": envOpaque,
	"GOTOOLCHAIN": envOpaque, "GOROOT": envOpaque, "CC": envOpaque, "CXX": envOpaque, "CGO_CFLAGS": envOpaque,
	"CGO_LDFLAGS": envOpaque, "MAKEFLAGS": envOpaque, "MFLAGS": envOpaque, "MAKE": envOpaque, "MAKEFILES": envOpaque,
	"SHELL": envOpaque, "HOME": envOpaque, "XDG_CONFIG_HOME": envOpaque, "BROWSER": envCommand,
	"JAVA_TOOL_OPTIONS": envOpaque, "_JAVA_OPTIONS": envOpaque, "JDK_JAVA_OPTIONS": envOpaque, "CLASSPATH": envOpaque,
	"LUA_INIT": envOpaque, "RUSTC_WRAPPER": envOpaque, "RUSTFLAGS": envOpaque, "RUSTC": envOpaque,
	"NPM_CONFIG_USERCONFIG": envOpaque, "BUNDLE_GEMFILE": envOpaque, "GEM_HOME": envOpaque, "GEM_PATH": envOpaque,
	"FPATH": envOpaque, "CDPATH": envOpaque, "TMPDIR": envOpaque, "ZDOTDIR": envOpaque,
	"TZ": envOpaque, "TZDIR": envOpaque, "MAGIC": envOpaque, "TAR_OPTIONS": envOpaque, "GZIP": envOpaque,
	"XZ_OPT": envOpaque, "ZIPOPT": envOpaque, "UNZIP": envOpaque, "GREP_OPTIONS": envOpaque, "HISTFILE": envOpaque,
	"LOCPATH": envOpaque, "NLSPATH": envOpaque, "TERMINFO": envOpaque, "INPUTRC": envOpaque, "XDG_CACHE_HOME": envOpaque,
	"XDG_DATA_HOME": envOpaque, "GOCACHE": envOpaque, "GOTMPDIR": envOpaque, "GOPATH": envOpaque, "GOMODCACHE": envOpaque,
	"GOPROXY": envOpaque, "GONOSUMDB": envOpaque, "GOINSECURE": envOpaque, "OLDPWD": envOpaque, "PWD": envOpaque,
	"XZ_DEFAULTS": envOpaque, "UNZIPOPT": envOpaque, "OPENSSL_CONF": envOpaque, "OPENSSL_MODULES": envOpaque,
	"BZIP": envOpaque, "BZIP2": envOpaque, "ZSTD_NBTHREADS": envOpaque, "SSH_AUTH_SOCK": envOpaque, "GNUPGHOME": envOpaque,
	"CURL_HOME": envOpaque, "WGETRC": envOpaque, "SQLITE_HISTORY": envOpaque, "PARALLEL": envOpaque,
}

// safeEnv are variables of the opaque families above that only change
// identities, output or buffering.
var safeEnv = map[string]bool{
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true, "GIT_COMMITTER_NAME": true,
	"GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true, "GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true,
	"GIT_PAGER": true, "GIT_EDITOR": true, "GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_EXTERNAL_DIFF": true,
	"GIT_ASKPASS": true, "GIT_PROXY_COMMAND": true, "GIT_SEQUENCE_EDITOR": true, "GIT_FLUSH": true,
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONHASHSEED": true, "PYTHONIOENCODING": true,
	"PYTHONUTF8": true, "NODE_ENV": true, "NODE_NO_WARNINGS": true,
}

// outputOpts are options that name an output file for programs the writer
// table does not know (openssl -out, --output=FILE): their values are
// write claims, as are the values of any --*-dir, --*-directory, --cache
// and --prefix option (npm --logs-dir=DIR writes there).
var outputOpts = []string{"-o", "--output", "-out", "--out", "--output-file", "--outfile", "--output-dir",
	"--output-directory", "-outdir", "-keyout"}

// outputClaims claims the values of outputOpts as writes.
func (w *walker) outputClaims(args []xword, cst *cwdState, skip []bool) {
	for i := 0; i < len(args); i++ {
		if skip != nil && skip[i] {
			continue
		}
		a := &args[i]
		if a.Kind != Literal || !strings.HasPrefix(a.Value, "-") {
			continue
		}
		if a.Value == "--" {
			return
		}
		name, _, hasEq := strings.Cut(a.Value, "=")
		dirOpt := strings.HasPrefix(name, "--") && (strings.HasSuffix(name, "-dir") || strings.HasSuffix(name, "-directory") ||
			name == "--cache" || name == "--prefix")
		for _, o := range outputOpts {
			if !dirOpt && name != o && !(strings.HasPrefix(o, "--") && optIs(name, o)) {
				continue
			}
			if hasEq {
				x := subword(w, a, name+"=")
				w.claim(&x, Write, "writer argument", cst)
			} else if i+1 < len(args) {
				w.claim(&args[i+1], Write, "writer argument", cst)
			}
			break
		}
	}
}

// opaqueVar returns why assigning name makes later commands unreadable.
func opaqueVar(name string) string {
	kind, ok := envVars[name]
	switch {
	case ok && kind == envOpaque:
		return "setting " + name + " changes which code later commands run"
	case strings.HasSuffix(name, "_OPTIONS") || strings.HasSuffix(name, "_OPTS") || strings.HasSuffix(name, "OPT") ||
		strings.HasSuffix(name, "_DEFAULTS") || strings.HasSuffix(name, "_CONF") || strings.HasSuffix(name, "_CONFIG") ||
		strings.HasSuffix(name, "_CONFIG_FILE") || strings.HasSuffix(name, "RC") || strings.HasSuffix(name, "_HOME"):
		return "setting " + name + " gives a program options, configuration or a home directory the gate cannot read"
	case strings.HasPrefix(name, "BASH_FUNC_"), strings.HasPrefix(name, "LD_"), strings.HasPrefix(name, "DYLD_"),
		strings.HasPrefix(name, "PYTHON") && !safeEnv[name], strings.HasPrefix(name, "PERL"), strings.HasPrefix(name, "RUBY"),
		strings.HasPrefix(name, "NODE_") && !safeEnv[name], strings.HasPrefix(name, "npm_config_"),
		strings.HasPrefix(name, "NPM_CONFIG_"), strings.HasPrefix(name, "CARGO_"),
		strings.HasPrefix(name, "GIT_") && !safeEnv[name]:
		return "setting " + name + " changes which code later commands run"
	}
	return ""
}
