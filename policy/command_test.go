package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// gateFixture is a real root and home on disk for gate tests.
type gateFixture struct {
	root, home string
}

func newGateFixture(t testing.TB) gateFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{filepath.Join(root, "src"), filepath.Join(home, ".ssh")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, f := range []string{filepath.Join(root, "x"), filepath.Join(root, "list"), filepath.Join(home, ".ssh", "id_rsa")} {
		require.NoError(t, os.WriteFile(f, []byte("data\n"), 0o600))
	}
	return gateFixture{root: root, home: home}
}

func (f gateFixture) checker(t testing.TB, p *Policy) *Checker {
	t.Helper()
	c, err := NewChecker(p, f.root, f.home)
	require.NoError(t, err)
	return c
}

// trustedDenyRm is the hardest setting for the gate: every command is
// allowed by default and one rule denies rm.
func trustedDenyRm() *Policy {
	p := Trusted.Policy()
	p.CommandRules = []CommandRule{{Pattern: "rm", Action: Deny}}
	return p
}

func decideCmd(t testing.TB, c *Checker, cmd string) *CommandVerdict {
	t.Helper()
	v, err := c.DecideCommand(cmd, "")
	require.NoError(t, err, cmd)
	require.NotNil(t, v, cmd)
	return v
}

// TestCommandGateBypassCorpus evaluates commands that try to run rm past a
// deny rule under ShellDefault allow. Each must never be allowed; its twin,
// the same shape running ls, must be allowed, so that a gate asking for
// everything cannot pass.
func TestCommandGateBypassCorpus(t *testing.T) {
	// Bash-only syntax has no allowed twin: /bin/sh may be dash, which
	// reads it differently, so the gate asks.
	corpus := []struct{ bypass, twin string }{
		{"rm x", "ls x"},
		{"r''m x", "l''s x"},
		{`\rm x`, `\ls x`},
		{`"r"m x`, `"l"s x`},
		{`$'\x72m' x`, `$'\x6cs' x`},
		{`$'\162m' x`, `$'\154s' x`},
		{"{rm,x}", ""},
		{"a=r; b=m; $a$b x", ""},
		{"X=rm; ${X} x", ""},
		{"$(echo rm) x", ""},
		{"`echo rm` x", ""},
		{"r? x", ""},
		{"echo rm x | sh", "echo ls x | cat"},
		{"echo rm x | bash -s", "echo ls x | cat -s"},
		{"sh script.sh", "cat script.sh"},
		{"bash < list", "cat < list"},
		{`eval "rm x"`, `eval "ls x"`},
		{"eval $CMD", ""},
		{"bash -c 'rm x'", "bash -c 'ls x'"},
		{`sh -lc "ls; rm x"`, `sh -lc "ls; ls x"`},
		{"bash -ec 'rm x'", "bash -ec 'ls x'"},
		{"zsh -xc 'rm x'", "zsh -xc 'ls x'"},
		{"dash -c 'rm x'", "dash -c 'ls x'"},
		{"bash -o pipefail -c 'rm x'", "bash -o pipefail -c 'ls x'"},
		{`sh -c "sh -c 'rm x'"`, `sh -c "sh -c 'ls x'"`},
		{"sh <<'EOF'\nrm x\nEOF", "sh <<'EOF'\nls x\nEOF"},
		{"bash <<< 'rm x'", ""},
		{"env rm x", "env ls x"},
		{"env -i rm x", "env -i ls x"},
		{"env -i -u PATH A=1 rm x", "env -i -u PATH A=1 ls x"},
		{"env -S 'rm x'", "env -S 'ls x'"},
		{"command rm x", "command ls x"},
		{"command -p rm x", "command -p ls x"},
		{"builtin eval 'rm x'", "builtin eval 'ls x'"},
		{"exec rm x", "exec ls x"},
		{"exec -a foo rm x", "exec -a foo ls x"},
		{"nohup rm x", "nohup ls x"},
		{"nice -n 5 rm x", "nice -n 5 ls x"},
		{"time rm x", "time ls x"},
		{"time -p rm x", "time -p ls x"},
		{"time -- rm x", "time -- ls x"},
		{"time -p -- rm x", "time -p -- ls x"},
		{"timeout 5 rm x", "timeout 5 ls x"},
		{"timeout -s KILL 5 rm x", "timeout -s KILL 5 ls x"},
		{"stdbuf -oL rm x", "stdbuf -oL ls x"},
		{"setsid -w rm x", "setsid -w ls x"},
		{"ionice -c 3 rm x", "ionice -c 3 ls x"},
		{"xargs rm < list", "xargs echo < list"},
		{"xargs -0 -n1 rm < list", "xargs -0 -n1 echo < list"},
		{"find . -exec rm {} +", "find . -exec ls {} +"},
		{`find . -execdir rm {} \;`, `find . -execdir ls {} \;`},
		{`find . -ok rm x \;`, `find . -ok ls x \;`},
		{"echo $(rm x)", "echo $(ls x)"},
		{"echo `rm x`", "echo `ls x`"},
		{"cat <(rm x)", ""},
		{"cat > >(rm x)", ""},
		{"ls\nrm x", "ls\nls x"},
		{"ls; rm x", "ls; ls x"},
		{"ls & rm x", "ls & ls x"},
		{"true || rm x", "true || ls x"},
		{"true && rm x", "true && ls x"},
		{"ls | rm x", "ls | cat"},
		{"ls |& rm x", ""},
		{"(rm x)", "(ls x)"},
		{"{ rm x; }", "{ ls x; }"},
		{"if true; then rm x; fi", "if true; then ls x; fi"},
		{"while false; do rm x; done", "while false; do ls x; done"},
		{"for i in 1; do rm x; done", "for i in 1; do ls x; done"},
		{"case a in a) rm x;; esac", "case a in a) ls x;; esac"},
		{"f() { rm x; }; f", "f() { ls x; }; f"},
		{"function g { rm x; }; g", ""},
		{"x=$(rm x)", "x=$(ls x)"},
		{"[[ -n $(rm x) ]]", "[[ -n $(ls x) ]]"},
		{"(( $(rm x) ))", ""},
		{"echo ${X:-$(rm x)}", "echo ${X:-$(ls x)}"},
		{"sudo rm x", "sudo ls x"},
		{"sudo -u root rm x", "sudo -u root ls x"},
		{"doas rm x", "doas ls x"},
		{"/bin/rm x", "/bin/ls x"},
		{"/usr/bin/env rm x", "/usr/bin/env ls x"},
		{"A=1 rm x", "A=1 ls x"},
		{"alias ls='rm x'", ""},
		{"trap 'rm x' EXIT", "trap 'ls x' EXIT"},
		{"GIT_SSH_COMMAND='rm x' git fetch", "GIT_SSH_COMMAND='ssh -v' git fetch"},
		{"python -c 'import os'", "python x"},
		{"python3 -c 'import os'", "python3 x"},
		{"node -e 'x'", "node x"},
		{"perl -e 'x'", "perl x"},
		{"ruby -e 'x'", "ruby x"},
		{`awk 'BEGIN{system("rm x")}'`, `awk '{print $1}' x`},
		{"git -c alias.x='!rm x' x", "git status"},
		{"sed -n '1e rm x' x", "sed -n '1p' x"},
		{"source x", "cat x"},
		{"PATH=.:$PATH ls", "LANG=C ls"},
		{"echo 'unterminated", "echo 'terminated'"},
	}
	require.GreaterOrEqual(t, len(corpus), 40)
	fx := newGateFixture(t)
	c := fx.checker(t, trustedDenyRm())
	for _, tt := range corpus {
		t.Run(tt.bypass, func(t *testing.T) {
			v := decideCmd(t, c, tt.bypass)
			assert.NotEqual(t, Allow, v.Decision, "bypass %q was allowed: %+v", tt.bypass, v)
			if tt.twin != "" {
				tv := decideCmd(t, c, tt.twin)
				assert.Equal(t, Allow, tv.Decision, "twin %q: %s (%s)", tt.twin, tv.Rule, tv.Reason)
			}
		})
	}
}

