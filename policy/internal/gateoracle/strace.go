//go:build linux

package gateoracle

import (
	"bufio"
	"encoding/hex"
	"io"
	"path"
	"strconv"
	"strings"
)

// Kind is what a traced system call did.
type Kind uint8

// Event kinds.
const (
	// Exec is a successful execve: Argv is what ran, Path the program.
	Exec Kind = iota + 1
	// Read opened Path for reading (not a directory).
	Read
	// List opened the directory Path (getdents follows).
	List
	// Write created, changed, renamed, linked or removed Path, or tried
	// to and failed for a reason other than a missing file.
	Write
	// Link made a new name for the existing file Path (link, linkat).
	Link
	// Connect is a connect(2) to an internet address.
	Connect
)

var kindNames = [...]string{Exec: "exec", Read: "read", List: "list", Write: "write", Link: "link", Connect: "connect"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one effect of a traced command, as the kernel saw it.
type Event struct {
	Kind Kind
	PID  int
	// Prog is the program the process was running (the basename of its
	// last exec), for Exec the new one.
	Prog string
	// Path is absolute: the kernel's own name for opened files (strace
	// -y), otherwise the argument joined to the directory it was
	// relative to (not resolved).
	Path string
	Argv []string
	// Syscall is the call and its result, for messages.
	Syscall string
	// Code reports a process running code from a file in one of the
	// code directories (a script or program in the workspace), or a
	// descendant of one.
	Code bool
}

// traceCalls are the system calls the oracle traces.
const traceCalls = "execve,execveat,open,openat,openat2,creat,unlink,unlinkat,rmdir,rename,renameat,renameat2," +
	"link,linkat,symlink,symlinkat,mkdir,mkdirat,mknod,mknodat,truncate,chmod,fchmodat,chown,lchown,fchownat," +
	"utimensat,connect,clone,clone3,fork,vfork,chdir,fchdir"

// parser turns strace -f -y -xx output into events. strace may print a
// child's calls before its parent's fork returns, so every process is
// followed and the events are filtered at the end: those of the process
// that executes start, from that exec on, and of its descendants.
type parser struct {
	start    string // the program whose exec starts the trace
	pending  map[int]string
	prog     map[int]string // pid -> program, when it executed one
	cwd      map[int]string // pid -> working directory, when known
	parent   map[int]int
	cwd0     string
	codeDirs []string
	code     map[int]bool
	startPID int
	startIdx int
	events   []Event
}

// Parse reads strace output (strace -f -qq -y -xx -s N -e trace=traceCalls)
// and returns the events of the process that first executes start
// (an absolute program path) in the directory cwd, and every process it
// forks.
//
// A process that executes a file inside one of codeDirs, or runs an
// interpreter on such a file (sh script.sh, python x.py), and its
// descendants, have their events marked Code.
func Parse(r io.Reader, start, cwd string, codeDirs ...string) ([]Event, error) {
	p := &parser{start: start, cwd0: cwd, codeDirs: codeDirs, pending: map[int]string{}, prog: map[int]string{},
		cwd: map[int]string{}, parent: map[int]int{}, code: map[int]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		p.line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if p.startPID == 0 {
		return nil, nil
	}
	var out []Event
	for i, e := range p.events {
		if i < p.startIdx || !p.descends(e.PID) {
			continue
		}
		if e.Prog == "" {
			e.Prog = p.progOf(e.PID)
		}
		e.Code = p.codeOf(e.PID)
		out = append(out, e)
	}
	return out, nil
}

func (p *parser) descends(pid int) bool {
	for n := 0; pid != 0 && n < 1<<16; n++ {
		if pid == p.startPID {
			return true
		}
		pid = p.parent[pid]
	}
	return false
}

func (p *parser) codeOf(pid int) bool {
	for n := 0; pid != 0 && n < 1<<16; n++ {
		if p.code[pid] {
			return true
		}
		pid = p.parent[pid]
	}
	return false
}

func (p *parser) inCode(file string) bool {
	for _, d := range p.codeDirs {
		if file == d || strings.HasPrefix(file, d+"/") {
			return true
		}
	}
	return false
}

func (p *parser) progOf(pid int) string {
	for n := 0; pid != 0 && n < 1<<16; n++ {
		if prog, ok := p.prog[pid]; ok {
			return prog
		}
		pid = p.parent[pid]
	}
	return ""
}

func (p *parser) line(l string) {
	pidStr, rest, ok := strings.Cut(l, " ")
	if !ok {
		return
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil {
		return
	}
	rest = strings.TrimLeft(rest, " ")
	if strings.HasPrefix(rest, "---") || strings.HasPrefix(rest, "+++") {
		return
	}
	if s, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
		p.pending[pid] = s
		return
	}
	if strings.HasPrefix(rest, "<... ") {
		_, after, ok := strings.Cut(rest, " resumed>")
		if !ok {
			return
		}
		rest = p.pending[pid] + after
		delete(p.pending, pid)
	}
	name, args, ret, ok := splitCall(rest)
	if !ok {
		return
	}
	if p.startPID == 0 && (name == "execve" || name == "execveat") && retOK(ret) && len(args) > 0 && decodeString(args[0]) == p.start {
		p.startPID, p.startIdx = pid, len(p.events)
		p.prog[pid] = path.Base(p.start)
		p.cwd[pid] = p.cwd0
		return
	}
	for _, a := range args {
		if strings.HasPrefix(a, "AT_FDCWD<") {
			p.cwd[pid] = fdPath(a)
		}
	}
	cwd := p.cwd[pid]
	if cwd == "" {
		for q := p.parent[pid]; q != 0 && cwd == ""; q = p.parent[q] {
			cwd = p.cwd[q]
		}
	}
	prog := p.prog[pid]
	call := name + "(...) = " + ret
	switch name {
	case "clone", "clone3", "fork", "vfork":
		if child, err := strconv.Atoi(firstWord(ret)); err == nil && child > 0 {
			p.parent[child] = pid
			if p.cwd[child] == "" {
				p.cwd[child] = cwd
			}
		}
	case "chdir", "fchdir":
		if retOK(ret) && len(args) == 1 {
			if name == "chdir" {
				p.cwd[pid] = absolute(cwd, decodeString(args[0]))
			} else {
				p.cwd[pid] = fdPath(args[0])
			}
		}
	case "execve", "execveat":
		if !retOK(ret) {
			// A script without #! fails with ENOEXEC; the shell then
			// runs it in the same process.
			if strings.HasPrefix(ret, "-1 ENOEXEC") && len(args) > 0 && p.inCode(absolute(cwd, decodeString(args[0]))) {
				p.code[pid] = true
			}
			return
		}
		var file string
		var argv []string
		if name == "execve" && len(args) >= 2 {
			file, argv = decodeString(args[0]), decodeArray(args[1])
			file = absolute(cwd, file)
		} else if len(args) >= 3 {
			file, argv = absolute(fdPath(args[0]), decodeString(args[1])), decodeArray(args[2])
		}
		prog = path.Base(file)
		p.prog[pid] = prog
		if p.inCode(file) {
			p.code[pid] = true
		} else if len(argv) > 1 {
			for _, a := range argv[1:] {
				if strings.HasPrefix(a, "-") {
					continue
				}
				if p.inCode(absolute(cwd, a)) && scriptRunner(prog) {
					p.code[pid] = true
				}
				break
			}
		}
		p.add(Event{Kind: Exec, PID: pid, Prog: prog, Path: file, Argv: argv, Syscall: call})
		p.add(Event{Kind: Read, PID: pid, Prog: prog, Path: file, Syscall: call})
	case "open", "openat", "openat2", "creat":
		var dir, name2, flags string
		switch name {
		case "open", "creat":
			if len(args) < 1 {
				return
			}
			dir = cwd
			name2 = decodeString(args[0])
			if len(args) > 1 {
				flags = args[1]
			}
			if name == "creat" {
				flags = "O_CREAT|O_WRONLY|O_TRUNC"
			}
		default:
			if len(args) < 3 {
				return
			}
			dir, name2, flags = fdPath(args[0]), decodeString(args[1]), args[2]
		}
		if strings.Contains(flags, "O_PATH") {
			return
		}
		write := strings.Contains(flags, "O_WRONLY") || strings.Contains(flags, "O_RDWR") ||
			strings.Contains(flags, "O_CREAT") || strings.Contains(flags, "O_TRUNC") || strings.Contains(flags, "O_APPEND")
		abs := absolute(dir, name2)
		if opened := fdPath(ret); opened != "" && !strings.HasPrefix(ret, "-") {
			abs = opened
		} else if !write || failedMissing(ret) {
			return
		}
		k := Read
		switch {
		case write:
			k = Write
		case strings.Contains(flags, "O_DIRECTORY"):
			k = List
		}
		p.add(Event{Kind: k, PID: pid, Prog: prog, Path: abs, Syscall: call})
	case "connect":
		if len(args) >= 2 && (strings.Contains(args[1], "AF_INET") || strings.Contains(args[1], "AF_INET6")) {
			p.add(Event{Kind: Connect, PID: pid, Prog: prog, Path: args[1], Syscall: call})
		}
	case "link", "linkat":
		var from, to string
		if name == "link" && len(args) >= 2 {
			from, to = absolute(cwd, decodeString(args[0])), absolute(cwd, decodeString(args[1]))
		} else if len(args) >= 4 {
			from, to = absolute(fdPath(args[0]), decodeString(args[1])), absolute(fdPath(args[2]), decodeString(args[3]))
		}
		if failedMissing(ret) {
			return
		}
		p.add(Event{Kind: Link, PID: pid, Prog: prog, Path: from, Syscall: call})
		p.add(Event{Kind: Write, PID: pid, Prog: prog, Path: to, Syscall: call})
	case "utimensat":
		return // touching times changes no content
	default: // path-changing calls
		if failedMissing(ret) && name != "rename" && name != "renameat" && name != "renameat2" {
			return
		}
		for _, target := range writeTargets(name, args, cwd) {
			p.add(Event{Kind: Write, PID: pid, Prog: prog, Path: target, Syscall: call})
		}
	}
}

func (p *parser) add(e Event) {
	if e.Path == "" && e.Kind != Exec {
		return
	}
	p.events = append(p.events, e)
}

// writeTargets returns the absolute paths a path-changing call writes.
func writeTargets(name string, args []string, cwd string) []string {
	at := func(fd, name int) string {
		if len(args) <= name {
			return ""
		}
		dir := cwd
		if fd >= 0 && len(args) > fd {
			dir = fdPath(args[fd])
		}
		return absolute(dir, decodeString(args[name]))
	}
	switch name {
	case "unlink", "rmdir", "mkdir", "mknod", "truncate", "chmod", "chown", "lchown", "symlink":
		if name == "symlink" {
			return []string{at(-1, 1)}
		}
		return []string{at(-1, 0)}
	case "unlinkat", "mkdirat", "mknodat", "fchmodat", "fchownat", "utimensat":
		if name == "utimensat" && len(args) > 1 && args[1] == "NULL" {
			return []string{fdPath(args[0])}
		}
		return []string{at(0, 1)}
	case "symlinkat":
		return []string{at(1, 2)}
	case "rename":
		return []string{at(-1, 0), at(-1, 1)}
	case "renameat", "renameat2":
		return []string{at(0, 1), at(2, 3)}
	}
	return nil
}

// splitCall splits `name(args) = ret` into its parts, args at top level.
func splitCall(s string) (name string, args []string, ret string, ok bool) {
	open := strings.IndexByte(s, '(')
	if open <= 0 {
		return "", nil, "", false
	}
	name = s[:open]
	depth, inQuote := 0, false
	start := open + 1
	for i := open + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote:
			if c == '\\' {
				i++
			} else if c == '"' {
				inQuote = false
			}
		case c == '"':
			inQuote = true
		case c == '[' || c == '{' || c == '<' || c == '(':
			depth++
		case c == ']' || c == '}' || c == '>' || c == ')' && depth > 0:
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(s[start:i]))
			start = i + 1
		case c == ')' && depth == 0:
			if a := strings.TrimSpace(s[start:i]); a != "" {
				args = append(args, a)
			}
			eq := strings.Index(s[i:], "= ")
			if eq < 0 {
				return name, args, "", false
			}
			return name, args, strings.TrimSpace(s[i+eq+2:]), true
		}
	}
	return "", nil, "", false
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	if i := strings.IndexByte(w, '<'); i >= 0 {
		w = w[:i]
	}
	return w
}

