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
// line in the same directory with the same grants, while every script it
// names (an executable file, or the word after sh, python3, node, ...)
// has the same content; the same host
// and port from the same command. A client
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
		for _, h := range namedFiles(root, r.Cwd, r.Command) {
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

// maxHashed is the largest script a session grant covers; a command
// naming a larger one asks every time.
const maxHashed = 8 << 20

// interpreters are the programs whose next word is the script they run.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true, "source": true, ".": true,
	"python": true, "python3": true, "node": true, "deno": true, "bun": true, "perl": true, "ruby": true, "php": true,
	"lua": true, "Rscript": true, "osascript": true, "awk": true, "make": true,
}

// namedFiles returns "path sha256" for each file command appears to run:
// a word naming an executable regular file, or the word after an
// interpreter (sh build.sh, python3 x.py; relative to cwd, symbolic links
// followed), so that a session grant for "./build.sh" or "sh build.sh"
// does not survive a change of the script: the agent could rewrite it and
// run anything under the same approval. Files a command reads without
// naming them (a Makefile) are not covered; the OS sandbox confines the
// command either way. A bare word also covers a program of that name in
// the root's .venv/bin or venv/bin, which the workspace puts first on
// PATH when it holds a python.
func namedFiles(root, cwd, command string) []string {
	var out []string
	prev := ""
	for _, w := range strings.Fields(command) {
		w = strings.Trim(w, `"';&|()<>`)
		after := interpreters[filepath.Base(prev)]
		prev = w
		if w == "" || strings.HasPrefix(w, "-") {
			continue
		}
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if sum, ok := hashScript(root, p, after); ok {
			out = append(out, p+" "+sum)
		}
		// A bare name may run a program of the root's virtualenv, which
		// the workspace puts first on PATH (and the agent can create).
		if !strings.ContainsRune(w, '/') {
			for _, venv := range []string{".venv", "venv"} {
				vp := filepath.Join(root, venv, "bin", w)
				if sum, ok := hashScript(root, vp, false); ok {
					out = append(out, vp+" "+sum)
				}
			}
		}
	}
	return out
}

// hashScript returns the SHA-256 of p when it is a regular file inside
// root (symbolic links followed) that is executable or follows an
// interpreter. It never blocks: the file is opened with O_NONBLOCK (a
// FIFO swapped in would otherwise hang the ask) and checked on the open
// descriptor; a file outside the root is not read, its resolved path
// stands for it (a link in the root may be repointed).
func hashScript(root, p string, afterInterpreter bool) (string, bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		// Outside the root: not read, but where a link in the root points
		// is part of what was approved (the agent can repoint the link).
		return "outside:" + real, true
	}
	f, err := os.OpenFile(real, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || (!afterInterpreter && st.Mode().Perm()&0o111 == 0) {
		return "", false
	}
	if st.Size() > maxHashed {
		// Too large to hash on every ask: never the same key, so a
		// session grant for a command running it asks again each time.
		var nonce [16]byte
		_, _ = rand.Read(nonce[:])
		return "unhashed:" + hex.EncodeToString(nonce[:]), true
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false
	}
	return hex.EncodeToString(h.Sum(nil)), true
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
