//go:build linux

package workspace_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// TestGitWithUserConfig: with a real ~/.gitconfig in the home, git works
// in every sandbox — in an existing repository and with git init in a
// fresh root — and reads none of the host's configuration: under Landlock
// an unreadable global config made git exit 128. Checked from outside by
// the host's own git. Twin: a policy that lets commands read ~/.gitconfig
// gets the user's configuration.
func TestGitWithUserConfig(t *testing.T) {
	gitTool, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	backends := map[string]func(t *testing.T) executor.Executor{
		"landlock": func(t *testing.T) executor.Executor { return newLandlockX(t, landlock.Config{}) },
		"bwrap":    func(t *testing.T) executor.Executor { return newBwrapX(t, bwrap.Config{}) },
	}
	for name, newX := range backends {
		t.Run(name, func(t *testing.T) {
			x := newX(t)
			f := newAutoFixture(t)
			require.NoError(t, os.WriteFile(filepath.Join(f.home, ".gitconfig"),
				[]byte("[user]\n\tname = Host User\n\temail = host@example.invalid\n[alias]\n\thostalias = log\n"), 0o644))
			hostGit := func(dir string, args ...string) string {
				t.Helper()
				cmd := exec.Command(gitTool, append([]string{"-C", dir}, args...)...)
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+f.home)
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
				return strings.TrimSpace(string(out))
			}
			open := func(p *policy.Policy) *workspace.Session {
				return f.open(t, x, workspace.WithPolicy(p), workspace.WithApprover(func(context.Context, *workspace.ApprovalRequest) (bool, error) { return true, nil }))
			}
			// A fresh root: git init, add and commit (identity given on
			// the command line: the host's is not read).
			s := open(policy.Coding.Policy())
			res, err := s.Run(t.Context(), "git init -q && git add notes.md && git -c user.name=agent -c user.email=agent@example.invalid commit -q -m first", "", 0)
			require.NoError(t, err)
			assert.Equal(t, 0, res.ExitCode, res.Stderr)
			assert.Equal(t, "first", hostGit(f.root, "log", "-1", "--format=%s"), "the host's git sees the commit")

			// An existing repository: status, log, and no host config.
			res, err = s.Run(t.Context(), "git status --short && git log --format=%an && git config --get user.name; echo rc=$?", "", 0)
			require.NoError(t, err)
			assert.Equal(t, "agent\nrc=1\n", res.Stdout, res.Stderr)
			assert.NotContains(t, res.Stderr, "fatal")
			res, err = s.Run(t.Context(), "git hostalias -1", "", 0)
			require.NoError(t, err)
			assert.NotEqual(t, 0, res.ExitCode, "the host's alias is not read")
			require.NoError(t, s.Close())

			// Twin: a policy that lets commands read ~/.gitconfig gets
			// the user's configuration (the fixture's .gitconfig works).
			p := policy.Coding.Policy()
			p.PathRules = []policy.PathRule{{Pattern: "~/.gitconfig", Action: policy.Allow, Ops: []policy.Op{policy.Read}}}
			s = open(p)
			res, err = s.Run(t.Context(), "git config --get user.name && git hostalias -1 --format=%s", "", 0)
			require.NoError(t, err)
			assert.Equal(t, "Host User\nfirst\n", res.Stdout, res.Stderr)
		})
	}
}