func TestCommandRuleMatching(t *testing.T) {
	fx := newGateFixture(t)
	p := Trusted.Policy()
	p.CommandRules = []CommandRule{
		{Pattern: "git push", Action: Deny},
		{Pattern: "git", Action: Allow},
		{Pattern: "pytest", Action: Allow},
		{Pattern: "make", Action: Ask},
		{Pattern: "make", Action: Deny}, // shadowed: the first match wins
	}
	p.ShellDefault = Ask
	c := fx.checker(t, p)
	tests := []struct {
		cmd  string
		want Decision
		rule string
	}{
		{"git push origin", Deny, `command_rules[0] "git push"`},
		{"git push", Deny, `command_rules[0] "git push"`},
		{"git pushx", Ask, "gate: unreadable code"}, // an alias can be anything
		{"git status", Allow, `command_rules[1] "git"`},
		{"git -C src push", Deny, `command_rules[0] "git push"`},
		{"/usr/bin/git push", Deny, `command_rules[0] "git push"`},
		{"/usr/bin/git --no-pager push", Deny, `command_rules[0] "git push"`},
		{"git commit -m push", Ask, `command_rules[0] "git push"`},
		{"git $X", Ask, `command_rules[0] "git push"`},
		{"git pus?", Ask, `command_rules[0] "git push"`},
		{"git status | xargs git", Ask, `command_rules[0] "git push"`},
		{"pytest -k x", Allow, `command_rules[2] "pytest"`},
		{"./pytest", Ask, "default: shell_default"},
		{"timeout 60 pytest", Allow, `command_rules[2] "pytest"`},
		{"sudo pytest", Ask, "default: shell_default"},
		{"make", Ask, `command_rules[3] "make"`},
		{"git status && make", Ask, `command_rules[3] "make"`},
		{"git status; git push", Deny, `command_rules[0] "git push"`},
		{"ls", Ask, "default: shell_default"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			v := decideCmd(t, c, tt.cmd)
			assert.Equal(t, tt.want, v.Decision, "%s: %s", v.Rule, v.Reason)
			assert.Equal(t, tt.rule, v.Rule)
		})
	}
}

