package shellscan

import "strings"

// wrapperSpec describes a command that runs another command.
type wrapperSpec struct {
	// arg lists short options taking an argument; noArg those without.
	arg, noArg string
	// argLong and noArgLong are the long options.
	argLong, noArgLong []string
	// operands is how many operands come before the command (timeout DUR).
	operands int
	// assigns skips NAME=value operands (env, sudo).
	assigns bool
	// numeric accepts -N options (nice -10).
	numeric bool
	// privileged wrappers are judged with and without the wrapper in full.
	privileged bool
	// stop lists options (short letters or long names) after which no
	// command runs (command -v, ionice -p, sudo -l).
	stop, stopLong string
	// dir, write, read, split, replace name the options whose argument is
	// the command's directory, a written file, a read file, a string split
	// into words (env -S), the replacement string (xargs -I).
	dir, write, read, split, replace string
	// optional lists short options whose argument is optional and only
	// attached (xargs -i, -e, -l).
	optional string
}

var wrappers = map[string]*wrapperSpec{
	"env": {arg: "uCS", noArg: "i0v", argLong: []string{"--unset", "--chdir", "--split-string"},
		noArgLong: []string{"--ignore-environment", "--null", "--debug", "--default-signal", "--ignore-signal", "--block-signal", "--list-signal-handling"},
		assigns:   true, dir: "C,--chdir", split: "S,--split-string"},
	"command": {noArg: "pvV", stop: "vV"},
	"builtin": {},
	"exec":    {arg: "a", noArg: "cl"},
	"nohup":   {},
	"nice":    {arg: "n", argLong: []string{"--adjustment"}, numeric: true},
	"time": {arg: "fo", noArg: "apqvV", argLong: []string{"--format", "--output"},
		noArgLong: []string{"--append", "--portability", "--verbose", "--quiet"}, write: "o,--output"},
	"timeout": {arg: "sk", noArg: "v", argLong: []string{"--signal", "--kill-after"},
		noArgLong: []string{"--preserve-status", "--foreground", "--verbose"}, operands: 1},
	"stdbuf":  {arg: "ioe", argLong: []string{"--input", "--output", "--error"}},
	"setsid":  {noArg: "cfw", noArgLong: []string{"--ctty", "--fork", "--wait"}},
	"ionice":  {arg: "cnpPu", noArg: "t", argLong: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}, noArgLong: []string{"--ignore"}, stop: "pPu", stopLong: "--pid,--pgid,--uid"},
	"busybox": {},
	"xargs": {arg: "adEILnPs", noArg: "0oprtx", optional: "eil",
		argLong: []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
		noArgLong: []string{"--null", "--open-tty", "--interactive", "--no-run-if-empty", "--verbose", "--exit", "--show-limits",
			"--eof", "--replace", "--max-lines"},
		read: "a,--arg-file", replace: "I,i,--replace"},
	"sudo": {arg: "CDghpRrTtUu", noArg: "AbEeHiKklNnPSsVv",
		argLong: []string{"--chdir", "--close-from", "--group", "--host", "--prompt", "--chroot", "--role", "--type",
			"--command-timeout", "--other-user", "--user"},
		noArgLong: []string{"--askpass", "--background", "--preserve-env", "--edit", "--set-home", "--login",
			"--remove-timestamp", "--reset-timestamp", "--list", "--non-interactive", "--preserve-groups", "--stdin",
			"--shell", "--validate", "--version", "--bell", "--no-update", "--help"},
		assigns: true, privileged: true, stop: "elvVK", stopLong: "--edit,--list,--validate,--version,--help",
		dir: "D,--chdir,R,--chroot"},
	"doas": {arg: "uC", noArg: "nsL", privileged: true, stop: "CL"},
}

// wrapResult is what a wrapper's options say.
type wrapResult struct {
	next          int // index of the wrapped command in the words
	stop          bool
	opaque        string
	reads, writes []xword
	dir, split    *xword
	replace       string
}

