package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// Tool is an agent tool: what to show the model, and how to run it through
// Session.Dispatch. It marshals to {"name", "description", "input_schema",
// "parallel"}, the shape most model APIs and MCP accept.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputSchema is the JSON Schema (draft 2020-12 subset) of the
	// arguments object; unknown properties are rejected.
	InputSchema json.RawMessage `json:"input_schema"`
	// Parallel reports whether calls may run concurrently with other
	// parallel calls: true for tools that only read.
	Parallel bool `json:"parallel"`
	// NeedsApproval reports whether a call with these arguments needs the
	// user's approval under the policy (an ask), so an agent loop can
	// prompt before dispatching. Invalid arguments and denied calls
	// report false: Dispatch refuses them.
	NeedsApproval func(args json.RawMessage) bool `json:"-"`
}

// Tool names.
const (
	ToolReadFile          = "read_file"
	ToolWriteFile         = "write_file"
	ToolEditFile          = "edit_file"
	ToolListFiles         = "list_files"
	ToolGrepFiles         = "grep_files"
	ToolShell             = "shell"
	ToolSpawnProcess      = "spawn_process"
	ToolReadProcessOutput = "read_process_output"
	ToolKillProcess       = "kill_process"
	ToolListProcesses     = "list_processes"
)

// Argument objects of the tools, decoded strictly by Dispatch.
type (
	readFileArgs struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line,omitempty"`
		EndLine   int    `json:"end_line,omitempty"`
	}
	writeFileArgs struct {
		Path       string `json:"path"`
		Content    string `json:"content"`
		CreateOnly bool   `json:"create_only,omitempty"`
	}
	editFileArgs struct {
		Path       string `json:"path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all,omitempty"`
	}
	listFilesArgs struct {
		Path          string `json:"path,omitempty"`
		Glob          string `json:"glob,omitempty"`
		IncludeHidden bool   `json:"include_hidden,omitempty"`
		Limit         int    `json:"limit,omitempty"`
	}
	grepFilesArgs struct {
		Pattern       string `json:"pattern"`
		Path          string `json:"path,omitempty"`
		Glob          string `json:"glob,omitempty"`
		IgnoreCase    bool   `json:"ignore_case,omitempty"`
		IncludeHidden bool   `json:"include_hidden,omitempty"`
		Limit         int    `json:"limit,omitempty"`
	}
	shellArgs struct {
		Command        string `json:"command"`
		Cwd            string `json:"cwd,omitempty"`
		TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
	}
	spawnArgs struct {
		Command string `json:"command"`
		Cwd     string `json:"cwd,omitempty"`
	}
	processArgs struct {
		ID string `json:"id"`
	}
	noArgs struct{}
)

// schema is the JSON Schema subset the tools use.
type schema struct {
	Type                 string             `json:"type"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
	Minimum              *int               `json:"minimum,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
}

func str(desc string) *schema  { return &schema{Type: "string", Description: desc} }
func boolean(d string) *schema { return &schema{Type: "boolean", Description: d} }
func integer(d string, min int) *schema {
	return &schema{Type: "integer", Description: d, Minimum: &min}
}
func nonEmpty(desc string) *schema {
	one := 1
	return &schema{Type: "string", Description: desc, MinLength: &one}
}

func object(props map[string]*schema, required ...string) json.RawMessage {
	f := false
	if props == nil {
		props = map[string]*schema{}
	}
	b, err := json.Marshal(&schema{Type: "object", Properties: props, Required: required, AdditionalProperties: &f})
	if err != nil {
		panic(err) // static data
	}
	return b
}

// toolDef is a tool and its dispatcher.
type toolDef struct {
	tool Tool
	call func(ctx context.Context, s *Session, args []byte) (any, error)
}

// Tools returns the agent tools this session offers, chosen by the policy:
// read_file, list_files and grep_files always; write_file and edit_file
// only when something is writable; shell only with a shell; the background
// process tools only with a shell and an executor implementing
// executor.Starter.
func (s *Session) Tools() []Tool {
	defs := s.toolDefs()
	out := make([]Tool, len(defs))
	for i, d := range defs {
		out[i] = d.tool
	}
	return out
}

// writable reports whether the policy can allow any write at all.
func writable(p *policy.Policy) bool {
	if p.Write != policy.Deny || p.WriteOutside != policy.Deny {
		return true
	}
	for _, r := range p.PathRules {
		if r.Action != policy.Deny && r.AppliesTo(policy.Write) {
			return true
		}
	}
	return false
}

