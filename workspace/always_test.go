package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// TestApprovalAlways: an "always" answer is written to the user layer as
// the allow rule that covers the ask (the file keeps its comments), holds
// for the session, and holds in a later workspace built from the layers,
// where a managed deny still beats it. It is not offered for a dynamic
// command or one that names a file.
func TestApprovalAlways(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "")
	root, home, notes := notesFixture(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "build.sh"), []byte("echo hi\n"), 0o755))
	userFile := filepath.Join(home, ".config", "cordon", "policy.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(userFile), 0o700))
	require.NoError(t, os.WriteFile(userFile, []byte("# my settings\ndenied_paths: [\"*.kdbx\"] # keep\n"), 0o600))

	a := &recordingAsker{scope: workspace.ScopeAlways}
	ws, err := workspace.Local(root, workspace.WithHome(home), workspace.WithAsker(a.ask), workspace.WithApprovalStore(userFile))
	require.NoError(t, err)
	s, err := ws.Open(t.Context())
	require.NoError(t, err)
	ctx := t.Context()
	_, err = s.Run(ctx, "git status --short", "", 0)
	require.NoError(t, err)
	require.Equal(t, 1, a.count())
	assert.Contains(t, a.last().Scopes, workspace.ScopeAlways)
	_, err = s.Run(ctx, "git status --short", "", 0)
	require.NoError(t, err)
	assert.Equal(t, 1, a.count(), "holds for the session")
	_, err = s.ReadText(ctx, filepath.Join(notes, "a.txt"), 0, 0)
	require.NoError(t, err)
	assert.Contains(t, a.last().Scopes, workspace.ScopeAlways)

	// Not offered: a dynamic command, a command naming a file, one with an
	// assignment or a wrapper (a rule would cover the bare command).
	for _, cmd := range []string{`x=status; git "$x"`, "sh build.sh", "PATH=/usr/bin:/bin git log -n 1", "env git log -n 2"} {
		_, err = s.Run(ctx, cmd, "", 0)
		require.NoError(t, err)
		assert.NotContains(t, a.last().Scopes, workspace.ScopeAlways, cmd)
	}
	require.NoError(t, s.Close())

	data, err := os.ReadFile(userFile)
	require.NoError(t, err)
	text := string(data)
	t.Logf("user layer after the approvals:\n%s", text)
	assert.Contains(t, text, "# my settings", "comments kept")
	assert.Contains(t, text, "# keep")
	assert.Contains(t, text, "git status --short")
	assert.Contains(t, text, notes+"/a.txt")
	st, err := os.Stat(userFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// A later workspace from the layers: no ask; a managed deny wins.
	managed := policy.Layer{Kind: policy.LayerManaged, File: "/etc/cordon/policy.yaml", Spec: mustSpec(t,
		"command_rules: [{pattern: \"git status\", action: deny}]\ndenied_paths: [\""+notes+"\"]\n")}
	stack, err := policy.LoadStack(nil, root, home, true)
	require.NoError(t, err)
	for _, withManaged := range []bool{false, true} {
		layers := stack
		if withManaged {
			layers = append(append(policy.Stack(nil), stack...), managed)
		}
		b := &recordingAsker{scope: workspace.ScopeOnce}
		ws2, err := workspace.Local(root, workspace.WithHome(home), workspace.WithAsker(b.ask), workspace.WithPolicyLayers(layers...))
		require.NoError(t, err)
		s2, err := ws2.Open(ctx)
		require.NoError(t, err)
		_, runErr := s2.Run(ctx, "git status --short", "", 0)
		_, readErr := s2.ReadText(ctx, filepath.Join(notes, "a.txt"), 0, 0)
		s2.Close()
		if withManaged {
			assert.Error(t, runErr, "a managed deny beats an always approval")
			assert.Error(t, readErr, "a managed deny beats an always approval")
			assert.Contains(t, runErr.Error(), "managed")
		} else {
			assert.NoError(t, runErr)
			assert.NoError(t, readErr)
		}
		assert.Zero(t, b.count(), "nothing asks")
	}
}

// TestApprovalStoreInsideRoot: the store must not be a file a command
// could rewrite.
func TestApprovalStoreInsideRoot(t *testing.T) {
	root := t.TempDir()
	_, err := workspace.Local(root, workspace.WithApprovalStore(filepath.Join(root, ".cordon", "policy.yaml")))
	var oe *workspace.OptionError
	require.ErrorAs(t, err, &oe)
	assert.True(t, strings.Contains(err.Error(), "outside the workspace root"), err.Error())
}

func mustSpec(t *testing.T, yaml string) *policy.Spec {
	t.Helper()
	s, err := policy.LoadSpec(strings.NewReader(yaml))
	require.NoError(t, err)
	return s
}
