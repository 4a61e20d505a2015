package workspace_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

func TestReadText(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "a.txt", "one\ntwo\nthree\n")
	write(t, f.root, "bin.dat", "ab\x00cd\n")
	write(t, f.root, "latin1.txt", "caf\xe9\n")
	require.NoError(t, os.Mkdir(filepath.Join(f.root, "dir"), 0o755))
	s := f.open(t)

	t.Run("whole file", func(t *testing.T) {
		r, err := s.ReadText(ctx, "a.txt", 0, 0)
		require.NoError(t, err)
		assert.Equal(t, &workspace.ReadResult{Path: "a.txt", Content: "one\ntwo\nthree\n", StartLine: 1, EndLine: 3, TotalLines: 3, Size: 14}, r)
	})
	t.Run("range", func(t *testing.T) {
		r, err := s.ReadText(ctx, "a.txt", 2, 2)
		require.NoError(t, err)
		assert.Equal(t, "two\n", r.Content)
		assert.Equal(t, 3, r.TotalLines)
		assert.False(t, r.Truncated)
	})
	t.Run("absolute path inside", func(t *testing.T) {
		r, err := s.ReadText(ctx, filepath.Join(f.root, "a.txt"), 3, 0)
		require.NoError(t, err)
		assert.Equal(t, "three\n", r.Content)
		assert.Equal(t, "a.txt", r.Path)
	})
	errs := []struct {
		name       string
		path       string
		start, end int
		want       error
	}{
		{"binary", "bin.dat", 0, 0, workspace.ErrNotText},
		{"not utf-8", "latin1.txt", 0, 0, workspace.ErrNotText},
		{"directory", "dir", 0, 0, workspace.ErrNotRegular},
		{"missing", "nope.txt", 0, 0, fs.ErrNotExist},
		{"start past the end", "a.txt", 4, 0, workspace.ErrInvalidArgument},
		{"negative start", "a.txt", -1, 0, workspace.ErrInvalidArgument},
		{"end before start", "a.txt", 3, 2, workspace.ErrInvalidArgument},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.ReadText(ctx, tt.path, tt.start, tt.end)
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

func TestReadTextLimits(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "long.txt", strings.Repeat("0123456789\n", 100)) // 1100 bytes, 100 lines
	s := f.open(t, workspace.WithLimits(workspace.Limits{MaxFileReadChars: 55, MaxFileReadBytes: 505}))

	t.Run("chars", func(t *testing.T) {
		r, err := s.ReadText(ctx, "long.txt", 1, 10)
		require.NoError(t, err)
		assert.True(t, r.Truncated)
		assert.Equal(t, strings.Repeat("0123456789\n", 5), r.Content, "whole lines up to the limit")
		assert.Equal(t, 5, r.EndLine)
	})
	t.Run("bounded prefix", func(t *testing.T) {
		r, err := s.ReadText(ctx, "long.txt", 45, 0)
		require.NoError(t, err)
		assert.True(t, r.Partial)
		assert.True(t, r.Truncated)
		assert.Equal(t, 45, r.TotalLines, "lines within the first 505 bytes")
		assert.Equal(t, "0123456789\n", r.Content)
		assert.Equal(t, int64(1100), r.Size)
	})
	t.Run("control: a range within the prefix is not truncated", func(t *testing.T) {
		r, err := s.ReadText(ctx, "long.txt", 2, 3)
		require.NoError(t, err)
		assert.False(t, r.Truncated)
	})
}