func optIn(list, opt string) bool {
	if list == "" {
		return false
	}
	for _, o := range strings.Split(list, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

func inList(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parse reads the wrapper's options from words (words[0] is the wrapper).
func (s *wrapperSpec) parse(w *walker, words []xword) wrapResult {
	var r wrapResult
	unknown := func(opt string) {
		if r.opaque == "" {
			r.opaque = "unknown option " + opt + " to " + baseName(&words[0])
		}
	}
	value := func(opt string, x xword) {
		key := strings.TrimLeft(opt, "-")
		if strings.HasPrefix(opt, "--") {
			key = opt
		}
		switch {
		case optIn(s.dir, key):
			r.dir = &x
		case optIn(s.write, key):
			r.writes = append(r.writes, x)
		case optIn(s.read, key):
			r.reads = append(r.reads, x)
		case optIn(s.split, key):
			r.split = &x
		case optIn(s.replace, key):
			r.replace = x.Value
			if x.Kind != Literal {
				r.replace = "\x00"
			}
		}
		if optIn(s.stopLong, opt) {
			r.stop = true
		}
	}
	i := 1
	for ; i < len(words); i++ {
		a := &words[i]
		if a.Kind == Dynamic && strings.HasPrefix(a.raw, "-") {
			unknown(a.raw)
			continue
		}
		if a.Kind != Literal {
			break
		}
		v := a.Value
		if v == "--" {
			i++
			break
		}
		if v == "-" && baseName(&words[0]) == "env" {
			continue
		}
		if s.assigns && isAssignment(v) {
			r.assign(v)
			continue
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasEq := strings.Cut(v, "=")
			if s.numeric && isNumber(name[2:]) {
				continue
			}
			switch {
			case inList(s.argLong, name):
				if hasEq {
					x := subword(w, a, name+"=")
					_ = val
					value(name, x)
				} else if i+1 < len(words) {
					i++
					value(name, words[i])
				}
			case inList(s.noArgLong, name):
				if name == "--replace" {
					r.replace = "{}"
					if hasEq {
						r.replace = val
					}
				}
				value(name, xword{})
			default:
				unknown(name)
			}
			continue
		}
		if s.numeric && isNumber(v[1:]) {
			continue
		}
		for j := 1; j < len(v); j++ {
			ch := v[j]
			switch {
			case strings.IndexByte(s.arg, ch) >= 0:
				if j+1 < len(v) {
					value("-"+string(ch), subword(w, a, v[:j+1]))
				} else if i+1 < len(words) {
					i++
					value("-"+string(ch), words[i])
				}
				j = len(v)
			case strings.IndexByte(s.optional, ch) >= 0:
				if ch == 'i' {
					r.replace = "{}"
					if j+1 < len(v) {
						r.replace = v[j+1:]
					}
				}
				j = len(v)
			case strings.IndexByte(s.noArg, ch) >= 0:
				if strings.IndexByte(s.stop, ch) >= 0 {
					r.stop = true
				}
			default:
				unknown("-" + string(ch))
			}
			if strings.IndexByte(s.stop, ch) >= 0 {
				r.stop = true
			}
		}
	}
	for n := 0; n < s.operands && i < len(words); n++ {
		i++
	}
	for s.assigns && i < len(words) && words[i].Kind == Literal && isAssignment(words[i].Value) {
		r.assign(words[i].Value)
		i++
	}
	for s.assigns && i < len(words) && words[i].Kind != Literal && isAssignment(words[i].raw) {
		r.assign(words[i].raw)
		i++
	}
	r.next = i
	return r
}

// isAssignment reports NAME=value words.
func isAssignment(v string) bool {
	name, _, ok := strings.Cut(v, "=")
	return ok && isName(name)
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// subword returns the part of x after prefix (an option name and "=", or a
// short option), as a word of its own, with a leading "~" expanded.
func subword(w *walker, x *xword, prefix string) xword {
	if x.Kind == Dynamic {
		rest := x.raw
		if i := strings.IndexByte(rest, '='); i >= 0 && strings.HasSuffix(prefix, "=") {
			rest = rest[i+1:]
		} else if len(rest) >= len(prefix) {
			rest = rest[len(prefix):]
		}
		out := xword{Word: Word{Value: rest, Kind: Dynamic}, raw: x.raw, dyn: x.dyn, path: rest}
		out.slash = strings.Contains(rest, "/")
		out.tilde = strings.HasPrefix(rest, "~")
		out.unresolved = x.unresolved
		if out.unresolved == "" {
			out.unresolved = x.dyn
		}
		return out
	}
	v := strings.TrimPrefix(x.Value, prefix)
	out := xword{Word: Word{Value: v, Kind: x.Kind}, raw: x.raw, path: v, slash: strings.Contains(v, "/"), unresolved: x.unresolved}
	if x.Kind == Glob {
		out.Pattern = strings.TrimPrefix(x.Pattern, prefix)
		if strings.HasPrefix(x.Pattern, prefix) {
			out.pathGlob = out.Pattern
		}
	}
	if v == "~" || strings.HasPrefix(v, "~/") {
		out.tilde = true
		switch {
		case w.homeChanged != "":
			out.unresolved = w.homeChanged
		case w.opts.Home == "":
			out.unresolved = "~ used but no home directory is configured"
		default:
			out.path = w.opts.Home + v[1:]
			if out.pathGlob != "" {
				out.pathGlob = escapeGlob(w.opts.Home) + out.pathGlob[1:]
			}
		}
	}
	return out
}

func escapeGlob(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			sb.WriteByte('\\')
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// assign judges env's NAME=value: a variable that changes which code runs
// (LD_PRELOAD, GIT_CONFIG_*, PAGER, ...) makes the command opaque, as it
// does as a shell assignment.
func (r *wrapResult) assign(v string) {
	name, _, _ := strings.Cut(v, "=")
	if r.opaque != "" {
		return
	}
	if why := opaqueVar(name); why != "" {
		r.opaque = why
	} else if _, ok := envVars[name]; ok {
		r.opaque = "env sets " + name + ", which names a command or prompt the gate does not follow through env"
	}
}