func (s *Session) toolDefs() []toolDef {
	p := s.ws.checker.Policy()
	limits := s.ws.limits
	defs := []toolDef{
		{
			tool: Tool{
				Name: ToolReadFile,
				Description: fmt.Sprintf("Read a UTF-8 text file. Returns the lines start_line..end_line (1-based, inclusive; default the whole file), at most %d characters (truncated is set when cut), and the file's total_lines. Binary files are refused. Paths are relative to the workspace root unless absolute.",
					limits.MaxFileReadChars),
				InputSchema: object(map[string]*schema{
					"path":       nonEmpty("File path, relative to the workspace root or absolute."),
					"start_line": integer("First line to return, 1-based (default 1).", 0),
					"end_line":   integer("Last line to return, inclusive (default: the last line).", 0),
				}, "path"),
				Parallel:      true,
				NeedsApproval: pathAskOf(s, func(a *readFileArgs) string { return a.Path }, policy.Read),
			},
			call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
				var a readFileArgs
				if err := decodeArgs(raw, &a, "path"); err != nil {
					return nil, err
				}
				return s.ReadText(ctx, a.Path, a.StartLine, a.EndLine)
			},
		},
		{
			tool: Tool{
				Name: ToolListFiles,
				Description: fmt.Sprintf("List a directory (default: the workspace root). Without glob, lists the directory's entries; with a glob, lists matching entries of the whole tree (a glob without \"/\" such as \"*.go\" matches names at any depth; \"src/**/*_test.go\" matches paths). Entries have type, size, mtime and a symlink's target. Hidden entries are skipped unless include_hidden. At most %d entries.",
					limits.MaxListResults),
				InputSchema: object(map[string]*schema{
					"path":           str("Directory, relative to the workspace root or absolute (default: the root)."),
					"glob":           str("Glob filter; walks the tree when given."),
					"include_hidden": boolean("Include entries whose name starts with a dot."),
					"limit":          integer(fmt.Sprintf("Maximum entries (default and maximum %d).", limits.MaxListResults), 0),
				}),
				Parallel:      true,
				NeedsApproval: pathAskOf(s, func(a *listFilesArgs) string { return orRoot(a.Path) }, policy.Read),
			},
			call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
				var a listFilesArgs
				if err := decodeArgs(raw, &a); err != nil {
					return nil, err
				}
				return s.ListFiles(ctx, a.Path, a.Glob, a.IncludeHidden, a.Limit)
			},
		},
		{
			tool: Tool{
				Name: ToolGrepFiles,
				Description: fmt.Sprintf("Search file contents for a regular expression (RE2 syntax, matched per line) in a file or directory tree (default: the workspace root). Returns matching lines with path and line number, at most %d matches per file and in total; lines are clipped to %d characters. Skips binary files, files over %d bytes, hidden entries unless include_hidden, and paths the policy does not allow.",
					limits.MaxGrepMatches, limits.MaxGrepLineChars, limits.MaxGrepFileBytes),
				InputSchema: object(map[string]*schema{
					"pattern":        nonEmpty("Regular expression (RE2 syntax)."),
					"path":           str("File or directory to search (default: the root)."),
					"glob":           str("Only search files matching this glob (\"*.py\", \"src/**/*.ts\")."),
					"ignore_case":    boolean("Match case-insensitively."),
					"include_hidden": boolean("Search entries whose name starts with a dot."),
					"limit":          integer(fmt.Sprintf("Maximum matches (default and maximum %d).", limits.MaxGrepMatches), 0),
				}, "pattern"),
				Parallel:      true,
				NeedsApproval: pathAskOf(s, func(a *grepFilesArgs) string { return orRoot(a.Path) }, policy.Read),
			},
			call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
				var a grepFilesArgs
				if err := decodeArgs(raw, &a, "pattern"); err != nil {
					return nil, err
				}
				return s.Grep(ctx, a.Pattern, a.Path, a.Glob, GrepOptions{IgnoreCase: a.IgnoreCase, IncludeHidden: a.IncludeHidden, Limit: a.Limit})
			},
		},
	}
	if writable(p) {
		defs = append(defs,
			toolDef{
				tool: Tool{
					Name:        ToolWriteFile,
					Description: "Write a text file, replacing its content (atomically; the mode is kept). Missing parent directories are created. With create_only the call fails if the file exists. Returns whether the file was created, updated or unchanged.",
					InputSchema: object(map[string]*schema{
						"path":        nonEmpty("File path, relative to the workspace root or absolute."),
						"content":     str("The complete new content."),
						"create_only": boolean("Fail if the file already exists."),
					}, "path", "content"),
					NeedsApproval: pathAskOf(s, func(a *writeFileArgs) string { return a.Path }, policy.Write),
				},
				call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
					var a writeFileArgs
					if err := decodeArgs(raw, &a, "path", "content"); err != nil {
						return nil, err
					}
					return s.WriteText(ctx, a.Path, a.Content, a.CreateOnly)
				},
			},
			toolDef{
				tool: Tool{
					Name:        ToolEditFile,
					Description: "Replace the exact text old_string with new_string in a text file. old_string must occur exactly once (include enough context), unless replace_all. Whitespace and indentation must match; LF line endings in old_string also match a CRLF file.",
					InputSchema: object(map[string]*schema{
						"path":        nonEmpty("File path, relative to the workspace root or absolute."),
						"old_string":  nonEmpty("The exact text to replace."),
						"new_string":  str("The replacement text."),
						"replace_all": boolean("Replace every occurrence."),
					}, "path", "old_string", "new_string"),
					NeedsApproval: pathAskOf(s, func(a *editFileArgs) string { return a.Path }, policy.Read, policy.Write),
				},
				call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
					var a editFileArgs
					if err := decodeArgs(raw, &a, "path", "old_string", "new_string"); err != nil {
						return nil, err
					}
					return s.EditText(ctx, a.Path, a.OldString, a.NewString, a.ReplaceAll)
				},
			},
		)
	}
	if !p.AllowShell {
		return defs
	}
	defs = append(defs, toolDef{
		tool: Tool{
			Name: ToolShell,
			Description: fmt.Sprintf("Run a shell command with /bin/sh -c in the workspace root (or cwd) and wait for it. Returns exit_code, stdout and stderr (each at most %d bytes, head and tail kept). Default and maximum timeout %d seconds. For servers and watchers use spawn_process. When the command needs approval the user may allow it once, for this session or always; refusals and files the sandbox refused are listed in refusals and notice: do not retry those, ask the user.",
				limits.MaxShellOutputChars, int(s.ws.shellTimeout/time.Second)),
			InputSchema: object(map[string]*schema{
				"command":         nonEmpty("The command line."),
				"cwd":             str("Working directory, relative to the workspace root or absolute (default: the root)."),
				"timeout_seconds": integer("Timeout in seconds (default and maximum: the workspace's shell timeout).", 0),
			}, "command"),
			NeedsApproval: commandAskOf(s, "run", func(a *shellArgs) (string, string) { return a.Command, a.Cwd }),
		},
		call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
			var a shellArgs
			if err := decodeArgs(raw, &a, "command"); err != nil {
				return nil, err
			}
			if a.TimeoutSeconds < 0 {
				return nil, &ArgumentError{Arg: "timeout_seconds", Value: itoa(a.TimeoutSeconds), Reason: "cannot be negative"}
			}
			return s.Run(ctx, a.Command, a.Cwd, time.Duration(a.TimeoutSeconds)*time.Second)
		},
	})
	if _, ok := s.ws.exec.(executor.Starter); !ok {
		return defs
	}
	idSchema := object(map[string]*schema{"id": nonEmpty("The process id returned by spawn_process (\"p1\").")}, "id")
	defs = append(defs,
		toolDef{
			tool: Tool{
				Name:          ToolSpawnProcess,
				Description:   "Start a long-running shell command (a server, a watcher) in the background under the same rules as shell. Returns its id; read its output with read_process_output, stop it with kill_process.",
				InputSchema:   object(map[string]*schema{"command": nonEmpty("The command line."), "cwd": str("Working directory (default: the root).")}, "command"),
				NeedsApproval: commandAskOf(s, "spawn", func(a *spawnArgs) (string, string) { return a.Command, a.Cwd }),
			},
			call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
				var a spawnArgs
				if err := decodeArgs(raw, &a, "command"); err != nil {
					return nil, err
				}
				return s.Spawn(ctx, a.Command, a.Cwd)
			},
		},
		toolDef{
			tool: Tool{
				Name:          ToolReadProcessOutput,
				Description:   fmt.Sprintf("Read a background process's output (stdout and stderr merged) produced since the last read, and its status: running, exited (with exit_code) or killed. dropped is set when older unread output was discarded (the buffer keeps the newest %d bytes). After a read reports exited or killed the id is gone.", limits.MaxShellOutputChars),
				InputSchema:   idSchema,
				Parallel:      true,
				NeedsApproval: never,
			},
			call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
				var a processArgs
				if err := decodeArgs(raw, &a, "id"); err != nil {
					return nil, err
				}
				return s.ReadProcessOutput(a.ID)
			},
		},
		toolDef{
			tool: Tool{
				Name:          ToolKillProcess,
				Description:   "Kill a background process and everything it started; returns its last output.",
				InputSchema:   idSchema,
				NeedsApproval: never,
			},
			call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
				var a processArgs
				if err := decodeArgs(raw, &a, "id"); err != nil {
					return nil, err
				}
				return s.KillProcess(a.ID)
			},
		},
		toolDef{
			tool: Tool{
				Name:          ToolListProcesses,
				Description:   "List the background processes with their status, without reading their output.",
				InputSchema:   object(nil),
				Parallel:      true,
				NeedsApproval: never,
			},
			call: func(ctx context.Context, s *Session, raw []byte) (any, error) {
				var a noArgs
				if err := decodeArgs(raw, &a); err != nil {
					return nil, err
				}
				ps, err := s.BackgroundProcesses()
				if err != nil {
					return nil, err
				}
				return struct {
					Processes []ProcessInfo `json:"processes"`
				}{ps}, nil
			},
		},
	)
	return defs
}

