package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/workspace"
)

func TestMain(m *testing.M) {
	landlock.Init()
	bwrap.Init()
	os.Exit(m.Run())
}

// TestQuickstart runs the README's program on bwrap: an allowed command's
// output and the file tool's read come back, a denied file is refused by
// the gate with its rule, and the instructions follow. Twin of the
// refusal: the same file under another name is read.
func TestQuickstart(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.md"), []byte("first line\nsecond line\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("TOKEN=quickstart-secret\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "env.txt"), []byte("TOKEN=not-a-secret\n"), 0o644))
	no := askOnTerminal(strings.NewReader(""), &bytes.Buffer{})
	yes := askOnTerminal(strings.NewReader("y\ny\ny\n"), &bytes.Buffer{})

	x, err := bwrap.New(bwrap.Config{})
	if err != nil {
		testenv.SkipUnavailable(t, testenv.Bwrap, err)
	}
	var out bytes.Buffer
	code, err := run(t.Context(), &out, root, x, "cat notes.md env.txt", "notes.md", yes)
	require.NoError(t, err)
	assert.Equal(t, 0, code)
	assert.Contains(t, out.String(), "second line\nTOKEN=not-a-secret\n")
	assert.Contains(t, out.String(), "notes.md, lines 1-5 of 2:\nfirst line\n")
	assert.Contains(t, out.String(), "## Workspace")
	assert.Contains(t, out.String(), "agent tools")

	x, err = bwrap.New(bwrap.Config{})
	require.NoError(t, err)
	out.Reset()
	code, err = run(t.Context(), &out, root, x, "cat .env", "", no)
	require.NoError(t, err)
	assert.Equal(t, 1, code)
	assert.Contains(t, out.String(), `refused: run cat .env: denied by denied_paths[0] ".env*"`)
	assert.NotContains(t, out.String(), "quickstart-secret")
}

// TestAskOnTerminal: y is once, s the session, anything else and end of
// input refuse.
func TestAskOnTerminal(t *testing.T) {
	var prompt bytes.Buffer
	ask := askOnTerminal(strings.NewReader("y\ns\nmaybe\n"), &prompt)
	r := &workspace.ApprovalRequest{Op: "read", Path: "/etc/hostname"}
	for _, want := range []workspace.Answer{
		{Allow: true, Scope: workspace.ScopeOnce},
		{Allow: true, Scope: workspace.ScopeSession},
		{},
		{},
	} {
		got, err := ask(context.Background(), r)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	assert.Contains(t, prompt.String(), "allow read /etc/hostname?")
	_, err := newExecutor("nosuch")
	assert.ErrorContains(t, err, `unknown backend "nosuch" (valid: bwrap, landlock, local)`)
}
