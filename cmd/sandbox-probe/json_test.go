package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemaDoc is the documented JSON schema; TestJSONSchema keeps it and the
// program in step.
const schemaDoc = "../../docs/json.md"

// fieldNode is one node of a documented schema.
type fieldNode struct {
	path     string
	types    []string // string, number, bool, object, array, null, any, @block
	optional bool
	fields   map[string]*fieldNode
	elem     *fieldNode
	star     *fieldNode
}

// parseSchemas reads every ```fields NAME block of the document.
func parseSchemas(t *testing.T, file string) map[string]*fieldNode {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	blocks := map[string]*fieldNode{}
	var cur *fieldNode
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if name, ok := strings.CutPrefix(text, "```fields "); ok {
			require.Nil(t, cur, "%s:%d: nested block", file, line)
			cur = &fieldNode{path: "."}
			require.NotContains(t, blocks, name, "%s:%d: duplicate block", file, line)
			blocks[strings.TrimSpace(name)] = cur
			continue
		}
		if cur == nil {
			continue
		}
		if strings.HasPrefix(text, "```") {
			cur = nil
			continue
		}
		if i := strings.Index(text, "#"); i >= 0 {
			text = text[:i]
		}
		words := strings.Fields(text)
		if len(words) == 0 {
			continue
		}
		require.True(t, len(words) == 2 || len(words) == 3 && words[2] == "optional", "%s:%d: want PATH TYPE [optional], got %q", file, line, text)
		n := cur
		if words[0] != "." {
			for _, seg := range splitPath(t, words[0], fmt.Sprintf("%s:%d", file, line)) {
				n = n.child(seg)
			}
		}
		require.Empty(t, n.types, "%s:%d: %s listed twice", file, line, words[0])
		n.types = strings.Split(words[1], "|")
		n.optional = len(words) == 3
	}
	require.NoError(t, sc.Err())
	return blocks
}

var segRE = regexp.MustCompile(`^(\.[a-z0-9_]+|\.\*|\[\])`)

func splitPath(t *testing.T, p, where string) []string {
	var segs []string
	for p != "" {
		m := segRE.FindString(p)
		require.NotEmpty(t, m, "%s: bad path segment at %q", where, p)
		segs = append(segs, m)
		p = p[len(m):]
	}
	return segs
}

func (n *fieldNode) child(seg string) *fieldNode {
	p := n.path
	if p == "." {
		p = ""
	}
	switch seg {
	case "[]":
		if n.elem == nil {
			n.elem = &fieldNode{path: p + "[]"}
		}
		return n.elem
	case ".*":
		if n.star == nil {
			n.star = &fieldNode{path: p + ".*"}
		}
		return n.star
	}
	if n.fields == nil {
		n.fields = map[string]*fieldNode{}
	}
	name := seg[1:]
	if n.fields[name] == nil {
		n.fields[name] = &fieldNode{path: p + "." + name}
	}
	return n.fields[name]
}

// validate checks v against n and returns every violation.
func validate(blocks map[string]*fieldNode, n *fieldNode, v any, at string) []string {
	if len(n.types) == 0 {
		return []string{at + ": the schema lists the path but not its type"}
	}
	kind := jsonKind(v)
	for _, typ := range n.types {
		switch {
		case typ == "any", typ == kind:
			return validateChildren(blocks, n, v, at)
		case strings.HasPrefix(typ, "@") && kind != "null":
			ref, ok := blocks[typ[1:]]
			if !ok {
				return []string{at + ": unknown block " + typ}
			}
			return validate(blocks, ref, v, at)
		}
	}
	return []string{fmt.Sprintf("%s: %s, documented as %s", at, kind, strings.Join(n.types, "|"))}
}

func validateChildren(blocks map[string]*fieldNode, n *fieldNode, v any, at string) []string {
	var errs []string
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c := n.fields[k]
			if c == nil {
				c = n.star
			}
			if c == nil {
				if n.fields == nil && n.star == nil && slices.Contains(n.types, "any") {
					continue
				}
				errs = append(errs, fmt.Sprintf("%s.%s: not documented", at, k))
				continue
			}
			errs = append(errs, validate(blocks, c, x[k], at+"."+k)...)
		}
		for name, c := range n.fields {
			if _, ok := x[name]; !ok && !c.optional {
				errs = append(errs, fmt.Sprintf("%s.%s: documented as always present, but missing", at, name))
			}
		}
	case []any:
		for i, e := range x {
			if n.elem == nil {
				if slices.Contains(n.types, "any") {
					continue
				}
				errs = append(errs, fmt.Sprintf("%s[%d]: array elements not documented", at, i))
				continue
			}
			errs = append(errs, validate(blocks, n.elem, e, fmt.Sprintf("%s[%d]", at, i))...)
		}
	}
	return errs
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case float64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// runApp runs sandbox-probe in this process and returns its status, stdout
// and stderr.
func runApp(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := newApp(strings.NewReader(stdin), &out, &errb).execute(context.Background(), args)
	return code, out.String(), errb.String()
}

