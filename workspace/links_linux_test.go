//go:build linux

package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// The file tools judge names; a hard link is the same file under another
// name. `ln docs/notes.md docs/.env.production`, then a secret written in
// place into .env.production: reading, editing or grepping notes.md must
// not show it, and the error names the denied name.
func TestFileToolsRefuseOtherNamesOfDeniedFiles(t *testing.T) {
	f := newFixture(t)
	notes := write(t, f.root, "docs/notes.md", "notes\n")
	env := filepath.Join(f.root, "docs", ".env.production")
	require.NoError(t, os.Link(notes, env))
	require.NoError(t, os.WriteFile(env, []byte("SECRET=hunter2\n"), 0o644)) // in place: the link stays
	// The twin: a linked pair neither of whose names is denied.
	a := write(t, f.root, "a.txt", "SECRET=open\n")
	require.NoError(t, os.Link(a, filepath.Join(f.root, "b.txt")))
	s := f.open(t, workspace.WithDeniedPaths(".env*"))

	_, err := s.ReadText(ctx, "docs/notes.md", 0, 0)
	d := requireDenied(t, err, policy.Deny)
	assert.Contains(t, d.Reason, "docs/.env.production", "the error names the denied name")
	assert.Contains(t, d.Rule, ".env*")

	_, err = s.EditText(ctx, "docs/notes.md", "hunter2", "x", false)
	requireDenied(t, err, policy.Deny)
	assert.Equal(t, "SECRET=hunter2\n", read(t, env), "the denied file is unchanged")

	g, err := s.Grep(ctx, "SECRET", ".", "", workspace.GrepOptions{})
	require.NoError(t, err)
	var paths []string
	for _, m := range g.Matches {
		paths = append(paths, m.Path)
	}
	assert.ElementsMatch(t, []string{"a.txt", "b.txt"}, paths, "notes.md's match is dropped; the twin pair is searched")
	assert.Positive(t, g.SkippedDenied)

	r, err := s.ReadText(ctx, "b.txt", 0, 0)
	require.NoError(t, err, "twin: another name of an allowed file is readable")
	assert.Equal(t, "SECRET=open\n", r.Content)
}
