package policy

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

var updateSchema = flag.Bool("update", false, "rewrite policy.schema.json from Schema()")

// TestSchemaFile: the committed policy.schema.json is what Schema()
// generates (go test ./policy -run TestSchemaFile -update rewrites it).
func TestSchemaFile(t *testing.T) {
	want, err := SchemaJSON()
	require.NoError(t, err)
	if *updateSchema {
		require.NoError(t, os.WriteFile("policy.schema.json", want, 0o644))
	}
	got, err := os.ReadFile("policy.schema.json")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "policy.schema.json is stale: go test ./policy -run TestSchemaFile -update")
}

// examplePolicy is one policy file found in the repository.
type examplePolicy struct {
	name string
	data []byte
}

// examplePolicies collects the policy files of the CLI scripts and the
// README's yaml blocks that are whole policy files.
func examplePolicies(t *testing.T) []examplePolicy {
	t.Helper()
	var out []examplePolicy
	scripts, err := filepath.Glob("../cmd/*/testdata/script/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, f := range scripts {
		a, err := txtar.ParseFile(f)
		require.NoError(t, err)
		for _, file := range a.Files {
			base := filepath.Base(file.Name)
			if strings.Contains(base, "policy") && (strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".json")) || strings.HasPrefix(base, "bad-") {
				out = append(out, examplePolicy{filepath.Base(f) + ":" + file.Name, file.Data})
			}
		}
	}
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	for i, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(readme, -1) {
		out = append(out, examplePolicy{"README.md yaml block " + string(rune('0'+i)), m[1]})
	}
	return out
}

// toJSONValue decodes YAML into the values a JSON decoder would produce.
func toJSONValue(t *testing.T, data []byte) (any, bool) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil || v == nil {
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out, true
}

// schemaChecks matches the load errors the schema must catch too: a
// field name, an enumerated value.
var schemaChecks = regexp.MustCompile(`invalid (mode|decision|op|network|protect|system) "|not found in type|unknown field`)

// TestSchemaExamples: every example policy that loads is valid under the
// schema, and every one that fails on a field name or a value the schema
// enumerates is invalid under it too. Hand-written twins check both ways.
func TestSchemaExamples(t *testing.T) {
	s, err := Schema()
	require.NoError(t, err)
	rs, err := s.Resolve(nil)
	require.NoError(t, err)
	examples := examplePolicies(t)
	examples = append(examples,
		examplePolicy{"twin: full", []byte("mode: coding\nreadable: [\"~/docs\"]\nwritable: [build/]\ndenied_paths: [\".env*\"]\npath_rules:\n  - {pattern: secrets/, action: deny}\n  - {pattern: \"~/.gitconfig\", action: allow, ops: [read]}\ncommand_rules:\n  - {pattern: git push, action: ask}\nnetwork:\n  allow: [example.com]\n  unknown: ask\nprotect: [deploy.sh]\nsystem: default\n")},
		examplePolicy{"twin: explicit", []byte("policy:\n  write: allow\n  allow_shell: true\n  shell_default: ask\nnetwork: none\nprotect: none\n")},
		examplePolicy{"twin: bad mode", []byte("mode: codin\n")},
		examplePolicy{"twin: bad field", []byte("mode: coding\nreadabel: [x]\n")},
		examplePolicy{"twin: bad op", []byte("path_rules:\n  - {pattern: x, action: allow, ops: [exec]}\n")},
		examplePolicy{"twin: bad network", []byte("network: proxy\n")},
		examplePolicy{"twin: bad unknown", []byte("network:\n  unknown: allow\n")},
		examplePolicy{"twin: bad protect", []byte("protect: some\n")},
	)
	var valid, invalid int
	for _, ex := range examples {
		v, ok := toJSONValue(t, ex.data)
		if !ok {
			continue // not a YAML mapping (a deliberately broken file, an empty one)
		}
		if _, isMap := v.(map[string]any); !isMap {
			continue
		}
		_, loadErr := Load(bytes.NewReader(ex.data))
		schemaErr := rs.Validate(v)
		switch {
		case loadErr == nil:
			valid++
			assert.NoError(t, schemaErr, "%s loads, so the schema accepts it:\n%s", ex.name, ex.data)
		case schemaChecks.MatchString(loadErr.Error()):
			invalid++
			assert.Error(t, schemaErr, "%s does not load (%v), so the schema rejects it:\n%s", ex.name, loadErr, ex.data)
		}
	}
	assert.Greater(t, valid, 10, "examples checked valid")
	assert.GreaterOrEqual(t, invalid, 6, "examples checked invalid")
	var _ *jsonschema.Resolved = rs
}