func TestWriteText(t *testing.T) {
	f := newFixture(t)
	s := f.open(t)

	r, err := s.WriteText(ctx, "sub/dir/new.txt", "hello\n", false)
	require.NoError(t, err)
	assert.Equal(t, &workspace.WriteResult{Path: "sub/dir/new.txt", Action: workspace.ActionCreated, Bytes: 6}, r)
	assert.Equal(t, "hello\n", read(t, filepath.Join(f.root, "sub/dir/new.txt")))

	r, err = s.WriteText(ctx, "sub/dir/new.txt", "hello\n", false)
	require.NoError(t, err)
	assert.Equal(t, workspace.ActionUnchanged, r.Action)

	r, err = s.WriteText(ctx, "sub/dir/new.txt", "bye\n", false)
	require.NoError(t, err)
	assert.Equal(t, workspace.ActionUpdated, r.Action)
	assert.Equal(t, "bye\n", read(t, filepath.Join(f.root, "sub/dir/new.txt")))

	_, err = s.WriteText(ctx, "sub/dir/new.txt", "again\n", true)
	assert.ErrorIs(t, err, fs.ErrExist, "create_only on an existing file")
	assert.Equal(t, "bye\n", read(t, filepath.Join(f.root, "sub/dir/new.txt")))
	r, err = s.WriteText(ctx, "sub/other.txt", "x", true)
	require.NoError(t, err, "control: create_only on a new file")
	assert.Equal(t, workspace.ActionCreated, r.Action)

	_, err = s.WriteText(ctx, "sub", "x", false)
	assert.ErrorIs(t, err, workspace.ErrNotRegular)

	t.Run("mode is preserved", func(t *testing.T) {
		p := write(t, f.root, "run.sh", "#!/bin/sh\n")
		require.NoError(t, os.Chmod(p, 0o751))
		_, err := s.WriteText(ctx, "run.sh", "#!/bin/sh\necho hi\n", false)
		require.NoError(t, err)
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o751), st.Mode().Perm())
	})
	t.Run("no temporary files left", func(t *testing.T) {
		err := filepath.WalkDir(f.root, func(p string, d fs.DirEntry, err error) error {
			assert.NotContains(t, d.Name(), ".cordon-")
			return err
		})
		require.NoError(t, err)
	})
}

func TestEditText(t *testing.T) {
	f := newFixture(t)
	s := f.open(t)

	p := write(t, f.root, "main.go", "package main\n\nfunc a() {}\nfunc b() {}\nfunc a2() {}\n")
	r, err := s.EditText(ctx, "main.go", "func b() {}", "func b() { return }", false)
	require.NoError(t, err)
	assert.Equal(t, &workspace.EditResult{Path: "main.go", Replacements: 1, FirstLine: 4}, r)
	assert.Equal(t, "package main\n\nfunc a() {}\nfunc b() { return }\nfunc a2() {}\n", read(t, p))

	_, err = s.EditText(ctx, "main.go", "func c", "x", false)
	var me *workspace.MatchError
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, workspace.ErrNoMatch)
	assert.Equal(t, 0, me.Count)

	_, err = s.EditText(ctx, "main.go", "func a", "func z", false)
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, workspace.ErrAmbiguousMatch)
	assert.Equal(t, 2, me.Count)

	r, err = s.EditText(ctx, "main.go", "func a", "func z", true)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Replacements)
	assert.Equal(t, "package main\n\nfunc z() {}\nfunc b() { return }\nfunc z2() {}\n", read(t, p))

	_, err = s.EditText(ctx, "main.go", "func b", "func b", false)
	assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
	_, err = s.EditText(ctx, "main.go", "", "x", false)
	assert.ErrorIs(t, err, workspace.ErrInvalidArgument)
	_, err = s.EditText(ctx, "missing.go", "a", "b", false)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	t.Run("crlf", func(t *testing.T) {
		p := write(t, f.root, "win.txt", "first\r\nsecond\r\nthird\r\n")
		r, err := s.EditText(ctx, "win.txt", "first\nsecond\n", "one\ntwo\nmore\n", false)
		require.NoError(t, err)
		assert.Equal(t, 1, r.Replacements)
		assert.Equal(t, "one\r\ntwo\r\nmore\r\nthird\r\n", read(t, p), "the edit keeps CRLF")
	})
	t.Run("binary refused", func(t *testing.T) {
		write(t, f.root, "b.bin", "a\x00b")
		_, err := s.EditText(ctx, "b.bin", "a", "c", false)
		assert.ErrorIs(t, err, workspace.ErrNotText)
	})
	t.Run("too large", func(t *testing.T) {
		s := f.open(t, workspace.WithLimits(workspace.Limits{MaxFileReadBytes: 10}))
		write(t, f.root, "big.txt", strings.Repeat("x", 11))
		_, err := s.EditText(ctx, "big.txt", "x", "y", true)
		assert.ErrorIs(t, err, workspace.ErrTooLarge)
	})
}