func never(json.RawMessage) bool { return false }

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// pathAskOf builds a NeedsApproval predicate for a path tool: the strictest
// verdict of ops on the path is Ask.
func pathAskOf[A any](s *Session, path func(*A) string, ops ...policy.Op) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var a A
		if decodeArgs(raw, &a) != nil {
			return false
		}
		d := policy.Allow
		for _, op := range ops {
			v, err := s.ws.checker.DecidePath(path(&a), op)
			if err != nil {
				return false
			}
			d = policy.Strictest(d, v.Decision)
		}
		return d == policy.Ask
	}
}

// commandAskOf builds a NeedsApproval predicate for a command tool.
func commandAskOf[A any](s *Session, op string, cmd func(*A) (string, string)) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var a A
		if decodeArgs(raw, &a) != nil {
			return false
		}
		c, cwd := cmd(&a)
		v, err := s.decideCommand(c, cwd, op)
		return err == nil && v.Decision == policy.Ask
	}
}

// Dispatch runs the tool name with the JSON arguments object args and
// returns its result as JSON. Arguments are decoded strictly: unknown
// properties, missing required ones and wrong types are *ArgumentError. A
// tool this session does not offer is *UnknownToolError. Errors carry the
// reason for the model (a *policy.DeniedError names the rule and why); an
// agent loop passes err.Error() back as the tool result.
func (s *Session) Dispatch(ctx context.Context, name string, args []byte) (json.RawMessage, error) {
	if err := s.check(name); err != nil {
		return nil, err
	}
	defs := s.toolDefs()
	for _, d := range defs {
		if d.tool.Name != name {
			continue
		}
		out, err := d.call(ctx, s, args)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encoding the %s result: %w", name, err)
		}
		return b, nil
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.tool.Name
	}
	sort.Strings(names)
	return nil, &UnknownToolError{Name: name, Available: names}
}

// decodeArgs decodes a JSON object strictly into v, checking that the
// required properties are present. Empty input and null mean {}.
func decodeArgs(raw []byte, v any, required ...string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(raw, &present); err != nil {
		return &ArgumentError{Arg: "arguments", Reason: "must be a JSON object", Err: err}
	}
	var missing []string
	for _, r := range required {
		if _, ok := present[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return &ArgumentError{Arg: strings.Join(missing, ", "), Reason: "missing, and required"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &ArgumentError{Arg: te.Field, Reason: "must be a JSON " + te.Type.Kind().String() + ", got " + te.Value}
		}
		return &ArgumentError{Arg: "arguments", Reason: "unknown or malformed argument", Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &ArgumentError{Arg: "arguments", Reason: "trailing data after the JSON object"}
	}
	return nil
}
