package policy

import (
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaID is the $id of the policy file's JSON Schema: its path in the
// repository, where editors find it (policy/policy.schema.json).
const SchemaID = "https://github.com/cordon-sandbox/cordon/raw/main/policy/policy.schema.json"

// Schema returns the JSON Schema (draft 2020-12) of the policy file
// (Spec), generated from the Go types with github.com/google/jsonschema-go
// (already a dependency through the MCP SDK): structs and their field
// names come from the types, and the values the YAML decoders accept as
// text are described by hand next to those decoders' rules — decisions,
// ops, modes, network (a word or the allow-list mapping), protect and
// system ("default", "none" or a list). The committed
// policy/policy.schema.json is this schema; a test keeps the two equal and
// checks it against every example policy in the repository.
//
// The schema checks shape, names and enumerations; what only building the
// policy can check (a malformed glob, a relative system path, an explicit
// policy combined with a mode) is left to Load, whose errors name the
// file and line.
func Schema() (*jsonschema.Schema, error) {
	enum := func(desc string, vals ...string) *jsonschema.Schema {
		s := &jsonschema.Schema{Type: "string", Description: desc}
		for _, v := range vals {
			s.Enum = append(s.Enum, v)
		}
		return s
	}
	decision := enum("allow, ask or deny", "allow", "ask", "deny")
	strList := &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}}
	hosts := &jsonschema.Schema{
		Type:        "object",
		Description: "the network allow-list: commands reach only these hosts, through the policy-checked proxy",
		Properties: map[string]*jsonschema.Schema{
			"allow":   {Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: `host patterns: "example.com", "*.example.org" (subdomains only), "host:443", IP literals and CIDRs`},
			"deny":    {Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: "host patterns refused even when allow matches; checked first"},
			"unknown": enum("a host neither list names: deny (default) or ask", "deny", "ask"),
		},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Decision](): decision,
		reflect.TypeFor[Op]():       enum("read (reading, listing, executing) or write (creating, modifying, renaming, deleting)", "read", "write"),
		reflect.TypeFor[Mode]():     enum("the preset: readonly, coding (default) or trusted", "readonly", "coding", "trusted"),
		reflect.TypeFor[NetworkSpec](): {
			Description: "none, full, allowlist (an empty allow-list) or the allow-list mapping",
			OneOf:       []*jsonschema.Schema{enum("", "none", "full", "allowlist"), hosts},
		},
		reflect.TypeFor[Protect](): {
			Description: `"default", "none" (no protected paths) or a list of patterns protected besides the defaults`,
			OneOf:       []*jsonschema.Schema{enum("", "default", "none"), strList},
		},
		reflect.TypeFor[SystemPaths](): {
			Description: `"default" or a list of absolute paths replacing the default system paths`,
			OneOf:       []*jsonschema.Schema{enum("", "default"), strList},
		},
	}}
	s, err := jsonschema.For[Spec](opts)
	if err != nil {
		return nil, err
	}
	// A pointer field's schema gets "null" as its only type when the
	// type's own schema names none: give network its own back, null
	// allowed.
	net := opts.TypeSchemas[reflect.TypeFor[NetworkSpec]()]
	s.Properties["network"] = &jsonschema.Schema{Description: net.Description, OneOf: append([]*jsonschema.Schema{{Type: "null"}}, net.OneOf...)}
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.ID = SchemaID
	s.Title = "cordon policy file"
	s.Description = "A cordon policy (YAML or JSON): a mode refined by shorthands, or an explicit policy. See the README's policy file reference."
	for k, d := range propertyDocs {
		if ps := s.Properties[k]; ps != nil && ps.Description == "" {
			ps.Description = d
		}
	}
	// An explicit policy's omitted decisions are deny and an omitted
	// allow_shell false: nothing in it is required.
	if ps := s.Properties["policy"]; ps != nil {
		ps.Required = nil
	}
	return s, nil
}

// propertyDocs describe the policy file's top-level settings in the schema.
var propertyDocs = map[string]string{
	"readable":      "paths commands and tools may read (allow read)",
	"writable":      "paths commands and tools may read and write (allow read and write)",
	"denied_paths":  "patterns denied for every op, checked before every other rule",
	"path_rules":    "rules checked in order after denied_paths, the host secrets and the protected paths; the first that matches decides",
	"command_rules": "rules on the first words of each command segment (\"git push\" matches \"git push origin\")",
	"policy":        "an explicit policy replacing the preset; excludes mode and the shorthands; omitted decisions are deny",
}

// SchemaJSON returns Schema as indented JSON, the content of
// policy/policy.schema.json.
func SchemaJSON() ([]byte, error) {
	s, err := Schema()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