// TestFilePolicy checks that every file tool passes the policy first, with
// an allowed twin for every denial.
func TestFilePolicy(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, ".env", "SECRET=1\n")
	write(t, f.root, "env.txt", "SECRET=1\n") // the allowed twin
	write(t, f.root, "secrets/key", "k\n")
	write(t, f.root, "src/key", "k\n")
	write(t, f.outside, "notes.txt", "outside\n")
	s := f.open(t, workspace.WithDeniedPaths(".env*"), workspace.WithPathRules(policy.PathRule{Pattern: "secrets/", Action: policy.Deny}))

	denied := []struct {
		name    string
		op      func() error
		twin    func() error
		verdict policy.Decision
	}{
		{"read denied name", func() error { _, err := s.ReadText(ctx, ".env", 0, 0); return err },
			func() error { _, err := s.ReadText(ctx, "env.txt", 0, 0); return err }, policy.Deny},
		{"read denied subtree", func() error { _, err := s.ReadText(ctx, "secrets/key", 0, 0); return err },
			func() error { _, err := s.ReadText(ctx, "src/key", 0, 0); return err }, policy.Deny},
		{"write denied name", func() error { _, err := s.WriteText(ctx, ".env.local", "x", false); return err },
			func() error { _, err := s.WriteText(ctx, "env.local", "x", false); return err }, policy.Deny},
		{"edit denied", func() error { _, err := s.EditText(ctx, ".env", "1", "2", false); return err },
			func() error { _, err := s.EditText(ctx, "env.txt", "1", "2", false); return err }, policy.Deny},
		{"write protected", func() error { _, err := s.WriteText(ctx, ".git/hooks/pre-commit", "x", false); return err },
			func() error { _, err := s.WriteText(ctx, ".git/objects/ab", "x", false); return err }, policy.Deny},
		{"write outside", func() error { _, err := s.WriteText(ctx, filepath.Join(f.outside, "x"), "x", false); return err },
			func() error { _, err := s.WriteText(ctx, "x", "x", false); return err }, policy.Deny},
		{"read outside needs approval", func() error { _, err := s.ReadText(ctx, filepath.Join(f.outside, "notes.txt"), 0, 0); return err },
			func() error { _, err := s.ReadText(ctx, "src/key", 0, 0); return err }, policy.Ask},
		{"list outside needs approval", func() error { _, err := s.ListFiles(ctx, f.outside, "", false, 0); return err },
			func() error { _, err := s.ListFiles(ctx, "src", "", false, 0); return err }, policy.Ask},
		{"grep denied subtree", func() error { _, err := s.Grep(ctx, "k", "secrets", "", workspace.GrepOptions{}); return err },
			func() error { _, err := s.Grep(ctx, "k", "src", "", workspace.GrepOptions{}); return err }, policy.Deny},
		{"home path outside", func() error { _, err := s.ReadText(ctx, "~/anything", 0, 0); return err },
			func() error { _, err := s.ReadText(ctx, "env.txt", 0, 0); return err }, policy.Ask},
	}
	for _, tt := range denied {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.twin(), "control: the allowed twin works")
			requireDenied(t, tt.op(), tt.verdict)
		})
	}
	assert.Equal(t, "SECRET=1\n", read(t, filepath.Join(f.root, ".env")), "the denied edit changed nothing")
	assert.NoFileExists(t, filepath.Join(f.root, ".git/hooks/pre-commit"))
	assert.NoFileExists(t, filepath.Join(f.outside, "x"))
}