func TestCommandDeciderAndShell(t *testing.T) {
	fx := newGateFixture(t)

	p := Trusted.Policy()
	p.AllowShell = false
	p.ShellDefault = Deny
	v := decideCmd(t, fx.checker(t, p), "ls")
	assert.Equal(t, Deny, v.Decision, "AllowShell=false denies everything")

	p = Trusted.Policy()
	p.CommandRules = []CommandRule{{Pattern: "ls", Action: Deny}}
	var seen []string
	p.CommandDecider = func(seg string) (Decision, bool) {
		seen = append(seen, seg)
		if strings.HasPrefix(seg, "ls") {
			return Allow, true
		}
		return 0, false
	}
	c := fx.checker(t, p)
	v = decideCmd(t, c, "ls x && echo 'a b'")
	assert.Equal(t, Allow, v.Decision, "the decider decides before the rules: %s", v.Reason)
	assert.Equal(t, []string{"ls x", "echo 'a b'"}, seen)
	v = decideCmd(t, c, "$X")
	assert.Equal(t, Ask, v.Decision, "a decider cannot allow a dynamic command")
}

func TestCommandOpaqueNeedsRules(t *testing.T) {
	fx := newGateFixture(t)
	open := fx.checker(t, Trusted.Policy())
	for _, cmd := range []string{"python -c 'print(1)'", "echo ls | sh", "awk 'BEGIN{system(\"ls\")}'"} {
		assert.Equal(t, Allow, decideCmd(t, open, cmd).Decision, "%s: nothing to smuggle past", cmd)
		v := decideCmd(t, fx.checker(t, trustedDenyRm()), cmd)
		assert.Equal(t, Ask, v.Decision, cmd)
		assert.Equal(t, "gate: unreadable code", v.Rule)
		// An ask rule alone is also something to smuggle past.
		askOnly := Trusted.Policy()
		askOnly.CommandRules = []CommandRule{{Pattern: "git push", Action: Ask}}
		v = decideCmd(t, fx.checker(t, askOnly), cmd)
		assert.Equal(t, Ask, v.Decision, "%s under an ask rule", cmd)
		assert.Equal(t, "gate: unreadable code", v.Rule)
	}
	// Dynamic input is never allowed, whatever the rules.
	for _, cmd := range []string{"$X", "eval $X", "sh -c \"$X\"", "if then", "{ls,x}"} {
		assert.Equal(t, Ask, decideCmd(t, open, cmd).Decision, cmd)
	}
}

