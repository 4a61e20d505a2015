//go:build unix

package conformance_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance"
)

var update = flag.Bool("update", false, "rewrite CASES.md and the table in doc.go from conformance.Cases()")

// casesTable renders conformance.Cases() as a Markdown table.
func casesTable() []string {
	lines := []string{
		"| id | layer | control | expected | what | how verified |",
		"|---|---|---|---|---|---|",
	}
	for _, c := range conformance.Cases() {
		ctl := string(c.Control)
		if ctl == "" {
			ctl = "—"
		}
		esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
		lines = append(lines, fmt.Sprintf("| `%s` | %s | %s | %s | %s | %s |", c.ID, c.Layer, ctl, c.Expected, esc(c.Title), esc(c.Verified)))
	}
	return lines
}

const casesHeader = `# cordon conformance cases

Generated from ` + "`conformance.Cases()`" + ` by ` + "`go test ./conformance -run TestCasesDoc -update`" + `.
Every isolation case has a control twin and is decided from outside the
sandbox; see the package documentation for the outcomes.

`

// TestCasesDoc keeps CASES.md and the table in the package doc in step
// with the catalogue.
func TestCasesDoc(t *testing.T) {
	table := casesTable()
	md := casesHeader + strings.Join(table, "\n") + "\n"
	var docBlock []string
	for _, l := range table {
		docBlock = append(docBlock, "//\t"+l)
	}
	block := strings.Join(docBlock, "\n") + "\n"

	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	lines := strings.SplitAfter(string(doc), "\n")
	start, end := -1, -1
	for i, l := range lines {
		if strings.HasPrefix(l, "//\t|") {
			if start < 0 {
				start = i
			}
			end = i + 1
		}
	}
	require.True(t, start >= 0, "doc.go has no case table (lines starting with //<tab>|)")
	current := strings.Join(lines[start:end], "")

	if *update {
		require.NoError(t, os.WriteFile("CASES.md", []byte(md), 0o644))
		newDoc := strings.Join(lines[:start], "") + block + strings.Join(lines[end:], "")
		require.NoError(t, os.WriteFile("doc.go", []byte(newDoc), 0o644))
		return
	}
	got, err := os.ReadFile("CASES.md")
	require.NoError(t, err)
	assert.Equal(t, md, string(got), "CASES.md is stale: go test ./conformance -run TestCasesDoc -update")
	assert.Equal(t, block, current, "the table in doc.go is stale: go test ./conformance -run TestCasesDoc -update")

	seen := map[string]bool{}
	for _, c := range conformance.Cases() {
		assert.False(t, seen[c.ID], "duplicate case id %s", c.ID)
		seen[c.ID] = true
		assert.NotEmpty(t, c.Title, c.ID)
		assert.NotEmpty(t, c.Verified, c.ID)
		assert.Contains(t, []conformance.Outcome{conformance.OK, conformance.Denied, conformance.Allowed}, c.Expected, c.ID)
		assert.Equal(t, c.Isolation, c.Expected != conformance.OK, "%s: isolation cases expect denied or allowed", c.ID)
	}
}

// TestREADMEListsEveryCase: the README's conformance table has a row for
// every case of the catalogue, and no row for a case that is gone.
func TestREADMEListsEveryCase(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Conformance cases\n")
	require.True(t, ok, "README.md has no Conformance cases section")
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]bool{}
	for _, l := range strings.Split(section, "\n") {
		if id, ok := strings.CutPrefix(l, "| `"); ok {
			if i := strings.Index(id, "` |"); i > 0 && strings.Count(l, "|") >= 7 {
				rows[id[:i]] = true
			}
		}
	}
	for _, c := range conformance.Cases() {
		assert.True(t, rows[c.ID], "README.md's conformance table has no row for %s", c.ID)
		delete(rows, c.ID)
	}
	assert.Empty(t, rows, "README.md's conformance table lists cases that do not exist")
}