func TestApprover(t *testing.T) {
	f := newFixture(t)
	notes := write(t, f.outside, "notes.txt", "outside\n")

	t.Run("approved", func(t *testing.T) {
		a := &approvals{answer: true}
		s := f.open(t, workspace.WithApprover(a.approve))
		r, err := s.ReadText(ctx, notes, 0, 0)
		require.NoError(t, err)
		assert.Equal(t, "outside\n", r.Content)
		assert.Equal(t, notes, r.Path, "outside paths are shown absolute")
		reqs := a.requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, "read", reqs[0].Op)
		assert.Equal(t, notes, reqs[0].Path)
		require.NotNil(t, reqs[0].Verdict)
		assert.Equal(t, policy.Ask, reqs[0].Verdict.Decision)
		assert.NotEmpty(t, reqs[0].Reason())

		_, err = s.ReadText(ctx, "missing-inside.txt", 0, 0)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.Len(t, a.requests(), 1, "an allow asks nobody")
	})
	t.Run("declined", func(t *testing.T) {
		a := &approvals{answer: false}
		s := f.open(t, workspace.WithApprover(a.approve))
		_, err := s.ReadText(ctx, notes, 0, 0)
		requireDenied(t, err, policy.Ask)
		assert.Len(t, a.requests(), 1)
	})
	t.Run("approver error", func(t *testing.T) {
		boom := errors.New("ui gone")
		a := &approvals{err: boom}
		s := f.open(t, workspace.WithApprover(a.approve))
		_, err := s.ReadText(ctx, notes, 0, 0)
		assert.ErrorIs(t, err, boom)
	})
	t.Run("deny never asks", func(t *testing.T) {
		a := &approvals{answer: true}
		s := f.open(t, workspace.WithApprover(a.approve))
		_, err := s.WriteText(ctx, filepath.Join(f.outside, "x"), "x", false)
		requireDenied(t, err, policy.Deny)
		assert.Empty(t, a.requests())
	})
}

func TestReadonlyMode(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "a.txt", "a\n")
	s := f.open(t, workspace.WithMode(policy.Readonly))
	_, err := s.ReadText(ctx, "a.txt", 0, 0)
	require.NoError(t, err, "control: reads work")
	_, err = s.WriteText(ctx, "a.txt", "b\n", false)
	requireDenied(t, err, policy.Deny)
	_, err = s.Run(ctx, "true", "", 0)
	requireDenied(t, err, policy.Deny)
	assert.Equal(t, "a\n", read(t, filepath.Join(f.root, "a.txt")))
}

func TestSpecialFiles(t *testing.T) {
	f := newFixture(t)
	fifo := filepath.Join(f.root, "pipe")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("requires mkfifo: %v", err)
	}
	write(t, f.root, "plain.txt", "needle\n") // the control
	s := f.open(t)
	_, err := s.ReadText(ctx, "pipe", 0, 0)
	assert.ErrorIs(t, err, workspace.ErrNotRegular, "a FIFO is refused, not waited on")
	_, err = s.EditText(ctx, "pipe", "a", "b", false)
	assert.ErrorIs(t, err, workspace.ErrNotRegular)
	_, err = s.WriteText(ctx, "pipe", "x", false)
	assert.ErrorIs(t, err, workspace.ErrNotRegular)
	r, err := s.Grep(ctx, "needle", "", "", workspace.GrepOptions{})
	require.NoError(t, err)
	require.Len(t, r.Matches, 1)
	assert.Equal(t, "plain.txt", r.Matches[0].Path)
	l, err := s.ListFiles(ctx, "", "", false, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"pipe", "plain.txt"}, paths(l.Entries))
	assert.Equal(t, "fifo", l.Entries[0].Type)
}
