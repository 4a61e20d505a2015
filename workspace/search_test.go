package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func paths(es []workspace.FileEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out
}

func TestListFiles(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "a.go", "package a\n")
	write(t, f.root, "b.txt", "bbb")
	write(t, f.root, ".hidden", "h")
	write(t, f.root, ".env", "SECRET")
	write(t, f.root, "env", "twin")
	write(t, f.root, "src/x.go", "package x\n")
	write(t, f.root, "src/deep/y.go", "package y\n")
	write(t, f.root, "src/.cache/z.go", "package z\n")
	write(t, f.outside, "secret.txt", "s")
	require.NoError(t, os.Symlink("a.go", filepath.Join(f.root, "link")))
	require.NoError(t, os.Symlink(".env", filepath.Join(f.root, "envlink")))
	require.NoError(t, os.Symlink("b.txt", filepath.Join(f.root, "twinlink")))
	s := f.open(t, workspace.WithDeniedPaths(".env*"))

	t.Run("directory", func(t *testing.T) {
		r, err := s.ListFiles(ctx, "", "", false, 0)
		require.NoError(t, err)
		assert.Equal(t, []string{"a.go", "b.txt", "env", "link", "src", "twinlink"}, paths(r.Entries),
			"hidden entries skipped; a link to a denied file omitted, its twin kept")
		assert.False(t, r.Truncated)
		byPath := map[string]workspace.FileEntry{}
		for _, e := range r.Entries {
			byPath[e.Path] = e
		}
		assert.Equal(t, "file", byPath["b.txt"].Type)
		assert.Equal(t, int64(3), byPath["b.txt"].Size)
		assert.False(t, byPath["b.txt"].ModTime.IsZero())
		assert.Equal(t, "directory", byPath["src"].Type)
		assert.Equal(t, "symlink", byPath["link"].Type)
		assert.Equal(t, "a.go", byPath["link"].Target)
	})
	t.Run("hidden", func(t *testing.T) {
		r, err := s.ListFiles(ctx, ".", "", true, 0)
		require.NoError(t, err)
		assert.Contains(t, paths(r.Entries), ".hidden")
		assert.NotContains(t, paths(r.Entries), ".env", "denied entries are omitted even with hidden ones")
	})
	t.Run("glob by name walks the tree", func(t *testing.T) {
		r, err := s.ListFiles(ctx, "", "*.go", false, 0)
		require.NoError(t, err)
		assert.Equal(t, []string{"a.go", "src/deep/y.go", "src/x.go"}, paths(r.Entries))
	})
	t.Run("glob by path", func(t *testing.T) {
		r, err := s.ListFiles(ctx, "src", "deep/*.go", true, 0)
		require.NoError(t, err)
		assert.Equal(t, []string{"src/deep/y.go"}, paths(r.Entries))
	})
	t.Run("limit", func(t *testing.T) {
		r, err := s.ListFiles(ctx, "", "", false, 2)
		require.NoError(t, err)
		assert.Equal(t, []string{"a.go", "b.txt"}, paths(r.Entries))
		assert.True(t, r.Truncated)
	})
	t.Run("errors", func(t *testing.T) {
		_, err := s.ListFiles(ctx, "a.go", "", false, 0)
		assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
		_, err = s.ListFiles(ctx, "", "[", false, 0)
		assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
		_, err = s.ListFiles(ctx, "", "", false, -1)
		assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
	})
}

func TestListFilesMaxResults(t *testing.T) {
	f := newFixture(t)
	for i := range 12 {
		write(t, f.root, strings.Repeat("f", i+1), "")
	}
	s := f.open(t, workspace.WithLimits(workspace.Limits{MaxListResults: 10}))
	r, err := s.ListFiles(ctx, "", "", false, 100)
	require.NoError(t, err)
	assert.Len(t, r.Entries, 10, "the limit is clamped to MaxListResults")
	assert.True(t, r.Truncated)
}

func TestGrep(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "a.go", "package a\n// TODO: one\nfunc A() {}\n")
	write(t, f.root, "b.py", "# todo two\n")
	write(t, f.root, "many.txt", strings.Repeat("TODO\n", 10))
	write(t, f.root, "big.txt", "TODO "+strings.Repeat("x", 2000)+"\n")
	write(t, f.root, "bin.dat", "TODO\x00\n")
	write(t, f.root, "long.txt", "TODO "+strings.Repeat("é", 100)+"\n")
	write(t, f.root, ".env", "TODO secret\n")
	write(t, f.root, "env.txt", "TODO secret\n") // the allowed twin
	write(t, f.root, "sub/c.go", "// TODO: three\n")
	s := f.open(t, workspace.WithDeniedPaths(".env*"), workspace.WithLimits(workspace.Limits{MaxGrepFileBytes: 1000, MaxGrepLineChars: 20, MaxGrepMatches: 4}))

	t.Run("caps, skips and clipping", func(t *testing.T) {
		r, err := s.Grep(ctx, "TODO", "", "", workspace.GrepOptions{IncludeHidden: true})
		require.NoError(t, err)
		var got []string
		for _, m := range r.Matches {
			got = append(got, m.Path)
		}
		assert.Equal(t, []string{"a.go", "env.txt", "long.txt", "many.txt"}, got, "path order, total cap 4")
		assert.True(t, r.Truncated)
		assert.Equal(t, 1, r.SkippedLarge)
		assert.Equal(t, 1, r.SkippedBinary)
		assert.Equal(t, 1, r.SkippedDenied)
		for _, m := range r.Matches {
			assert.NotEqual(t, ".env", m.Path)
			if m.Path == "long.txt" {
				assert.True(t, m.Clipped)
				assert.Equal(t, 20, len([]rune(m.Text)))
			}
		}
		assert.Equal(t, workspace.GrepMatch{Path: "a.go", Line: 2, Text: "// TODO: one"}, r.Matches[0])
	})
	t.Run("per file cap", func(t *testing.T) {
		r, err := s.Grep(ctx, "TODO", "many.txt", "", workspace.GrepOptions{MaxPerFile: 3})
		require.NoError(t, err)
		assert.Len(t, r.Matches, 3)
		assert.Equal(t, []string{"many.txt"}, r.FilesCapped)
		assert.Equal(t, 3, r.Matches[2].Line)
	})
	t.Run("glob and case", func(t *testing.T) {
		r, err := s.Grep(ctx, "todo", "", "*.go", workspace.GrepOptions{IgnoreCase: true})
		require.NoError(t, err)
		require.Len(t, r.Matches, 2)
		assert.Equal(t, "a.go", r.Matches[0].Path)
		assert.Equal(t, workspace.GrepMatch{Path: "sub/c.go", Line: 1, Text: "// TODO: three"}, r.Matches[1])
		assert.Equal(t, 2, r.FilesSearched)
	})
	t.Run("anchors match per line", func(t *testing.T) {
		r, err := s.Grep(ctx, "^func", "", "*.go", workspace.GrepOptions{})
		require.NoError(t, err)
		require.Len(t, r.Matches, 1)
		assert.Equal(t, 3, r.Matches[0].Line)
	})
	t.Run("denied single file", func(t *testing.T) {
		_, err := s.Grep(ctx, "TODO", ".env", "", workspace.GrepOptions{})
		requireDenied(t, err, policy.Deny)
	})
	t.Run("bad regex", func(t *testing.T) {
		_, err := s.Grep(ctx, "(", "", "", workspace.GrepOptions{})
		assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
	})
}
