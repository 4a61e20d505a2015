package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/cordon-sandbox/cordon/workspace"
)

// The answers an elicitation offers.
const (
	AnswerAllowOnce    = "allow_once"
	AnswerAllowSession = "allow_session"
	AnswerDeny         = "deny"
)

// askSchema is the elicitation form: one choice.
var askSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"decision": map[string]any{
			"type":        "string",
			"title":       "Decision",
			"description": "allow_once: this time only; allow_session: this exact request again until this MCP session ends; deny: refuse it",
			"enum":        []string{AnswerAllowOnce, AnswerAllowSession, AnswerDeny},
			"default":     AnswerDeny,
		},
	},
	"required": []string{"decision"},
}

// NoElicitationError is the refusal of an ask when the client cannot put
// it to the user and the server's fallback is AskDeny. Its message is
// written for the model to relay.
type NoElicitationError struct {
	Request *workspace.ApprovalRequest
}

func (e *NoElicitationError) Error() string {
	return fmt.Sprintf("%s needs the user's approval (%s), but this MCP client cannot ask the user (it does not support elicitation) and cordon mcp refuses asks it cannot put to the user (--on-ask deny); tell the user what you need: they can allow it in the workspace's policy, or restart cordon mcp with --on-ask allow",
		describe(e.Request), printable(e.Request.Reason()))
}

// Approve is the workspace.Approver of a workspace served by a Server:
// build the workspace with workspace.WithApprover(mcpserver.Approve). It
// puts the ask to the user of the client whose tool call it serves, as an
// elicitation offering allow_once, allow_session and deny (declining or
// cancelling the form denies). An allow_session answer is remembered for
// that client's session and covers exactly the same request again: the
// same tool and operation on the same resolved path; the same command
// line in the same directory with the same grants, while every file it
// names has the same content (a command whose words are known only when
// it runs is never remembered; see namedFiles); the same host and port
// from the same command. The files are hashed when the command asks, not
// as it runs: a file rewritten in between (by a background process) is not
// seen, so a session grant is a convenience that saves asking the same
// question, never a bound on what the command does; the OS sandbox is.
// A client
// without elicitation gets the server's AskFallback. Called outside a
// tool call of a Server, Approve refuses with an error.
func Approve(ctx context.Context, req *workspace.ApprovalRequest) (bool, error) {
	tc, _ := ctx.Value(callKey{}).(*toolCall)
	if tc == nil {
		return false, errors.New("mcpserver.Approve was called outside an MCP tool call")
	}
	c := tc.c
	key := askKey(req, c.srv.ws.Root())
	c.mu.Lock()
	remembered := c.grants[key]
	c.mu.Unlock()
	if remembered {
		return true, nil
	}
	log := c.srv.log.With("tool", req.Tool, "op", req.Op, "target", clip(target(req), 200))
	if !canElicit(c.mcp) {
		if c.srv.cfg.OnAsk == AskAllow {
			log.Info("ask approved by --on-ask allow (the client cannot elicit)")
			return true, nil
		}
		return false, &NoElicitationError{Request: req}
	}
	ectx := ctx
	if tc.done.Load() {
		// The call that started the command has returned (a background
		// process asks): its request's stream may be closed, so the
		// question goes out on its own, on the session's stream.
		var cancel context.CancelFunc
		ectx, cancel = context.WithCancel(context.Background())
		defer context.AfterFunc(ctx, cancel)()
		defer cancel()
	}
	res, err := c.mcp.Elicit(ectx, &mcp.ElicitParams{Message: askMessage(req, c.ss.Capabilities().Backend), RequestedSchema: askSchema})
	if err != nil {
		return false, fmt.Errorf("asking the user through the MCP client: %w", err)
	}
	answer := ""
	if res.Action == "accept" {
		answer, _ = res.Content["decision"].(string)
	}
	log.Info("ask answered", "action", res.Action, "decision", answer)
	switch answer {
	case AnswerAllowOnce:
		return true, nil
	case AnswerAllowSession:
		c.mu.Lock()
		c.grants[key] = true
		c.mu.Unlock()
		return true, nil
	}
	return false, nil
}

