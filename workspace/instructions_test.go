package workspace_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestInstructions renders the "## Workspace" section for a table of
// configurations and compares it with testdata/instructions/NAME.golden
// (the root and home are written as $ROOT and $HOME). go test -update
// rewrites the files.
func TestInstructions(t *testing.T) {
	sandboxed := &described{caps: executor.Capabilities{
		Backend:   "bwrap",
		Sandboxed: true,
		Enforced:  []executor.Control{executor.ControlFSRead, executor.ControlFSWrite, executor.ControlProtect, executor.ControlNetTCP},
		Gaps:      []executor.Gap{{Control: executor.ControlFSNewFiles, Reason: "mounts cannot mask files created during a command"}},
	}}
	strict := &assessed{described: described{caps: executor.Capabilities{
		Backend:   "bwrap",
		Sandboxed: true,
		Enforced: []executor.Control{executor.ControlFSWrite, executor.ControlProtect, executor.ControlNetTCP, executor.ControlNetUDP,
			executor.ControlNetAbstract, executor.ControlSignal, executor.ControlProcessTree, executor.ControlHostProcess, executor.ControlKernelObjects},
		Gaps: []executor.Gap{{Control: executor.ControlFSRead, Reason: "start-time resolution", Concurrent: true}, {Control: executor.ControlNetUnix, Reason: "sockets"}},
	}}}
	tests := []struct {
		name string
		opts []workspace.Option
	}{
		{"coding-auto-allow", []workspace.Option{workspace.WithExecutor(strict), workspace.WithApprover(allowAll)}},
		{"coding-local", nil},
		{"coding-rules", []workspace.Option{
			workspace.WithDeniedPaths(".env*", "secrets/"),
			workspace.WithReadable("~/reference"),
			workspace.WithCommandRules(policy.CommandRule{Pattern: "go test", Action: policy.Allow}, policy.CommandRule{Pattern: "git push", Action: policy.Deny}),
			workspace.WithApprover(allowAll),
		}},
		{"readonly", []workspace.Option{workspace.WithMode(policy.Readonly)}},
		{"trusted-sandboxed", []workspace.Option{workspace.WithMode(policy.Trusted), workspace.WithExecutor(sandboxed)}},
		{"coding-sandboxed", []workspace.Option{workspace.WithExecutor(sandboxed), workspace.WithApprover(allowAll)}},
		{"custom-run-only", []workspace.Option{
			workspace.WithPolicy(&policy.Policy{Write: policy.Ask, ReadOutside: policy.Deny, WriteOutside: policy.Deny, AllowShell: true, ShellDefault: policy.Deny,
				CommandRules: []policy.CommandRule{{Pattern: "make", Action: policy.Allow}}}),
			workspace.WithExecutor(runOnly{}),
			workspace.WithEnv(map[string]string{"PATH": "/usr/bin:/bin"}),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			s := f.open(t, tt.opts...)
			got := s.Instructions()
			assert.Equal(t, got, s.Workspace().Instructions(ctx), "session and workspace agree")
			got = strings.ReplaceAll(got, f.root, "$ROOT")
			got = strings.ReplaceAll(got, f.home, "$HOME")
			golden := filepath.Join("testdata", "instructions", tt.name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -update to create %s", golden)
			assert.Equal(t, string(want), got)
		})
	}
}

// TestInstructionsHonesty checks the properties the golden files must
// keep: no sandbox is claimed for an executor that enforces nothing, and
// the sandbox's gaps are named.
func TestInstructionsHonesty(t *testing.T) {
	f := newFixture(t)
	local := f.open(t).Instructions()
	assert.Contains(t, local, "Sandbox: none.")
	assert.Contains(t, local, "not enforced here")
	assert.Contains(t, local, "## Workspace")
	assert.Contains(t, local, f.root)

	runOnlyText := f.open(t, workspace.WithExecutor(runOnly{})).Instructions()
	assert.Contains(t, runOnlyText, "Sandbox: none.", "an executor without Describe enforces nothing")

	sb := f.open(t, workspace.WithExecutor(&described{caps: executor.Capabilities{Backend: "x", Sandboxed: true,
		Enforced: []executor.Control{executor.ControlFSRead}, Gaps: []executor.Gap{{Control: executor.ControlNetTCP, Reason: "no netns"}}}})).Instructions()
	assert.NotContains(t, sb, "Sandbox: none.")
	assert.Contains(t, sb, "no netns")
	assert.Contains(t, sb, "not enforced here", "network none is not claimed without net-tcp")
	for _, id := range []string{"host-process", "kernel-objects", "fs-read", "net-tcp"} {
		assert.NotContains(t, sb, id, "no capability ids for a model")
	}

	// Language advice only where the project uses the language.
	assert.NotContains(t, local, "Python:")
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "pyproject.toml"), nil, 0o644))
	assert.Contains(t, f.open(t).Instructions(), "Python: a virtualenv")
}
