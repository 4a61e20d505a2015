package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// recordingAsker answers every ask with scope and records the requests.
type recordingAsker struct {
	mu    sync.Mutex
	reqs  []*workspace.ApprovalRequest
	scope workspace.Scope
}

func (a *recordingAsker) ask(_ context.Context, r *workspace.ApprovalRequest) (workspace.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, r)
	return workspace.Answer{Allow: true, Scope: a.scope}, nil
}

func (a *recordingAsker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.reqs)
}

func (a *recordingAsker) last() *workspace.ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reqs[len(a.reqs)-1]
}

// TestSessionGrantScope: a session answer covers exactly what was asked:
// the same command words (not another subcommand, not other arguments),
// the same path and op for the same tool (a read grant is not a write
// grant), and it ends with the session.
func TestSessionGrantScope(t *testing.T) {
	root, home, notes := notesFixture(t)
	a := &recordingAsker{scope: workspace.ScopeSession}
	ws, err := workspace.Local(root, workspace.WithHome(home), workspace.WithAsker(a.ask),
		workspace.WithPathRules(policy.PathRule{Pattern: "~/notes", Action: policy.Ask}))
	require.NoError(t, err)
	s, err := ws.Open(t.Context())
	require.NoError(t, err)
	ctx := t.Context()

	run := func(command string) {
		t.Helper()
		_, err := s.Run(ctx, command, "", 0)
		require.NoError(t, err, command)
	}
	run("git status --short")
	require.Equal(t, 1, a.count())
	assert.Contains(t, a.last().Scopes, workspace.ScopeSession)
	assert.Contains(t, a.last().Covers, `"git status --short"`)
	run("git status --short")
	assert.Equal(t, 1, a.count(), "the same command is covered")
	run("git status")
	assert.Equal(t, 2, a.count(), "other words ask")
	run("git log -n 1 --oneline")
	assert.Equal(t, 3, a.count(), "another subcommand asks")

	_, err = s.ReadText(ctx, filepath.Join(notes, "a.txt"), 0, 0)
	require.NoError(t, err)
	require.Equal(t, 4, a.count())
	assert.Equal(t, "read_file read of "+filepath.Join(notes, "a.txt")+" and below it", a.last().Covers)
	_, err = s.ReadText(ctx, filepath.Join(notes, "a.txt"), 0, 0)
	require.NoError(t, err)
	assert.Equal(t, 4, a.count(), "the same read is covered")
	_, err = s.WriteText(ctx, filepath.Join(notes, "a.txt"), "changed\n", false)
	require.NoError(t, err)
	assert.Equal(t, 5, a.count(), "a read grant does not cover a write")
	_, err = s.ListFiles(ctx, notes, "", false, 0)
	require.NoError(t, err)
	assert.Equal(t, 6, a.count(), "another tool asks")

	// A command that names a file outside the root: its claim is covered
	// for the same command, not for one that writes there.
	run("cat " + filepath.Join(notes, "a.txt"))
	assert.Equal(t, 7, a.count())
	run("cat " + filepath.Join(notes, "a.txt"))
	assert.Equal(t, 7, a.count())

	// A dynamic command offers no session scope.
	run(`x=status; git "$x"`)
	assert.Equal(t, []workspace.Scope{workspace.ScopeOnce}, a.last().Scopes)
	n := a.count()
	run(`x=status; git "$x"`)
	assert.Equal(t, n+1, a.count(), "never covered")

	// Grants end with the session.
	require.NoError(t, s.Close())
	s2, err := ws.Open(ctx)
	require.NoError(t, err)
	defer s2.Close()
	n = a.count()
	_, err = s2.Run(ctx, "git status --short", "", 0)
	require.NoError(t, err)
	assert.Equal(t, n+1, a.count(), "a new session asks again")
}

// TestSessionGrantOnce: an Approver's answers and ScopeOnce answers are
// never remembered.
func TestSessionGrantOnce(t *testing.T) {
	root := t.TempDir()
	a := &recordingAsker{scope: workspace.ScopeOnce}
	ws, err := workspace.Local(root, workspace.WithAsker(a.ask))
	require.NoError(t, err)
	s, err := ws.Open(t.Context())
	require.NoError(t, err)
	defer s.Close()
	for range 2 {
		_, err := s.Run(t.Context(), "git status", "", 0)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, a.count())
	assert.True(t, slices.Contains(a.last().Scopes, workspace.ScopeOnce))
}

// TestSessionGrantKeyHoles: a session grant does not cover a command
// with other assignments (PATH=./bin ls ran an agent-written ls), nor a
// changed file run by an interpreter the key did not know (python3.11,
// mawk). Found by an attack review.
func TestSessionGrantKeyHoles(t *testing.T) {
	root := t.TempDir()
	a := &recordingAsker{scope: workspace.ScopeSession}
	ws, err := workspace.Local(root, workspace.WithAsker(a.ask))
	require.NoError(t, err)
	s, err := ws.Open(t.Context())
	require.NoError(t, err)
	defer s.Close()
	run := func(cmd string) {
		t.Helper()
		_, err := s.Run(t.Context(), cmd, "", 0)
		require.NoError(t, err, cmd)
	}
	run("ls")
	n := a.count()
	run("ls")
	require.Equal(t, n, a.count(), "control: covered")
	run("PATH=./bin:/usr/bin ls")
	assert.Equal(t, n+1, a.count(), "an assignment is part of what was approved")

	script := filepath.Join(root, "b.awk")
	require.NoError(t, os.WriteFile(script, []byte("BEGIN { print 1 }\n"), 0o644))
	run("mawk -f b.awk")
	n = a.count()
	run("mawk -f b.awk")
	require.Equal(t, n, a.count(), "control: covered while unchanged")
	require.NoError(t, os.WriteFile(script, []byte("BEGIN { print 2 }\n"), 0o644))
	run("mawk -f b.awk")
	assert.Equal(t, n+1, a.count(), "a changed file asks again, whatever the program")

	// Output redirection targets are not pinned: writing them does not
	// void the grant.
	run("date > out.txt")
	n = a.count()
	run("date > out.txt")
	assert.Equal(t, n, a.count(), "an output file's new content does not ask again")
}

// notesFixture makes a root and a home with ~/notes/a.txt.
func notesFixture(t *testing.T) (root, home, notes string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, home = filepath.Join(base, "root"), filepath.Join(base, "home")
	notes = filepath.Join(home, "notes")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.MkdirAll(notes, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(notes, "a.txt"), []byte("note a\n"), 0o644))
	return root, home, notes
}