func TestCommandGitStatusOneSegment(t *testing.T) {
	fx := newGateFixture(t)
	v := decideCmd(t, fx.checker(t, Trusted.Policy()), "git status 2>&1")
	require.Len(t, v.Segments, 1)
	assert.Equal(t, []string{"git", "status"}, v.Segments[0].Words)
	require.Len(t, v.Claims, 1, "only the cwd is claimed")
	assert.Equal(t, "cwd", v.Claims[0].Source)
}

func TestCommandClaims(t *testing.T) {
	fx := newGateFixture(t)
	c := fx.checker(t, Trusted.Policy())
	f := filepath.Join(fx.root, "f")
	for _, cmd := range []string{">f cmd", "cmd >f", "cmd >|f", "cmd &>f", "cmd &>>f", "cmd 2>f", "cmd >>f", "cmd <>f", "exec 3>f", "{ :; }>f"} {
		t.Run(cmd, func(t *testing.T) {
			v := decideCmd(t, c, cmd)
			var got []string
			for _, cl := range v.Claims[1:] {
				got = append(got, cl.Verdict.Op.String()+" "+cl.Verdict.Path)
			}
			assert.Equal(t, []string{"write " + f}, got)
		})
	}
	for _, cmd := range []string{"curl https://example.com/x.tar.gz", "cmd >/dev/null 2>/dev/null", "cat /dev/zero", "git status 2>&1",
		"cat /dev/stdin", "echo x >/dev/stdout", "echo x >/dev/stderr", "echo x >/dev/tty", "head -c 8 /dev/random", "head -c 8 /dev/urandom", "cat /dev/fd/3"} {
		assert.Len(t, decideCmd(t, c, cmd).Claims, 1, "%s claims only the cwd", cmd)
	}
	// rmdir is a writer: its arguments are write claims, even without a
	// slash or dot.
	v := decideCmd(t, c, "rmdir build")
	require.Len(t, v.Claims, 2)
	assert.Equal(t, Write, v.Claims[1].Verdict.Op)
	assert.Equal(t, filepath.Join(fx.root, "build"), v.Claims[1].Verdict.Path)
}

// TestCommandHomeClaims: paths in the home are claims, so reading them is
// an ask in coding mode; the same reads inside the root are allowed.
func TestCommandHomeClaims(t *testing.T) {
	fx := newGateFixture(t)
	p := Coding.Policy()
	p.ShellDefault = Allow // isolate the claims from the shell default
	c := fx.checker(t, p)
	key := filepath.Join(fx.home, ".ssh", "id_rsa")
	tests := []struct {
		cmd, path string
	}{
		{"cat $HOME/.ssh/id_rsa", key},
		{"cat ${HOME}/.ssh/id_rsa", key},
		{"cat ~/.ssh/id_rsa", key},
		{"cat ~/.ssh/*", filepath.Join(fx.home, ".ssh")},
		{"cd ~ && cat .ssh/id_rsa", key},
		{"cd && cat .ssh/id_rsa", key},
		{"true || cd ~; cat .ssh/id_rsa", key},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			v := decideCmd(t, c, tt.cmd)
			assert.Equal(t, Ask, v.Decision, v.Reason)
			var paths []string
			for _, cl := range v.Claims {
				if cl.Verdict.Decision == Ask {
					paths = append(paths, cl.Verdict.Path)
				}
			}
			assert.Contains(t, paths, tt.path)
		})
	}
	for _, cmd := range []string{"cat x", "cd src && cat ../x", "cat ./*"} {
		assert.Equal(t, Allow, decideCmd(t, c, cmd).Decision, "twin %q", cmd)
	}
}

func TestCommandClaimVerdicts(t *testing.T) {
	fx := newGateFixture(t)
	p := Trusted.Policy()
	p.DeniedPaths = []string{".env*"}
	c := fx.checker(t, p)
	require.NoError(t, os.WriteFile(filepath.Join(fx.root, ".env.local"), []byte("SECRET=1\n"), 0o600))
	tests := []struct {
		cmd  string
		want Decision
	}{
		{"cat .env.local", Deny},
		{"cat .e*", Deny},
		{"cd src && cat ../.env.local", Deny},
		{"echo x > .git/hooks/pre-commit", Deny},
		{"cp x ~/.bashrc", Deny},
		{"sed -i s/a/b/ .envrc", Deny},
		{"git config core.hooksPath x", Deny},
		{"rm x", Allow},
		{"echo x > /tmp/outside", Ask},
		{"cat x > y", Allow},
		{"cat $D/x", Ask},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			v := decideCmd(t, c, tt.cmd)
			assert.Equal(t, tt.want, v.Decision, "%s: %s", v.Rule, v.Reason)
		})
	}

	noHome, err := NewChecker(Trusted.Policy(), fx.root, "")
	require.NoError(t, err)
	v := decideCmd(t, noHome, "cat ~/x")
	assert.Equal(t, Ask, v.Decision, "a claim that cannot be resolved is an ask")
	assert.Equal(t, Allow, decideCmd(t, noHome, "cat ./x").Decision)
}

