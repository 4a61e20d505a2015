package workspace_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonSchema is the subset of JSON Schema the tools use; validate checks
// an arguments object against it. It is deliberately strict: unknown
// keywords in a schema fail the test.
type jsonSchema struct {
	Type                 string                 `json:"type"`
	Description          string                 `json:"description"`
	Properties           map[string]*jsonSchema `json:"properties"`
	Required             []string               `json:"required"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
	Minimum              *float64               `json:"minimum"`
	MinLength            *int                   `json:"minLength"`
}

func parseSchema(t *testing.T, raw json.RawMessage) *jsonSchema {
	t.Helper()
	var s jsonSchema
	dec := json.NewDecoder(bytesReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&s), "schema uses only known keywords")
	return &s
}

func (s *jsonSchema) validate(v any) error {
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("want an object, got %T", v)
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				return fmt.Errorf("missing required %q", r)
			}
		}
		for k, val := range m {
			p, ok := s.Properties[k]
			if !ok {
				if s.AdditionalProperties != nil && !*s.AdditionalProperties {
					return fmt.Errorf("unknown property %q", k)
				}
				continue
			}
			if err := p.validate(val); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("want a string, got %T", v)
		}
		if s.MinLength != nil && len(str) < *s.MinLength {
			return fmt.Errorf("shorter than %d", *s.MinLength)
		}
	case "integer":
		n, ok := v.(float64)
		if !ok || n != float64(int64(n)) {
			return fmt.Errorf("want an integer, got %v", v)
		}
		if s.Minimum != nil && n < *s.Minimum {
			return fmt.Errorf("below %v", *s.Minimum)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("want a boolean, got %T", v)
		}
	default:
		return fmt.Errorf("unknown schema type %q", s.Type)
	}
	return nil
}

func names(ts []workspace.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func TestToolSelection(t *testing.T) {
	f := newFixture(t)
	all := []string{"read_file", "list_files", "grep_files", "write_file", "edit_file", "shell", "spawn_process", "read_process_output", "kill_process", "list_processes"}
	tests := []struct {
		name string
		opts []workspace.Option
		want []string
	}{
		{"coding", nil, all},
		{"readonly", []workspace.Option{workspace.WithMode(policy.Readonly)}, []string{"read_file", "list_files", "grep_files"}},
		{"readonly policy with a writable path", []workspace.Option{workspace.WithPolicy(&policy.Policy{PathRules: []policy.PathRule{{Pattern: "out/", Action: policy.Allow}}})},
			[]string{"read_file", "list_files", "grep_files", "write_file", "edit_file"}},
		{"no Starter", []workspace.Option{workspace.WithExecutor(runOnly{})}, []string{"read_file", "list_files", "grep_files", "write_file", "edit_file", "shell"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := f.open(t, tt.opts...)
			tools := s.Tools()
			assert.Equal(t, tt.want, names(tools))
			for _, tool := range tools {
				want := slices.Contains([]string{"read_file", "list_files", "grep_files", "read_process_output", "list_processes"}, tool.Name)
				assert.Equal(t, want, tool.Parallel, tool.Name)
				assert.NotEmpty(t, tool.Description)
				assert.NotNil(t, tool.NeedsApproval)
				_, err := json.Marshal(tool)
				assert.NoError(t, err)
			}
			_, err := s.Dispatch(ctx, "no_such_tool", nil)
			var ue *workspace.UnknownToolError
			require.ErrorAs(t, err, &ue)
			assert.ElementsMatch(t, tt.want, ue.Available)
		})
	}
	t.Run("a tool not offered is not dispatched", func(t *testing.T) {
		s := f.open(t, workspace.WithMode(policy.Readonly))
		_, err := s.Dispatch(ctx, "write_file", []byte(`{"path":"x","content":"y"}`))
		assert.ErrorIs(t, err, workspace.ErrUnknownTool)
		assert.NoFileExists(t, filepath.Join(f.root, "x"))
	})
}

// toolCases are documented arguments of every tool, in call order (the
// process tools use the id spawn_process returns, "p1").
var toolCases = []struct {
	tool string
	args string
}{
	{"write_file", `{"path":"notes/a.txt","content":"hello\nworld\n","create_only":true}`},
	{"read_file", `{"path":"notes/a.txt","start_line":1,"end_line":2}`},
	{"edit_file", `{"path":"notes/a.txt","old_string":"world","new_string":"there","replace_all":false}`},
	{"list_files", `{"path":"notes","glob":"*.txt","include_hidden":false,"limit":10}`},
	{"grep_files", `{"pattern":"hel+o","path":"notes","glob":"*.txt","ignore_case":true,"include_hidden":false,"limit":5}`},
	{"shell", `{"command":"cat notes/a.txt","cwd":".","timeout_seconds":10}`},
	{"spawn_process", `{"command":"sleep 1000","cwd":"."}`},
	{"list_processes", `{}`},
	{"read_process_output", `{"id":"p1"}`},
	{"kill_process", `{"id":"p1"}`},
}

// TestToolSchemasRoundTrip checks, for every tool, that the documented
// arguments validate against its schema and are accepted by Dispatch, that
// an unknown argument is rejected by both, that a missing required one is
// rejected by both, and that the schema's properties are exactly what
// Dispatch accepts.
func TestToolSchemasRoundTrip(t *testing.T) {
	f := newFixture(t)
	s := f.open(t, workspace.WithMode(policy.Trusted))
	tools := map[string]workspace.Tool{}
	for _, tool := range s.Tools() {
		tools[tool.Name] = tool
	}
	require.Len(t, toolCases, len(tools), "every tool has a documented case")
	for _, tc := range toolCases {
		t.Run(tc.tool, func(t *testing.T) {
			tool, ok := tools[tc.tool]
			require.True(t, ok)
			sch := parseSchema(t, tool.InputSchema)
			require.Equal(t, "object", sch.Type)
			require.NotNil(t, sch.AdditionalProperties)
			require.False(t, *sch.AdditionalProperties)

			var args map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.args), &args))
			require.NoError(t, sch.validate(args), "the documented arguments validate")
			for k := range sch.Properties {
				assert.Contains(t, args, k, "the documented case exercises every property")
			}
			out, err := s.Dispatch(ctx, tc.tool, []byte(tc.args))
			require.NoError(t, err, "Dispatch accepts the documented arguments")
			assert.True(t, json.Valid(out))

			// Unknown argument: rejected by the schema and by Dispatch.
			bad := map[string]any{}
			for k, v := range args {
				bad[k] = v
			}
			bad["bogus"] = 1
			assert.Error(t, sch.validate(bad))
			b, _ := json.Marshal(bad)
			_, err = s.Dispatch(ctx, tc.tool, b)
			assert.ErrorIs(t, err, workspace.ErrInvalidArgument)

			// Each required property missing: rejected by both.
			for _, r := range sch.Required {
				miss := map[string]any{}
				for k, v := range args {
					if k != r {
						miss[k] = v
					}
				}
				assert.Error(t, sch.validate(miss), r)
				b, _ := json.Marshal(miss)
				_, err = s.Dispatch(ctx, tc.tool, b)
				assert.ErrorIs(t, err, workspace.ErrInvalidArgument, "missing %s", r)
			}
			// A wrong type: rejected by both.
			for k, p := range sch.Properties {
				wrong := map[string]any{}
				for k2, v := range args {
					wrong[k2] = v
				}
				if p.Type == "string" {
					wrong[k] = 42
				} else {
					wrong[k] = "not-a-" + p.Type
				}
				assert.Error(t, sch.validate(wrong), k)
				b, _ := json.Marshal(wrong)
				_, err = s.Dispatch(ctx, tc.tool, b)
				assert.ErrorIs(t, err, workspace.ErrInvalidArgument, "wrong type for %s", k)
			}
		})
	}
}

func TestDispatchResults(t *testing.T) {
	f := newFixture(t)
	write(t, f.outside, "secret.txt", "s")
	s := f.open(t)

	out, err := s.Dispatch(ctx, "write_file", []byte(`{"path":"a.txt","content":"one\ntwo\n"}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"path":"a.txt","action":"created","bytes":8}`, string(out))
	out, err = s.Dispatch(ctx, "read_file", []byte(`{"path":"a.txt"}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"path":"a.txt","content":"one\ntwo\n","start_line":1,"end_line":2,"total_lines":2,"truncated":false,"size":8}`, string(out))

	_, err = s.Dispatch(ctx, "read_file", []byte(`{"path":`+jsonString(filepath.Join(f.outside, "secret.txt"))+`}`))
	de := requireDenied(t, err, policy.Ask)
	assert.Contains(t, err.Error(), de.Reason, "the reason reaches the model")
	_, err = s.Dispatch(ctx, "write_file", []byte(`{"path":`+jsonString(filepath.Join(f.outside, "x"))+`,"content":"x"}`))
	de = requireDenied(t, err, policy.Deny)
	assert.Contains(t, err.Error(), de.Reason)

	_, err = s.Dispatch(ctx, "read_file", []byte(`{"path":"a.txt"} trailing`))
	assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
	_, err = s.Dispatch(ctx, "read_file", []byte(`[1]`))
	assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
	_, err = s.Dispatch(ctx, "shell", []byte(`{"command":"true","timeout_seconds":-1}`))
	assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestNeedsApproval(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "a.txt", "a")
	s := f.open(t, workspace.WithCommandRules(policy.CommandRule{Pattern: "echo", Action: policy.Allow}, policy.CommandRule{Pattern: "rm", Action: policy.Deny}))
	tools := map[string]workspace.Tool{}
	for _, tool := range s.Tools() {
		tools[tool.Name] = tool
	}
	outside := jsonString(filepath.Join(f.outside, "x"))
	tests := []struct {
		tool, args string
		want       bool
	}{
		{"read_file", `{"path":"a.txt"}`, false},
		{"read_file", `{"path":` + outside + `}`, true},
		{"list_files", `{}`, false},
		{"list_files", `{"path":` + jsonString(f.outside) + `}`, true},
		{"grep_files", `{"pattern":"x","path":` + jsonString(f.outside) + `}`, true},
		{"write_file", `{"path":"a.txt","content":""}`, false},
		{"write_file", `{"path":` + outside + `,"content":""}`, false}, // denied, not asked
		{"shell", `{"command":"echo hi"}`, false},
		{"shell", `{"command":"ls"}`, true},
		{"shell", `{"command":"rm -rf x"}`, false}, // denied, not asked
		{"spawn_process", `{"command":"sleep 1"}`, true},
		{"read_file", `{"bogus":1}`, false}, // invalid: Dispatch refuses it
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			assert.Equal(t, tt.want, tools[tt.tool].NeedsApproval(json.RawMessage(tt.args)))
		})
	}
}