// canElicit reports whether the client declared form elicitation.
func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// askKey identifies what an approval covers: the operation and its exact
// target, with a command's grants (so a command whose path claims now
// resolve elsewhere asks again).
func askKey(r *workspace.ApprovalRequest, root string) string {
	var b strings.Builder
	b.WriteString(r.Tool)
	b.WriteByte(0)
	b.WriteString(r.Op)
	b.WriteByte(0)
	switch {
	case r.Op == "connect":
		b.WriteString(net.JoinHostPort(r.Host, strconv.Itoa(int(r.Port))))
		b.WriteByte(0)
		b.WriteString(r.Command)
	case r.Command != "":
		b.WriteString(r.Command)
		b.WriteByte(0)
		b.WriteString(r.Cwd)
		files, ok := namedFiles(root, r.Cwd, r.Command)
		if !ok {
			// Not coverable by content: a key no later ask can have.
			var nonce [16]byte
			_, _ = rand.Read(nonce[:])
			return "unremembered:" + hex.EncodeToString(nonce[:])
		}
		for _, h := range files {
			b.WriteByte(0)
			b.WriteString(h)
		}
		gs := make([]string, len(r.Grants))
		for i, g := range r.Grants {
			gs[i] = g.Op.String() + " " + g.Path
		}
		slices.Sort(gs)
		for _, g := range gs {
			b.WriteByte(0)
			b.WriteString(g)
		}
	default:
		b.WriteString(r.Path)
	}
	return b.String()
}

// maxHashed is the largest file a session grant covers, and maxHashedTotal
// the most one command's named files may hold together; a command naming
// more asks every time.
const (
	maxHashed      = 8 << 20
	maxHashedTotal = 32 << 20
)

// interpreters are the programs that run a file or their input as code.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true, "source": true, ".": true,
	"python": true, "python3": true, "node": true, "deno": true, "bun": true, "perl": true, "ruby": true, "php": true,
	"lua": true, "Rscript": true, "osascript": true, "awk": true, "make": true, "eval": true, "exec": true,
}

