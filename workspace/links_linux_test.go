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

// A name in the root of a private System file — a root-only key such as
// /etc/docker/key.json, hard-linked in by its owner — is refused like
// the file itself: the System grant is what every user may read, and the
// OS sandbox masks the other name too. The twin, a world-readable System
// file linked in the same way, is readable.
func TestFileToolsRefuseOtherNamesOfPrivateSystemFiles(t *testing.T) {
	f := newFixture(t)
	sys := filepath.Join(filepath.Dir(f.root), "sys")
	key := write(t, sys, "key.json", "TOKEN=private\n")
	require.NoError(t, os.Chmod(key, 0o600))
	pub := write(t, sys, "pub.conf", "TOKEN=public\n")
	require.NoError(t, os.Link(key, filepath.Join(f.root, "notes.json")))
	require.NoError(t, os.Link(pub, filepath.Join(f.root, "pub.json")))
	p := policy.Coding.Policy()
	p.System = append(policy.DefaultSystem(), sys)
	s := f.open(t, workspace.WithPolicy(p))

	_, err := s.ReadText(ctx, "notes.json", 0, 0)
	d := requireDenied(t, err, policy.Deny)
	assert.Contains(t, d.Reason, key, "the error names the System file")
	assert.Equal(t, "private system file", d.Rule)

	g, err := s.Grep(ctx, "TOKEN", ".", "", workspace.GrepOptions{})
	require.NoError(t, err)
	var paths []string
	for _, m := range g.Matches {
		paths = append(paths, m.Path)
	}
	assert.Equal(t, []string{"pub.json"}, paths, "notes.json's match is dropped")

	r, err := s.ReadText(ctx, "pub.json", 0, 0)
	require.NoError(t, err, "twin: another name of a world-readable System file is readable")
	assert.Equal(t, "TOKEN=public\n", r.Content)
}