// jsonWorkspace builds a small workspace and policies for the schema runs.
func jsonWorkspace(t *testing.T) (dir string) {
	dir = t.TempDir()
	for name, content := range map[string]string{
		"w/.env":       "SECRET=1\n",
		"w/src/a.go":   "package a\n",
		"home/docs/x":  "x\n",
		"coding.yaml":  "mode: coding\ndenied_paths: [\".env*\"]\ncommand_rules:\n  - {pattern: \"ls\", action: allow}\n",
		"trusted.yaml": "mode: trusted\ndenied_paths: [\".env*\"]\n",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

// TestJSONSchema runs every subcommand with --json and checks its output
// against the fields blocks of docs/json.md: nothing undocumented, nothing
// documented as always present missing, every type as documented.
func TestJSONSchema(t *testing.T) {
	blocks := parseSchemas(t, schemaDoc)
	dir := jsonWorkspace(t)
	root, home := filepath.Join(dir, "w"), filepath.Join(dir, "home")
	coding, trusted := filepath.Join(dir, "coding.yaml"), filepath.Join(dir, "trusted.yaml")
	ws := []string{"--policy", coding, "--root", root, "--home", home}
	batch := strings.Join([]string{
		`{"path": ".env", "id": 1, "expect": "deny"}`,
		`{"command": "ls ~/docs > out.txt", "cwd": "src"}`,
		`{"path": "x", "op": "exec"}`,
		`{"host": "example.com:443"}`,
	}, "\n")
	t.Setenv("TMPDIR", conformanceTemp())

	type run struct {
		name, block, stdin string
		args               []string
		lines              bool // one document per line
	}
	runs := []run{
		{name: "detect", block: "detect", args: []string{"detect", "--json"}},
		{name: "probe", block: "probe", args: append([]string{"probe", "--json", "--backend", "local", "--case", "exit-7,write-outside,git-works"}, ws...)},
		{name: "default", block: "default", args: []string{"--json", "--backend", "local", "--case", "write-outside"}},
		{name: "explain-path", block: "explain-path", args: append([]string{"explain", "--json", ".env"}, ws...)},
		{name: "explain-write", block: "explain-path", args: append([]string{"explain", "--json", "--write", "../home/docs/x"}, ws...)},
		{name: "explain-command", block: "explain-command", args: append([]string{"explain", "--json", "--command", "$X ls ~/docs && python -c 1 > /etc/x"}, ws...)},
		{name: "version", block: "version", args: []string{"version", "--json"}},
		{name: "explain-host", block: "explain-host", args: append([]string{"explain", "--json", "--host", "example.com"}, ws...)},
		{name: "explain-batch", block: "explain-batch", stdin: batch, lines: true, args: append([]string{"explain", "--batch"}, ws...)},
		{name: "run", block: "run", args: append(append([]string{"run", "--json", "--backend", "local", "--yes"}, ws...), "--", "ls ~/docs")},
		{name: "bench", block: "bench", args: []string{"bench", "--json", "--backend", "local", "-n", "2", "--warmup", "0"}},
		{name: "bench-tree", block: "bench-tree", args: []string{"bench", "--json", "--backend", "local", "-n", "2", "--warmup", "0", "--tree", "150,nm:7"}},
	}
	for _, b := range renderers {
		runs = append(runs,
			run{name: "derive-" + b, block: "derive", args: append([]string{"derive", "--json", "--backend", b, "--grant", "read:" + home}, ws...)},
			run{name: "derive-trusted-" + b, block: "derive", args: []string{"derive", "--json", "--backend", b, "--policy", trusted, "--root", root, "--home", home}})
	}
	for _, name := range []string{"bwrap", "landlock", "docker"} {
		ok, err := scriptCondition(name)
		require.NoError(t, err)
		if ok {
			runs = append(runs, run{name: "probe-" + name, block: "probe",
				args: append([]string{"probe", "--json", "--backend", name, "--case", "write-outside,denied-new-file,chmod-outside"}, ws...)})
			if name == "docker" { // the executor's plan (host mode)
				runs = append(runs, run{name: "derive-docker-executor", block: "derive", args: append([]string{"derive", "--json", "--backend", "docker", "--host-system"}, ws...)})
			}
		}
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			code, out, errs := runApp(t, r.stdin, r.args...)
			require.Contains(t, []int{0, 1}, code, "stderr: %s", errs)
			require.NotEmpty(t, out)
			docs := []string{out}
			if r.lines {
				docs = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			}
			for _, doc := range docs {
				var v any
				require.NoError(t, json.Unmarshal([]byte(doc), &v), "output: %s", doc)
				root, ok := blocks[r.block]
				require.True(t, ok, "docs/json.md has no fields block %q", r.block)
				assert.Empty(t, validate(blocks, root, v, ""), "against the %q block of %s", r.block, schemaDoc)
			}
		})
	}
}

// conformanceTemp keeps conformance fixtures out of /tmp, which sandboxes
// make private.
func conformanceTemp() string {
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
		return "/var/tmp"
	}
	return os.TempDir()
}

// TestSchemaValidator checks that the validator catches what it must.
func TestSchemaValidator(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "s.md")
	require.NoError(t, os.WriteFile(doc, []byte("```fields x\n. object\n.a string\n.b number optional\n.c array\n.c[] @y\n.m object optional\n.m.* string\n```\n```fields y\n. object\n.k bool\n```\n"), 0o644))
	blocks := parseSchemas(t, doc)
	for _, tc := range []struct {
		doc  string
		errs int
	}{
		{`{"a": "x", "c": []}`, 0},
		{`{"a": "x", "b": 1, "c": [{"k": true}], "m": {"p": "q"}}`, 0},
		{`{"c": []}`, 1},                          // a missing
		{`{"a": 1, "c": []}`, 1},                  // a has the wrong type
		{`{"a": "x", "c": [], "z": 1}`, 1},        // z undocumented
		{`{"a": "x", "c": [{"k": 1}]}`, 1},        // a referenced block's type
		{`{"a": "x", "c": [{}]}`, 1},              // a referenced block's required field
		{`{"a": "x", "c": [], "m": {"p": 2}}`, 1}, // a map value's type
		{`{"a": "x", "c": null}`, 1},              // null where not documented
	} {
		var v any
		require.NoError(t, json.Unmarshal([]byte(tc.doc), &v))
		assert.Len(t, validate(blocks, blocks["x"], v, ""), tc.errs, tc.doc)
	}
}