// namedFiles returns "path resolved sha256" for the files command may run:
// every word naming an executable regular file, and, when any word names
// an interpreter (sh, python3, node, make, ...; see interpreters), every
// word or redirection target naming a regular file (relative to cwd,
// symbolic links followed). So a session grant for "./build.sh",
// `sh "build.sh"`, "sh < build.sh" or "cat build.sh | sh" does not survive
// a change of the file: the agent could rewrite it and run anything under
// the same approval. A bare word also covers a program of that name in
// the root's .venv/bin or venv/bin, which the workspace puts first on
// PATH when it holds a python. The words are the shell's own after quote
// removal (mvdan.cc/sh parses the command).
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
	interp := false
	for _, w := range words {
		interp = interp || interpreters[filepath.Base(w)]
	}
	var total int64
	add := func(p string) bool {
		sum, n, ok := hashScript(p, !interp)
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
// when p is a regular file, executable if executableOnly (symbolic links followed: where a link points
// is part of what was approved, the agent can repoint it); ok is false
// when p is not one (a missing file, a directory), and sum is "" when the
// file is too large to hash. Files outside the root are hashed too (the
// agent may be able to write there). It never blocks: the file is opened
// with O_NONBLOCK (a FIFO swapped in would otherwise hang the ask) and
// checked on the open descriptor.
func hashScript(p string, executableOnly bool) (sum string, size int64, ok bool) {
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
	if err != nil || !st.Mode().IsRegular() || (executableOnly && st.Mode().Perm()&0o111 == 0) {
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

// target is the request's object: host:port, a command or a path.
func target(r *workspace.ApprovalRequest) string {
	switch {
	case r.Op == "connect":
		return net.JoinHostPort(r.Host, strconv.Itoa(int(r.Port)))
	case r.Command != "":
		return r.Command
	}
	return r.Path
}

// describe says what is asked in a few words. Everything the model
// controls is quoted (newlines, control and bidirectional characters
// escaped) and a long command is shortened with a warning, so that the
// text can never pose as the form's own lines.
func describe(r *workspace.ApprovalRequest) string {
	switch r.Op {
	case "run":
		return fmt.Sprintf("running %s in %s", quoteShown(r.Command), quoteShown(r.Cwd))
	case "spawn":
		return fmt.Sprintf("starting %s in the background in %s", quoteShown(r.Command), quoteShown(r.Cwd))
	case "connect":
		return fmt.Sprintf("connecting to %s from the command %s", strconv.Quote(target(r)), quoteShown(r.Command))
	}
	what := map[string]string{
		workspace.ToolReadFile:  "reading the file",
		workspace.ToolListFiles: "listing the directory (names, sizes, times)",
		workspace.ToolGrepFiles: "searching the contents of every file under",
		workspace.ToolWriteFile: "writing the file",
		workspace.ToolEditFile:  "editing (reading and writing) the file",
	}[r.Tool]
	if what == "" {
		what = r.Op
	}
	return what + " " + quoteShown(r.Path)
}

// maxShown is the longest command an elicitation shows whole.
const maxShown = 4000

// quoteShown quotes s with every non-ASCII character escaped (so no
// invisible, filler, combining or bidirectional character can hide
// part of it), marks runs of four or more spaces with their length
// (⟨N spaces⟩, which the escaped text itself cannot contain), and
// shortens it to its head and tail when longer than maxShown, saying so.
func quoteShown(s string) string {
	q := func(s string) string { return markSpaces(strconv.QuoteToASCII(s)) }
	if len(s) <= maxShown {
		return q(s)
	}
	head, tail := s[:maxShown/2], s[len(s)-maxShown/4:]
	return fmt.Sprintf("%s ... %s (a %d-byte command, shown shortened: %d bytes in the middle are not shown; deny it unless you know what it is)",
		q(strings.ToValidUTF8(head, "?")), q(strings.ToValidUTF8(tail, "?")), len(s), len(s)-len(head)-len(tail))
}

// markSpaces replaces each run of four or more spaces with ⟨N spaces⟩.
func markSpaces(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		switch n := j - i; {
		case n >= 4:
			fmt.Fprintf(&b, "⟨%d spaces⟩", n)
			i = j
		case n > 0:
			b.WriteString(s[i:j])
			i = j
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// printable escapes everything but printable ASCII (newlines, control,
// bidirectional, filler and combining characters) in text the policy
// derived from the model's input, and marks runs of spaces.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && (r == ' ' || unicode.IsPrint(r)) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return markSpaces(clip(b.String(), maxShown))
}

// askMessage is the elicitation's text: what, why, and what approving
// adds.
func askMessage(r *workspace.ApprovalRequest, backend string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cordon: the agent asks for approval: %s.\nWhy it asks: %s.", describe(r), printable(r.Reason()))
	if r.Command != "" {
		where := "in the " + backend + " sandbox"
		if backend == "" || backend == "local" {
			where = "without an OS sandbox (only the policy gate applies)"
		}
		fmt.Fprintf(&b, "\nIf you approve, it runs %s", where)
		if len(r.Grants) > 0 {
			gs := make([]string, len(r.Grants))
			for i, g := range r.Grants {
				gs[i] = g.Op.String() + " " + quoteShown(g.Path)
			}
			fmt.Fprintf(&b, " with only these added for it: %s", strings.Join(gs, ", "))
		}
		b.WriteString(".")
	}
	b.WriteString("\nallow_once: this time only. allow_session: this exact request again until the session ends. deny: refuse.")
	return b.String()
}

var _ workspace.Approver = Approve
