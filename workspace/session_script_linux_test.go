//go:build linux

package workspace_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/workspace"
)

// agentSession is a scripted agent session of ordinary coding commands:
// explore, edit, build, test, git. TestPromptCount runs it under the
// coding preset on each executor and counts the approval prompts.
var agentSession = []string{
	// explore
	"ls", "ls -la", "ls src tests", "cat README.md", "cat src/calc.sh", "head -n 3 src/calc.sh",
	"wc -l src/calc.sh tests/test_calc.sh", "grep -rn TODO src", "grep -n add src/calc.sh", "find . -name '*.sh' -not -path './.git/*'",
	"find src -type f", "git status", "git log --oneline", "du -sh src", "file README.md", "sed -n 1,5p Makefile",
	"awk 'END { print NR }' src/calc.sh", "sort README.md | uniq -c", "stat -c %s README.md", "git diff",
	// edit
	"sed -i 's/TODO: subtract/subtract/' src/calc.sh", "printf '%s\\n' '## Usage' 'make test' >> README.md", "mkdir -p docs",
	"cp README.md docs/intro.md", "mv docs/intro.md docs/guide.md", "touch CHANGELOG.md", "echo '- add sub' > CHANGELOG.md",
	"rm docs/guide.md", "rmdir docs", "cat CHANGELOG.md", "tail -n 2 README.md", "git diff --stat",
	// build and test
	"make", "make test", "sh tests/test_calc.sh", "./src/calc.sh add 2 3", "sh src/calc.sh sub 5 3", "make clean", "make build",
	"ls build", "cat build/calc", "python3 -c 'print(2 + 3)'", "python3 -m py_compile tools/gen.py", "python3 tools/gen.py > build/table.txt",
	"test -s build/table.txt && echo ok", "cmp build/table.txt build/table.txt", "md5sum build/calc",
	// git
	"git add -A", "git status --short", "git commit -q -m 'add subtract'", "git log --oneline -n 3", "git show --stat HEAD",
	"git diff HEAD~1 --stat", "git branch feature", "git checkout -q feature", "echo x >> CHANGELOG.md", "git commit -q -am 'changelog'",
	"git checkout -q -", "git merge -q --no-edit feature", "git log --oneline", "git branch --list", "git status",
	"git rev-parse HEAD", "git tag v0.1", "git describe --tags",
}

// writeProject makes the project the session works on: a shell
// calculator with a test, a Makefile, a Python generator, and a git
// repository with one commit (made on the host).
func writeProject(t *testing.T, root string) {
	t.Helper()
	files := map[string]string{
		"README.md":          "# calc\n\nA calculator.\n",
		"src/calc.sh":        "#!/bin/sh\n# calc: add and subtract\ncase \"$1\" in\nadd) echo $(($2 + $3)) ;;\n# TODO: subtract\nsub) echo $(($2 - $3)) ;;\nesac\n",
		"tests/test_calc.sh": "#!/bin/sh\nset -e\n[ \"$(sh src/calc.sh add 2 3)\" = 5 ]\n[ \"$(sh src/calc.sh sub 5 3)\" = 2 ]\necho PASS\n",
		"Makefile":           "all: build\nbuild:\n\tmkdir -p build && cp src/calc.sh build/calc\ntest: build\n\tsh tests/test_calc.sh\nclean:\n\trm -rf build\n.PHONY: all build test clean\n",
		"tools/gen.py":       "for i in range(3):\n    print(i, i * i)\n",
		".gitignore":         "build/\n__pycache__/\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), gitIdentity...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
}

var gitIdentity = []string{"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.invalid", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}

// TestPromptCount runs agentSession under the coding preset on Local and
// on each strict sandbox, with sandbox auto-allow off and on, approving
// every ask and counting them. Every command must succeed everywhere (so
// the session is real work, not refusals), and with a sandbox that earns
// auto-allow the prompts must fall by at least 80%. The counts are
// logged; the README's table comes from `go test ./workspace -run
// TestPromptCount -v`.
func TestPromptCount(t *testing.T) {
	require.GreaterOrEqual(t, len(agentSession), 60)
	requireTools(t, "git", "make", "file", "/usr/bin/python3")
	type config struct {
		name string
		x    func(t *testing.T) executor.Executor
		auto bool
	}
	configs := []config{
		{"local", func(*testing.T) executor.Executor { return executor.NewLocal() }, true},
		{"bwrap, auto-allow off", func(t *testing.T) executor.Executor { return newBwrapX(t, bwrap.Config{}) }, false},
		{"bwrap", func(t *testing.T) executor.Executor { return newBwrapX(t, bwrap.Config{}) }, true},
		{"landlock", func(t *testing.T) executor.Executor { return newLandlockX(t, landlock.Config{}) }, true},
	}
	prompts := map[string]int{}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			root, home := filepath.Join(base, "proj"), filepath.Join(base, "home")
			require.NoError(t, os.MkdirAll(home, 0o755))
			writeProject(t, root)
			var asked atomic.Int32
			env := map[string]string{}
			for _, kv := range gitIdentity {
				k, v, _ := cut(kv)
				env[k] = v
			}
			env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
			ws, err := workspace.Local(root,
				workspace.WithHome(home),
				workspace.WithExecutor(c.x(t)),
				workspace.WithEnv(env),
				workspace.WithSandboxAutoAllow(c.auto),
				workspace.WithApprover(func(context.Context, *workspace.ApprovalRequest) (bool, error) {
					asked.Add(1)
					return true, nil
				}))
			require.NoError(t, err)
			s, err := ws.Open(t.Context())
			require.NoError(t, err)
			defer s.Close()
			for _, command := range agentSession {
				res, err := s.Run(t.Context(), command, "", 0)
				require.NoError(t, err, command)
				assert.Equal(t, 0, res.ExitCode, "%s: %s%s", command, res.Stdout, res.Stderr)
			}
			prompts[c.name] = int(asked.Load())
			t.Logf("%s: %d prompts in %d commands (auto-allow: %v: %s)", c.name, asked.Load(), len(agentSession), s.AutoAllow().On, s.AutoAllow().Why)
		})
	}
	if n, ok := prompts["bwrap"]; ok {
		base := prompts["local"]
		require.NotZero(t, base)
		assert.LessOrEqual(t, float64(n), 0.2*float64(base), "bwrap auto-allow: %d prompts vs %d with Local", n, base)
		t.Logf("prompts: %v", fmt.Sprint(prompts))
	}
}

func cut(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// requireTools skips the test, saying why, when a program the scripted
// commands run is missing (make test provisions them).
func requireTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed here (make test provisions it): %v", n, err)
		}
	}
}