func retOK(ret string) bool { return firstWord(ret) == "0" }

// failedMissing reports a result that changed nothing because a file was
// missing or the call was not attempted.
func failedMissing(ret string) bool {
	return strings.HasPrefix(ret, "-1 ENOENT") || strings.HasPrefix(ret, "-1 ENOTDIR") || strings.HasPrefix(ret, "-1 EEXIST") ||
		strings.HasPrefix(ret, "-1 ENOTEMPTY") || strings.HasPrefix(ret, "-1 EBADF") || strings.HasPrefix(ret, "-1 EINVAL")
}

// fdPath returns the path strace -y printed for a descriptor argument or
// result (`3<\x2f…>`, `AT_FDCWD<\x2f…>`), or "".
func fdPath(s string) string {
	i := strings.IndexByte(s, '<')
	if i < 0 {
		return ""
	}
	k := strings.IndexByte(s[i:], '>') // the path is hex: no '>' inside
	if k < 0 {
		return ""
	}
	return unhex(s[i+1 : i+k])
}

// absolute joins name to the directory it is relative to; "" when name is
// relative and the directory unknown (strace prints no cwd for execve).
func absolute(dir, name string) string {
	if name == "" {
		return dir
	}
	if path.IsAbs(name) || dir == "" {
		if !path.IsAbs(name) {
			return ""
		}
		return path.Clean(name)
	}
	return path.Join(dir, name)
}

// decodeString decodes a strace -xx string argument ("\x2f\x74…").
func decodeString(s string) string {
	s = strings.TrimSuffix(s, "...")
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return ""
	}
	return unhex(s[1 : len(s)-1])
}

func unhex(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := hex.DecodeString(s[i+2 : i+4]); err == nil {
				b.Write(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// decodeArray decodes a strace argv array (["\x…", "\x…"]).
func decodeArray(s string) []string {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' {
		return nil
	}
	var out []string
	inQuote := false
	start := -1
	for i := 1; i < len(s); i++ {
		switch {
		case inQuote && s[i] == '\\':
			i++
		case inQuote && s[i] == '"':
			out = append(out, decodeString(s[start:i+1]))
			inQuote = false
		case !inQuote && s[i] == '"':
			inQuote, start = true, i
		}
	}
	return out
}

// scriptRunner reports interpreters whose first operand is a script.
func scriptRunner(prog string) bool {
	switch prog {
	case "sh", "dash", "bash", "busybox", "python", "python3", "node", "perl", "ruby", "make":
		return true
	}
	return strings.HasPrefix(prog, "python3.")
}