func TestCommandCaps(t *testing.T) {
	fx := newGateFixture(t)
	c := fx.checker(t, Trusted.Policy())
	v := decideCmd(t, c, strings.Repeat("a", MaxCommandLen+1))
	assert.Equal(t, Ask, v.Decision)
	assert.NotEmpty(t, v.Reason, "the cap is explained")
	v = decideCmd(t, c, "echo "+strings.Repeat("$(", MaxCommandDepth+10)+"ls"+strings.Repeat(")", MaxCommandDepth+10))
	assert.Equal(t, Ask, v.Decision)
	assert.NotEmpty(t, v.Reason, "the cap is explained")
	v = decideCmd(t, c, strings.Repeat("eval ", MaxCommandDepth+10)+"ls")
	assert.Equal(t, Ask, v.Decision)
	assert.Contains(t, v.Reason, "eval eval", "the cap names the command that hit it")

	v, err := c.DecideCommand("ls\x00rm", "")
	var ce *CommandError
	require.True(t, errors.As(err, &ce))
	assert.True(t, errors.Is(err, ErrNUL))
	require.NotNil(t, v)
	assert.Equal(t, Deny, v.Decision)
}

func TestCommandVerdictExplains(t *testing.T) {
	fx := newGateFixture(t)
	c := fx.checker(t, trustedDenyRm())
	v, err := c.DecideCommand("ls && rm x", filepath.Join(fx.root, "src"))
	require.NoError(t, err)
	require.Len(t, v.Segments, 2)
	assert.Equal(t, Allow, v.Segments[0].Decision)
	assert.Equal(t, Deny, v.Segments[1].Decision)
	assert.Equal(t, `command_rules[0] "rm"`, v.Segments[1].Rule)
	assert.Equal(t, Deny, v.Decision)
	assert.Equal(t, `command_rules[0] "rm"`, v.Rule)
	require.NotEmpty(t, v.Claims)
	assert.Equal(t, "cwd", v.Claims[0].Source)
	assert.Equal(t, filepath.Join(fx.root, "src"), v.Claims[0].Verdict.Path)
	assert.Equal(t, filepath.Join(fx.root, "src", "x"), v.Claims[1].Verdict.Path, "relative claims resolve against the cwd")
}

var fuzzSeeds = []string{
	"ls", "rm -rf /", "cd src && go test ./... 2>&1 | tee out.log", "r''m x", `$'\x72m' x`, "{rm,x}",
	"a=r; b=m; $a$b x", "echo rm x | sh", "bash -c 'rm x'", "find . -exec rm {} +", "xargs -I{} sh -c '{}'",
	"f() { f; }; f", "cat <<EOF\n$(rm x)\nEOF", "echo 'unterminated", "((", "${", "$((1+", "case x in",
	"sed -n '1e rm x'", "for ((;;)); do cd a; done", "cd ~ && cat .ssh/id_rsa", "x[$(rm x)]=1",
}

func FuzzDecideCommand(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	fx := newGateFixture(f)
	c := fx.checker(f, trustedDenyRm())
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, cmd string) {
		v, err := c.DecideCommand(cmd, "")
		if strings.IndexByte(cmd, 0) >= 0 {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		require.True(t, v.Decision.Valid())
		if _, perr := parser.Parse(strings.NewReader(cmd), ""); perr != nil {
			require.NotEqual(t, Allow, v.Decision, "a parse failure is never allowed: %q", cmd)
		}
	})
}

