package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// mcpTool turns a workspace tool into its MCP definition. Tools that only
// read (the parallel ones) carry readOnlyHint; the others are marked
// destructive, and shell and spawn_process open-world (a command may
// reach the network when the policy lets it).
func mcpTool(t workspace.Tool) *mcp.Tool {
	yes, no := true, false
	a := &mcp.ToolAnnotations{Title: strings.ReplaceAll(t.Name, "_", " ")}
	switch {
	case t.Parallel:
		a.ReadOnlyHint = true
		a.OpenWorldHint = &no
	case t.Name == workspace.ToolShell || t.Name == workspace.ToolSpawnProcess:
		a.DestructiveHint = &yes
		a.OpenWorldHint = &yes
	case t.Name == workspace.ToolKillProcess:
		a.DestructiveHint = &yes
		a.OpenWorldHint = &no
	default: // write_file, edit_file
		a.DestructiveHint = &yes
		a.IdempotentHint = true
		a.OpenWorldHint = &no
	}
	return &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Annotations: a}
}

// callKey marks a context as serving a tool call: its value is the
// *toolCall.
type callKey struct{}

// toolCall is one tool call of a client. done is set when the call has
// returned its result: a background process's network ask may come later,
// when the call's own response stream (over HTTP) is gone.
type toolCall struct {
	c    *client
	done atomic.Bool
}

// handler runs the tool name through the client's workspace session. A
// failed call is a result with IsError and the reason as text (the model
// reads it); only a closed server is a protocol error.
func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, err := s.client(req.Session)
		if err != nil {
			return nil, err
		}
		tc := &toolCall{c: c}
		ctx = context.WithValue(ctx, callKey{}, tc)
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		out, err := c.ss.Dispatch(ctx, name, args)
		tc.done.Store(true)
		res := &mcp.CallToolResult{}
		if err != nil {
			res.IsError = true
			res.Content = []mcp.Content{&mcp.TextContent{Text: errorText(err)}}
		} else {
			res.StructuredContent = out
			res.Content = []mcp.Content{&mcp.TextContent{Text: resultText(name, out)}}
		}
		if ev := c.takeEvents(); len(ev) > 0 {
			res.Content = append(res.Content, &mcp.TextContent{Text: "[cordon] " + strings.Join(ev, "\n[cordon] ")})
		}
		return res, nil
	}
}

// errorText is the text of a failed call: the error, and for a refusal
// what the model should do instead of retrying.
func errorText(err error) string {
	msg := err.Error()
	var de *policy.DeniedError
	if errors.As(err, &de) {
		what := "the policy denies it"
		if de.Decision == policy.Ask {
			what = "it needs the user's approval and was not approved"
		}
		msg += fmt.Sprintf("\n\n[cordon] refused: %s %s (rule: %s); %s. Do not retry it or work around it: ask the user to grant access (in the workspace's policy) if the task needs it.", de.Op, de.Path, de.Rule, what)
	}
	return msg
}

// resultText is the text of a successful call: the result's JSON, and for
// a command what its sandbox refused while it ran.
func resultText(name string, out json.RawMessage) string {
	text := string(out)
	if name != workspace.ToolShell {
		return text
	}
	var r workspace.RunResult
	if json.Unmarshal(out, &r) != nil {
		return text
	}
	if r.Notice == "" {
		return text
	}
	return text + "\n\n" + r.Notice
}
