//go:build linux

package gateoracle

import "strings"

// Generate turns fuzz input into a command from a grammar of the
// constructs that have bypassed command gates: programs the policies allow
// and deny, wrappers, operands that name secrets in other ways (links,
// globs, variables, substitutions, /proc paths), quoting, redirections,
// assignments and compound commands. Every input yields a command.
func Generate(data []byte) string {
	g := &gen{data: data}
	return g.list(0)
}

type gen struct {
	data []byte
	i    int
}

func (g *gen) pick(n int) int {
	if g.i >= len(g.data) || n <= 1 {
		return 0
	}
	b := int(g.data[g.i])
	g.i++
	return b % n
}

func (g *gen) one(xs ...string) string { return xs[g.pick(len(xs))] }

var (
	genPrograms = []string{"cat", "ls", "head -c 20", "grep -r SECRET", "grep x", "wc -c", "sort", "tail -n 1",
		"rm", "rm -rf", "git status", "git push -q origin main:x", "git log -1", "git add", "find", "sed -n p",
		"awk 1", "echo", "printf %s", "tee", "cp", "mv", "touch", "sort -o", "tar cf /tmp/t.tar", "diff",
		"stat", "file", "readlink -f", "curl -s", "dd status=none if=", "ln", "mkdir -p", "xargs cat", "du -a"}
	genOperands = []string{".env", "envlink", "envhard", "secrets/api.key", "secrets", "a.txt", "src", "src/main.go",
		"~/.ssh/id_rsa", "~/.aws/credentials", "$HOME/.ssh/id_rsa", "*", ".e*", "s*/*", "[s]ecrets/db.txt", "?env",
		"$F", "\"$F\"", "$(cat list)", "`cat names.txt`", "/proc/self/cwd/.env", "/dev/fd/../cwd/.env",
		".git/hooks/pre-commit", ".git/config", "/tmp/x", "~/.bashrc", "sub", ".", "..", "/etc/shadow",
		"./x://../.env", "src/../.env", "'.env'", "\".e\"nv", ".\\env", "$'.env'", "{.env,a.txt}", "~+/.env"}
	genWrappers = []string{"", "", "", "env ", "command ", "nice ", "timeout 5 ", "nohup ", "exec ", "sh -c ",
		"bash -c ", "eval ", "busybox ", "xargs ", "F=.env ", "IFS=/ ", "PATH=. ", "time ", "builtin "}
	genRedirs = []string{"", "", "", " > /tmp/o", " > src/o", " >> .git/config", " < .env", " < a.txt",
		" 2>&1", " > .git/hooks/x", " &> sub/o", " >| sub/o"}
)

func (g *gen) simple(depth int) string {
	prog := g.one(genPrograms...)
	var args []string
	for n := g.pick(3) + 1; n > 0; n-- {
		args = append(args, g.one(genOperands...))
	}
	cmd := prog + " " + strings.Join(args, " ")
	if w := g.one(genWrappers...); w != "" {
		if strings.HasSuffix(w, "-c ") || w == "eval " {
			cmd = w + "'" + strings.ReplaceAll(cmd, "'", `'\''`) + "'"
		} else {
			cmd = w + cmd
		}
	}
	return cmd + g.one(genRedirs...)
}

func (g *gen) list(depth int) string {
	if depth > 3 {
		return g.simple(depth)
	}
	switch g.pick(10) {
	case 0:
		return g.simple(depth) + "; " + g.list(depth+1)
	case 1:
		return g.simple(depth) + " && " + g.list(depth+1)
	case 2:
		return g.simple(depth) + " | " + g.list(depth+1)
	case 3:
		return "echo $(" + g.list(depth+1) + ")"
	case 4:
		return "{ " + g.list(depth+1) + "; }"
	case 5:
		return "(" + g.list(depth+1) + ")"
	case 6:
		return "for F in " + g.one(genOperands...) + "; do " + g.list(depth+1) + "; done"
	case 7:
		return "cd " + g.one("src", "secrets", "~/.ssh", "..", "sub", "/tmp") + " && " + g.list(depth+1)
	case 8:
		return "F=" + g.one(genOperands...) + "; " + g.list(depth+1)
	default:
		return g.simple(depth)
	}
}
