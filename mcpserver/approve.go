package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
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
	AnswerAllowAlways  = "allow_always"
	AnswerDeny         = "deny"
)

// askSchemaFor is the elicitation form: one choice, allow_session only
// when the request offers a session scope.
func askSchemaFor(req *workspace.ApprovalRequest) map[string]any {
	desc := "allow_once: this time only; deny: refuse it"
	enum := []string{AnswerAllowOnce, AnswerDeny}
	if slices.Contains(req.Scopes, workspace.ScopeSession) {
		desc = "allow_once: this time only; allow_session: until this MCP session ends, " + req.Covers + "; deny: refuse it"
		enum = []string{AnswerAllowOnce, AnswerAllowSession, AnswerDeny}
		if slices.Contains(req.Scopes, workspace.ScopeAlways) {
			desc = "allow_once: this time only; allow_session: until this MCP session ends, " + req.Covers +
				"; allow_always: the same, and in every later session (an allow rule in your user policy file); deny: refuse it"
			enum = []string{AnswerAllowOnce, AnswerAllowSession, AnswerAllowAlways, AnswerDeny}
		}
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type":        "string",
				"title":       "Decision",
				"description": desc,
				"enum":        enum,
				"default":     AnswerDeny,
			},
		},
		"required": []string{"decision"},
	}
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

// Approve is the workspace.Asker of a workspace served by a Server:
// build the workspace with workspace.WithAsker(mcpserver.Approve). It
// puts the ask to the user of the client whose tool call it serves, as an
// elicitation offering allow_once, allow_session (when the request
// offers workspace.ScopeSession) and deny (declining or cancelling the
// form denies). An allow_session answer becomes a session grant of that
// client's workspace session, covering exactly what the request's Covers
// says: the same words of each asking command segment in the same
// directory while every file the command names has the same content (a
// command whose words are known only when it runs is never covered), a
// path and op for one tool, a host and port. The files are hashed when
// the command asks, not as it runs: a file rewritten in between (by a
// background process) is not seen, so a session grant is a convenience
// that saves asking the same question, never a bound on what the command
// does; the OS sandbox is. A client without elicitation gets the server's
// AskFallback. Called outside a tool call of a Server, Approve refuses
// with an error.
func Approve(ctx context.Context, req *workspace.ApprovalRequest) (workspace.Answer, error) {
	tc, _ := ctx.Value(callKey{}).(*toolCall)
	if tc == nil {
		return workspace.Answer{}, errors.New("mcpserver.Approve was called outside an MCP tool call")
	}
	c := tc.c
	log := c.srv.log.With("tool", req.Tool, "op", req.Op, "target", clip(target(req), 200))
	if !canElicit(c.mcp) {
		if c.srv.cfg.OnAsk == AskAllow {
			log.Info("ask approved by --on-ask allow (the client cannot elicit)")
			return workspace.Answer{Allow: true}, nil
		}
		return workspace.Answer{}, &NoElicitationError{Request: req}
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
	res, err := c.mcp.Elicit(ectx, &mcp.ElicitParams{Message: askMessage(req, c.ss.Capabilities().Backend), RequestedSchema: askSchemaFor(req)})
	if err != nil {
		return workspace.Answer{}, fmt.Errorf("asking the user through the MCP client: %w", err)
	}
	answer := ""
	if res.Action == "accept" {
		answer, _ = res.Content["decision"].(string)
	}
	log.Info("ask answered", "action", res.Action, "decision", answer)
	switch answer {
	case AnswerAllowOnce:
		return workspace.Answer{Allow: true}, nil
	case AnswerAllowAlways:
		if slices.Contains(req.Scopes, workspace.ScopeAlways) {
			return workspace.Answer{Allow: true, Scope: workspace.ScopeAlways}, nil
		}
		return workspace.Answer{Allow: true}, nil
	case AnswerAllowSession:
		if slices.Contains(req.Scopes, workspace.ScopeSession) {
			return workspace.Answer{Allow: true, Scope: workspace.ScopeSession}, nil
		}
		return workspace.Answer{Allow: true}, nil
	}
	return workspace.Answer{}, nil
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
	b.WriteString("\nallow_once: this time only.")
	if slices.Contains(r.Scopes, workspace.ScopeSession) {
		fmt.Fprintf(&b, " allow_session: until the session ends, %s.", printable(r.Covers))
	}
	if slices.Contains(r.Scopes, workspace.ScopeAlways) {
		b.WriteString(" allow_always: the same, and in later sessions (an allow rule in your user policy file).")
	}
	b.WriteString(" deny: refuse.")
	return b.String()
}

var _ workspace.Asker = Approve
