package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/cordon-sandbox/cordon/policy"
)

// Scope is how long an approval holds.
type Scope uint8

const (
	// ScopeOnce approves this one operation.
	ScopeOnce Scope = iota
	// ScopeSession approves the same request again until the session
	// ends (see ApprovalRequest.Covers for what "the same" is).
	ScopeSession
)

// String returns "once", "session" or "always".
func (s Scope) String() string {
	switch s {
	case ScopeOnce:
		return "once"
	case ScopeSession:
		return "session"
	case ScopeAlways:
		return "always"
	}
	return "Scope(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText implements encoding.TextMarshaler.
func (s Scope) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Answer is an Asker's decision on an ask.
type Answer struct {
	// Allow approves the operation; false refuses it.
	Allow bool
	// Scope is how long an approval holds; a scope the request does not
	// offer (ApprovalRequest.Scopes) counts as ScopeOnce.
	Scope Scope
}

// Asker decides an operation the policy marks "ask", like Approver, and
// may answer for the rest of the session (Answer.Scope). It may be called
// concurrently.
type Asker func(ctx context.Context, req *ApprovalRequest) (Answer, error)

// grantScope is what a session-scoped answer to one ask covers: the
// operation's exact target, so that a later ask it covers is not put to
// the approver again.
type grantScope interface {
	// covered reports that g covers the ask.
	covered(g *sessionGrants) bool
	// record adds the ask's cover to g.
	record(g *sessionGrants)
	// describe says what a session answer covers.
	describe() string
}

// sessionGrants are the session-scoped approvals of a session.
type sessionGrants struct {
	mu    sync.Mutex
	cmds  map[string]bool // segment keys: see cmdScope
	paths []pathGrant
	hosts map[string]bool // host:port
}

// pathGrant approves op on path and below for a tool ("shell" for the
// path claims of commands).
type pathGrant struct {
	tool string
	op   policy.Op
	path string
}

func (g pathGrant) covers(tool string, op policy.Op, path string) bool {
	return g.tool == tool && (g.op == op || g.op == policy.Write) && within(path, g.path)
}

// within reports p at or below dir.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// pathScope covers op on a resolved path and below it by one tool.
type pathScope struct{ g pathGrant }

func (p pathScope) covered(g *sessionGrants) bool {
	for _, x := range g.paths {
		if x.covers(p.g.tool, p.g.op, p.g.path) {
			return true
		}
	}
	return false
}

func (p pathScope) record(g *sessionGrants) { g.paths = append(g.paths, p.g) }

func (p pathScope) describe() string {
	return p.g.tool + " " + p.g.op.String() + " of " + p.g.path + " and below it"
}

// hostScope covers connections to one host and port.
type hostScope struct{ hostPort string }

func (h hostScope) covered(g *sessionGrants) bool { return g.hosts[h.hostPort] }
func (h hostScope) record(g *sessionGrants)       { g.hosts[h.hostPort] = true }
func (h hostScope) describe() string              { return "connections to " + h.hostPort }

// cmdScope covers the asking parts of a command: each asking segment by
// its words and the content of the files it names (so a session answer
// for "sh build.sh" does not survive a change of build.sh), and each
// asking path claim by its path and op.
type cmdScope struct {
	segs  []string   // keys
	words [][]string // the segments' words, for describe and an "always" rule
	// named: the command names files; plain: every asking segment is
	// written as its words alone (no assignment, wrapper or quoting that a
	// command rule would not see). An "always" rule needs !named && plain.
	named, plain bool
	claims       []pathGrant
}

func (c *cmdScope) covered(g *sessionGrants) bool {
	for _, k := range c.segs {
		if !g.cmds[k] {
			return false
		}
	}
	for _, cl := range c.claims {
		if !(pathScope{cl}).covered(g) {
			return false
		}
	}
	return true
}

func (c *cmdScope) record(g *sessionGrants) {
	for _, k := range c.segs {
		g.cmds[k] = true
	}
	g.paths = append(g.paths, c.claims...)
}

func (c *cmdScope) describe() string {
	var parts []string
	for _, ws := range c.words {
		parts = append(parts, "the command "+strconv.Quote(strings.Join(ws, " "))+" as written (and the same content of the files it names)")
	}
	for _, cl := range c.claims {
		parts = append(parts, "commands' "+cl.op.String()+" of "+cl.path+" and below it")
	}
	return strings.Join(parts, "; ")
}

// commandScope returns what a session answer to a command's ask covers,
// or nil when it cannot be covered: a segment that asks is dynamic, or
// names files whose content cannot be pinned (see namedFiles).
func commandScope(root, cwd, command string, v *policy.CommandVerdict) grantScope {
	files, ok := namedFiles(root, cwd, command)
	if !ok {
		return nil
	}
	c := &cmdScope{named: len(files) > 0, plain: true}
	for _, sv := range v.Segments {
		if sv.Decision != policy.Ask {
			continue
		}
		if sv.Dynamic != "" || len(sv.Words) == 0 {
			return nil
		}
		// The text as written is part of the key: assignments (PATH=./bin
		// ls, BASH_ENV=...) are not among the words.
		k := sv.Text + "\x01" + strings.Join(sv.Words, "\x00") + "\x01" + cwd + "\x01" + strings.Join(files, "\x00")
		c.segs = append(c.segs, k)
		c.words = append(c.words, sv.Words)
		// "exec prog args" runs prog in the shell's place (sandbox-probe
		// run's wrapper form): the same words, so still plain.
		text := strings.TrimSpace(sv.Text)
		if rest, ok := strings.CutPrefix(text, "exec "); ok {
			text = strings.TrimSpace(rest)
		}
		c.plain = c.plain && text == strings.Join(sv.Words, " ")
	}
	for _, cl := range v.Claims {
		cv := cl.Verdict
		if cv == nil || cv.Decision != policy.Ask {
			continue
		}
		if cv.Rule == policy.RuleUnresolvedPath || !filepath.IsAbs(cv.Path) {
			return nil
		}
		c.claims = append(c.claims, pathGrant{tool: "shell", op: cv.Op, path: cv.Path})
	}
	return c
}

// hostKey is the key of a host scope.
func hostKey(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// maxHashed is the largest file a session grant covers, and maxHashedTotal
// the most one command's named files may hold together; a command naming
// more asks every time.
const (
	maxHashed      = 8 << 20
	maxHashedTotal = 32 << 20
)

// namedFiles returns "path resolved sha256" for the files command names:
// every word and input redirection naming a regular file (relative to
// cwd, symbolic links followed), whatever the program (an interpreter
// list was incomplete: python3.11, perl5.36, mawk). So a session grant for
// "./build.sh", `sh "build.sh"`, "sh < build.sh" or "cat build.sh | sh"
// does not survive a change of the file: the agent could rewrite it and
// run anything under the same approval. Output redirection targets are
// not hashed (the command writes them). A bare word also covers a
// program of that name in the root's .venv/bin or venv/bin, which the
// workspace puts first on PATH when it holds a python. The words are the
// shell's own after quote removal (mvdan.cc/sh parses the command).
//
// ok is false when the command cannot be covered by content: it does not
// parse, or a word's value is known only when it runs (a parameter,
// command or arithmetic expansion, a glob, a brace expansion, a leading
// ~), or its files are too large to hash. Such a command is never
// remembered. Files a command reads without naming them (a Makefile) are
// not covered; the OS sandbox confines the command either way.
func namedFiles(root, cwd, command string) (out []string, ok bool) {
	words, ok := literalWords(command)
	if !ok {
		return nil, false
	}
	var total int64
	add := func(p string) bool {
		sum, n, ok := hashScript(p)
		if !ok {
			return true
		}
		total += n
		if sum == "" || total > maxHashedTotal {
			return false
		}
		out = append(out, p+" "+sum)
		return true
	}
	for _, w := range words {
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if !add(p) {
			return nil, false
		}
		// A bare name may run a program of the root's virtualenv, which
		// the workspace puts first on PATH (and the agent can create).
		if !strings.ContainsRune(w, '/') {
			for _, venv := range []string{".venv", "venv"} {
				if !add(filepath.Join(root, venv, "bin", w)) {
					return nil, false
				}
			}
		}
	}
	return out, true
}

// literalWords returns the value of every word of command (arguments,
// assignments, redirection targets, here-strings), or false when one is
// not known before the command runs.
func literalWords(command string) ([]string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, false
	}
	var words []string
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok {
			return false
		}
		if r, isRedir := n.(*syntax.Redirect); isRedir {
			switch r.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.ClbOut, syntax.DplOut:
				// Written by the command, not run: must be known, is not hashed.
				if r.Word != nil {
					if _, lit := wordValue(r.Word); !lit {
						ok = false
					}
				}
				if r.Hdoc != nil {
					return true
				}
				return false
			}
			return true
		}
		w, isWord := n.(*syntax.Word)
		if !isWord {
			return true
		}
		v, lit := wordValue(w)
		if !lit {
			ok = false
			return false
		}
		words = append(words, v)
		return false
	})
	return words, ok
}

// wordValue is the value of a word made only of literal text and quotes.
func wordValue(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			// Unquoted: globs, brace expansions and a leading ~ expand.
			if strings.ContainsAny(p.Value, "*?[{~\\") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, "\\") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// hashScript returns the resolved path and SHA-256 of p, and its size,
// when p is a regular file (symbolic links followed: where a link points
// is part of what was approved, the agent can repoint it); ok is false
// when p is not one (a missing file, a directory), and sum is "" when the
// file is too large to hash. Files outside the root are hashed too (the
// agent may be able to write there). It never blocks: the file is opened
// with O_NONBLOCK (a FIFO swapped in would otherwise hang the ask) and
// checked on the open descriptor.
func hashScript(p string) (sum string, size int64, ok bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", 0, false
	}
	f, err := os.OpenFile(real, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return "", 0, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", 0, false
	}
	if st.Size() > maxHashed {
		return "", st.Size(), true
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxHashed+1))
	if err != nil || n > maxHashed {
		return "", n, true
	}
	return real + " " + hex.EncodeToString(h.Sum(nil)), n, true
}