func BenchmarkDecideCommand(b *testing.B) {
	fx := newGateFixture(b)
	c := fx.checker(b, Coding.Policy())
	const cmd = "cd src && go test ./... 2>&1 | tee out.log"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.DecideCommand(cmd, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecideCommandTree measures the gate's file-system work on a
// tree of 100,000 files (1,000 directories of 100): a glob over one
// directory, a glob over every directory, and a recursive reader of the
// whole tree (every entry judged).
func BenchmarkDecideCommandTree(b *testing.B) {
	fx := newGateFixture(b)
	for d := range 1000 {
		dir := filepath.Join(fx.root, "tree", fmt.Sprintf("d%03d", d))
		require.NoError(b, os.MkdirAll(dir, 0o755))
		for f := range 100 {
			require.NoError(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", f)), nil, 0o644))
		}
	}
	c := fx.checker(b, Trusted.Policy())
	for _, cmd := range []string{"cat tree/d000/*.go", "ls tree/*/f00.go", "grep -r TODO tree"} {
		b.Run(cmd, func(b *testing.B) {
			for b.Loop() {
				v, err := c.DecideCommand(cmd, "")
				if err != nil || v.Decision != Allow {
					b.Fatalf("%v %v", err, v)
				}
			}
		})
	}
}

// TestCommandGitInit: git init of a new repository is a write of the new
// git directory (the executor's guard sanitizes it after the command);
// git init again in an existing one rewrites its protected config and is
// denied, as is writing a hook in the same line.
func TestCommandGitInit(t *testing.T) {
	fx := newGateFixture(t)
	require.NoError(t, os.MkdirAll(filepath.Join(fx.root, "old", ".git"), 0o755))
	require.NoError(t, os.Symlink("/nonexistent", filepath.Join(fx.root, "src", ".git")))
	c := fx.checker(t, Trusted.Policy())
	tests := []struct {
		cmd  string
		want Decision
	}{
		{"git init", Allow},
		{"git init -q new", Allow},
		{"git -C new init", Allow},
		{"cd new && git init", Allow},
		{"git init --bare new.git", Allow},
		{"git init old", Deny},
		{"git -C old init", Deny},
		{"cd old && git init", Deny},
		{"git init src", Ask}, // .git is a link out of the root: not a new repository
		{"git init && echo x > .git/hooks/pre-commit", Deny},
		{"git init .git/hooks/x", Deny},
		{"git init /tmp/elsewhere", Ask},
		{"git init $D", Ask},
		{"git init -b main new", Allow},
		{"git init -qb main new", Allow},
		{"git init -b old", Allow}, // old is the branch: .git here is new
		// Found by an attack review: option values were taken for the
		// directory, and --git-dir, GIT_DIR and templates were not
		// looked at, so these re-initialised old (its config, a
		// template's hooks) as if it were new.
		{"git init -b main old", Deny},
		{"git init --initial-branch main old", Deny},
		{"git init --init main old", Deny},
		{"git init --object-format sha1 old", Deny},
		{"git init --ref-format files old", Deny},
		{"git -C old init -b x", Deny},
		{"cd old && git init -b x", Deny},
		{"git init --template tpl new", Deny},
		{"git init --template=tpl new", Deny},
		{"git init --separate-git-dir sep old", Deny},
		{"git init --separate-git-dir sep new", Deny},
		{"git --git-dir=old/.git init", Deny},
		{"git --git-dir old/.git init", Deny},
		{"GIT_DIR=old/.git git init", Deny},
		{"env GIT_DIR=old/.git git init", Deny},
		{"GIT_WORK_TREE=old git init", Deny},
		{"GIT_TEMPLATE_DIR=tpl git init -b x old", Deny},
		{"git init --bare -b x old/.git", Deny},
		{"git init --bare --template=tpl -b x old/.git/hooks", Deny},
		{"git init -b x old/.git/hooks", Deny},
		{"git init -- old", Deny},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			v := decideCmd(t, c, tt.cmd)
			assert.Equal(t, tt.want, v.Decision, "%s: %s", v.Rule, v.Reason)
		})
	}
	// The root itself a repository: git init there is git init again.
	require.NoError(t, os.Mkdir(filepath.Join(fx.root, ".git"), 0o755))
	v := decideCmd(t, c, "git init")
	assert.Equal(t, Deny, v.Decision, "%s: %s", v.Rule, v.Reason)
	assert.Contains(t, v.Rule, "protect")
}
