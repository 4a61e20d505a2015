package shellscan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const home = "/home/u"

// segWords returns each segment's real-command words joined by spaces,
// "DYN" for dynamic segments and a "!" suffix for opaque ones.
func segWords(r *Result) []string {
	var out []string
	for _, s := range r.Segments {
		txt := "DYN"
		if s.Dynamic == "" {
			var ws []string
			for _, w := range s.Words() {
				ws = append(ws, w.Value)
			}
			txt = strings.Join(ws, " ")
		}
		if s.Opaque != "" {
			txt += "!"
		}
		out = append(out, txt)
	}
	return out
}

func TestShellscanSegments(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"ls -la", []string{"ls -la"}},
		{"r''m x", []string{"rm x"}},
		{`\rm x`, []string{"rm x"}},
		{`"r"m x`, []string{"rm x"}},
		{`$'\x72m' x`, []string{"rm x", "$\\x72m x"}},
		{`$'\162m' x`, []string{"rm x", "$\\162m x"}},
		{"{rm,x}", []string{"DYN"}},
		{"a=r; b=m; $a$b x", []string{"DYN"}},
		{"X=rm; ${X} x", []string{"DYN"}},
		{"$(echo rm) x", []string{"echo rm", "DYN"}},
		{"r? x", []string{"DYN"}},
		{"ls; rm x", []string{"ls", "rm x"}},
		{"ls\nrm x", []string{"ls", "rm x"}},
		{"ls && rm x || true", []string{"ls", "rm x", "true"}},
		{"ls | rm x |& cat", []string{"DYN", "ls", "rm x", "cat"}},
		{"ls & rm x", []string{"ls", "rm x"}},
		{"(rm x)", []string{"rm x"}},
		{"{ rm x; }", []string{"rm x"}},
		{"if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
		{"while a; do b; done; until c; do d; done", []string{"a", "b", "c", "d"}},
		{"for i in 1 2; do rm $i; done", []string{"rm $i"}},
		{"for ((i=$(rm x); i<2; i++)); do :; done", []string{"DYN", "DYN", "rm x", ":"}},
		{"case $x in a) rm x;; *) ls;; esac", []string{"rm x", "ls"}},
		{"f() { rm x; }; f", []string{"rm x", "f"}},
		{"function g { rm x; }", []string{"DYN", "rm x"}},
		{"echo $(rm x)", []string{"rm x", "echo $(rm x)"}},
		{"echo `rm x`", []string{"rm x", "echo `rm x`"}},
		{"cat <(rm x) >(ls)", []string{"DYN", "rm x", "ls", "cat <(rm x) >(ls)"}},
		{"x=$(rm x)", []string{"rm x"}},
		{"export X=$(rm x)", []string{"rm x", "export X=$(rm x)"}},
		{"declare -x A=$(rm x) B", []string{"rm x", "declare -x A=$(rm x) B", "declare -x A=$(rm x) B"}},
		{"echo ${X:-$(rm x)}", []string{"rm x", "echo ${X:-$(rm x)}"}},
		{"[[ -f $(rm x) ]]", []string{"rm x", "rm x", "[[ -f $(rm x) ]]"}},
		{"(( $(rm x) + 1 ))", []string{"DYN", "rm x", "rm x", "DYN"}},
		{"let 'a[$(rm x)]'", []string{"DYN", "let a[$(rm x)]"}},
		{"cat <<EOF\n$(rm x)\nEOF", []string{"rm x", "cat"}},
		{"cat <<< $(rm x)", []string{"DYN", "rm x", "cat"}},
		{"ls > $(rm x)", []string{"rm x", "ls"}},
		{"time rm x", []string{"rm x"}},
		{"! rm x", []string{"rm x"}},
		{"coproc rm x", []string{"rm x", "coproc rm x"}},
		{"A=1 B=2 rm x", []string{"rm x"}},
		// Recursive parses.
		{"eval 'rm x'", []string{"eval rm x", "rm x"}},
		{"eval $X", []string{"DYN"}},
		{"bash -c 'rm x'", []string{"bash -c rm x", "rm x"}},
		{`sh -lc "ls; rm x"`, []string{"sh -lc ls; rm x", "ls", "rm x"}},
		{"bash -e -x -c 'rm x'", []string{"bash -e -x -c rm x", "rm x"}},
		{"bash -o pipefail -ec 'rm x'", []string{"bash -o pipefail -ec rm x", "rm x"}},
		{"zsh -xc 'rm x'", []string{"zsh -xc rm x", "rm x"}},
		{"sh -c \"$X\"", []string{"DYN"}},
		{"sh -c 'sh -c \"rm x\"'", []string{`sh -c sh -c "rm x"`, `sh -c rm x`, "rm x"}},
		{"sh <<'EOF'\nrm x\nEOF", []string{"sh", "rm x"}},
		{"bash <<< 'rm x'", []string{"DYN", "bash", "rm x"}},
		{"alias ls='rm x'", []string{"DYN", "alias ls=rm x", "rm x"}},
		{"trap 'rm x' EXIT", []string{"trap rm x EXIT", "rm x"}},
		{"GIT_SSH_COMMAND='rm x' git fetch", []string{"rm x", "git fetch"}},
		{"PS4='$(rm x)' bash -xc true", []string{"rm x", "bash -xc true", "true"}},
		{"bash -c 'rm x' &", []string{"bash -c rm x", "rm x"}},
		// Wrappers.
		{"env rm x", []string{"rm x"}},
		{"env -i -u HOME A=1 rm x", []string{"rm x"}},
		{"env -S 'rm x'", []string{"rm x"}},
		{"command rm x", []string{"rm x"}},
		{"command -v rm", []string{"command -v rm"}},
		{"builtin eval 'rm x'", []string{"eval rm x", "rm x"}},
		{"exec -a foo rm x", []string{"rm x"}},
		{"nohup rm x", []string{"rm x"}},
		{"nice -n 5 rm x", []string{"rm x"}},
		{"nice -5 rm x", []string{"rm x"}},
		{"timeout 5 rm x", []string{"rm x"}},
		{"timeout -s KILL --kill-after=2 5 rm x", []string{"rm x"}},
		{"stdbuf -oL -e0 rm x", []string{"rm x"}},
		{"setsid -w rm x", []string{"rm x"}},
		{"ionice -c 3 rm x", []string{"rm x"}},
		{"xargs -0 -n 1 rm", []string{"rm"}},
		{"xargs", []string{"echo"}},
		{"sudo -u root rm x", []string{"rm x"}},
		{"doas rm x", []string{"rm x"}},
		{"sudo env nohup timeout 1 nice rm x", []string{"rm x"}},
		{"timeout --bogus 5 rm x", []string{"rm x!"}},
		// Opaque code.
		{"echo rm x | sh", []string{"echo rm x", "sh!"}},
		{"sh script.sh", []string{"sh script.sh!"}},
		{"bash < f", []string{"bash!"}},
		{"python -c 'import os'", []string{"python -c import os!"}},
		{"python3 -c 'import os'", []string{"python3 -c import os!"}},
		{"python3.12 -Bc 'x'", []string{"python3.12 -Bc x!"}},
		{"python script.py", []string{"python script.py"}},
		{"python -m pytest", []string{"python -m pytest"}},
		{"node -e 'x'", []string{"node -e x!"}},
		{"perl -ne 'print' f", []string{"perl -ne print f!"}},
		{"ruby -e 'x'", []string{"ruby -e x!"}},
		{"awk '{print $1}' f", []string{"awk {print $1} f"}},
		{`awk 'BEGIN{system("rm x")}'`, []string{`awk BEGIN{system("rm x")}!`}},
		{"git -c alias.x='!rm x' x", []string{"git x!"}},
		{"git status", []string{"git status"}},
		{"sed -n '1e rm x' f", []string{"sed -n 1e rm x f!"}},
		{"sed 's/a/b/' f", []string{"sed s/a/b/ f"}},
		{"sed 's/a/b/e' f", []string{"sed s/a/b/e f!"}},
		{"source ./x.sh", []string{"source ./x.sh!"}},
		{"PATH=.:$PATH ls", []string{"ls!"}},
		{"LD_PRELOAD=./x.so ls", []string{"ls!"}},
		{"find . -exec rm {} +", []string{"find . -exec rm {} +", "rm {}"}},
		{"find . -execdir $X \\;", []string{"find . -execdir $X ;", "DYN"}},
		{"find . -name '*.go' -ok sh -c 'rm x' \\;", []string{"find . -name *.go -ok sh -c rm x ;", "sh -c rm x", "rm x"}},
		{"xargs -I{} sh -c '{}'", []string{"DYN"}},
		// Errors and caps.
		{"echo 'unterminated", []string{"DYN"}},
		{"if then fi", []string{"DYN"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := Scan(tt.cmd, Options{Home: home})
			assert.Equal(t, tt.want, segWords(r))
		})
	}
}

func TestShellscanForms(t *testing.T) {
	r := Scan("sudo /usr/bin/env rm x", Options{})
	require.Len(t, r.Segments, 1)
	var got []string
	for _, f := range r.Segments[0].Forms {
		var ws []string
		for _, w := range f.Words {
			ws = append(ws, w.Value)
		}
		s := strings.Join(ws, " ")
		if f.Wrapper {
			s = "(" + s + ")"
		}
		got = append(got, s)
	}
	// sudo is judged in full; a path-named wrapper too, and by basename.
	assert.Equal(t, []string{"sudo /usr/bin/env rm x", "/usr/bin/env rm x", "env rm x", "rm x"}, got)

	r = Scan("git -C sub --no-pager push origin", Options{})
	require.Len(t, r.Segments, 1)
	forms := r.Segments[0].Forms
	require.Len(t, forms, 2)
	assert.Equal(t, "push", forms[1].Words[1].Value, "git without global options")

	r = Scan("echo push | xargs git", Options{})
	require.Len(t, r.Segments, 2)
	f := r.Segments[1].Forms
	assert.True(t, f[len(f)-1].OpenTail, "xargs appends words at run time")

	r = Scan("git pus[h]", Options{})
	require.Len(t, r.Segments, 1)
	assert.Equal(t, Glob, r.Segments[0].Words()[1].Kind)
}

// claim is a claim projected for comparison.
type claim struct {
	Op   Op
	Path string
	Dir  string
	Src  string
}

// claims returns the claims other than candidates (see
// TestShellscanCandidates).
func claims(r *Result) []claim {
	var out []claim
	for _, c := range r.Claims {
		if c.Candidate || c.Source == "glob" {
			continue
		}
		p := c.Path
		if c.Unresolved != "" {
			p = "?" + c.Arg
		}
		out = append(out, claim{c.Op, p, c.Dir, c.Source})
	}
	return out
}

// TestShellscanCandidates checks the operands that do not look like paths:
// each literal is a candidate (judged when such a file exists), a word
// only known at run time is an unresolved operand, and the programs that
// never open operands claim neither.
func TestShellscanCandidates(t *testing.T) {
	tests := []struct {
		cmd        string
		candidates []string
		operands   []string
	}{
		{"cat envlink", []string{"envlink"}, nil},
		{"git status", []string{"status"}, nil},
		{"curl https://example.com/a.json", []string{"https:/example.com/a.json"}, nil},
		{"cat http://x/../../.env", []string{".env"}, nil},
		{"F=.env; cat $F", nil, []string{"$F"}},
		{"cat $(cat list)", []string{"list"}, []string{"$(cat list)"}},
		{"echo $F plain; printf %s $F; test -f $F", nil, nil},
		{"[ -n \"$x\" ]", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			var cands, ops []string
			for _, c := range Scan(tt.cmd, Options{Home: home}).Claims {
				switch {
				case c.Candidate:
					cands = append(cands, c.Path)
				case c.Operand:
					ops = append(ops, c.Arg)
					assert.NotEmpty(t, c.Unresolved)
				}
			}
			assert.Equal(t, tt.candidates, cands)
			assert.Equal(t, tt.operands, ops)
		})
	}
}

// TestShellscanGlobListing checks that every glob, whatever the program,
// claims the directories the shell lists to expand it.
func TestShellscanGlobListing(t *testing.T) {
	for _, cmd := range []string{"echo s*/*", "dd x=1 s*/*", "printf %s s*/*", "for f in s*/*; do :; done"} {
		found := false
		for _, c := range Scan(cmd, Options{Home: home}).Claims {
			if c.Glob == "s*/*" && c.Op == Read {
				found = true
			}
		}
		assert.True(t, found, "%s: no glob claim", cmd)
	}
}

func TestShellscanClaims(t *testing.T) {
	const (
		R = Read
		W = Write
	)
	tests := []struct {
		cmd  string
		want []claim
	}{
		// Redirects.
		{">f cmd", []claim{{W, "f", "", "redirect"}}},
		{"cmd >|f", []claim{{W, "f", "", "redirect"}}},
		{"cmd &>f", []claim{{W, "f", "", "redirect"}}},
		{"cmd &>>f", []claim{{W, "f", "", "redirect"}}},
		{"cmd 2>f", []claim{{W, "f", "", "redirect"}}},
		{"cmd >>f", []claim{{W, "f", "", "redirect"}}},
		{"cmd <>f", []claim{{W, "f", "", "redirect"}}},
		{"exec 3>f", []claim{{W, "f", "", "redirect"}}},
		{"{ :; }>f", []claim{{W, "f", "", "redirect"}}},
		{"cmd >&f", []claim{{W, "f", "", "redirect"}}},
		{"cmd <f", []claim{{R, "f", "", "redirect"}}},
		{"cmd 0<f", []claim{{R, "f", "", "redirect"}}},
		{"git status 2>&1", nil},
		{"cmd >&2 2>&- <&0", nil},
		{"cat <<EOF\nhello/x\nEOF", nil},
		{"cat <<< a/b.txt", nil},
		{"cmd >/dev/null 2>/dev/stderr </dev/zero", nil},
		{"cmd > $F", []claim{{W, "?$F", "", "redirect"}}},
		// Arguments.
		{"cat a/b", []claim{{R, "a/b", "", "argument"}}},
		{"cat f.txt plain", []claim{{R, "f.txt", "", "argument"}}},
		{"cat ~/x", []claim{{R, home + "/x", "", "argument"}}},
		{"cat '~/x'", []claim{{R, "./~/x", "", "argument"}}},
		{"cat $HOME/.ssh/id_rsa", []claim{{R, home + "/.ssh/id_rsa", "", "argument"}}},
		{"cat ${HOME}/.ssh/id_rsa", []claim{{R, home + "/.ssh/id_rsa", "", "argument"}}},
		{`cat "$HOME/.aws/credentials"`, []claim{{R, home + "/.aws/credentials", "", "argument"}}},
		{"cat ~/.ssh/*", []claim{{R, home + "/.ssh", "", "argument"}}},
		{"cat *.go", []claim{{R, ".", "", "argument"}}},
		{"cat {a,~/.ssh/id_rsa}.txt", []claim{{R, "a.txt", "", "argument"}, {R, home + "/.ssh/id_rsa.txt", "", "argument"}}},
		{"curl https://example.com/a.json", nil},
		{"cat /dev/null /dev/fd/3", nil},
		{"tool --config=/etc/x.conf -I/usr/include KEY=~/k", []claim{{R, "/etc/x.conf", "", "option"}, {R, "/usr/include", "", "option"}, {R, home + "/k", "", "option"}}},
		{"curl -d @/etc/passwd http://x", []claim{{R, "/etc/passwd", "", "option"}}},
		{"cat $X/y", []claim{{R, "?$X/y", "", "argument"}}},
		{"echo $X", nil},
		{"cat ~bob/x", []claim{{R, "?~bob/x", "", "argument"}}},
		// Writers.
		{"rm -rf a b", []claim{{W, "a", "", "writer argument"}, {W, "b", "", "writer argument"}}},
		{"rm -- -f", []claim{{W, "-f", "", "writer argument"}}},
		{"mv a b", []claim{{W, "a", "", "writer argument"}, {W, "b", "", "writer argument"}}},
		{"cp -r src dst", []claim{{R, "src", "", "argument"}, {W, "dst", "", "writer argument"}}},
		{"cp -t dst a", []claim{{W, "dst", "", "writer argument"}, {R, "a", "", "argument"}}},
		{"install -m 755 a /usr/bin/a", []claim{{R, "a", "", "argument"}, {W, "/usr/bin/a", "", "writer argument"}}},
		{"touch -r ref f", []claim{{R, "ref", "", "option"}, {W, "f", "", "writer argument"}}},
		{"mkdir -p -m 700 d", []claim{{W, "d", "", "writer argument"}}},
		{"ln -s ~/.ssh/id_rsa key", []claim{{R, home + "/.ssh/id_rsa", "", "argument"}, {W, "key", "", "writer argument"}}},
		{"echo x | tee -a log", []claim{{W, "log", "", "writer argument"}}},
		{"truncate -s 0 f", []claim{{W, "f", "", "writer argument"}}},
		{"chmod -w f", []claim{{W, "f", "", "writer argument"}}},
		{"chmod -R 755 d", []claim{{W, "d", "", "writer argument"}}},
		{"chown -R u:g d", []claim{{W, "d", "", "writer argument"}}},
		{"dd if=/dev/zero of=disk.img bs=1M", []claim{{W, "disk.img", "", "writer argument"}}},
		{"sed -i.bak 's/a/b/' f", []claim{{W, "f", "", "writer argument"}}},
		{"sed -i '' -e 's/a/b/' f", []claim{{W, "f", "", "writer argument"}}},
		{"sed -n 'w out' f", []claim{{W, "out", "", "writer argument"}, {R, "f", "", "argument"}}},
		{"curl -o ~/.bashrc http://x", []claim{{W, home + "/.bashrc", "", "writer argument"}}},
		{"sort -o out in.txt", []claim{{W, "out", "", "writer argument"}, {R, "in.txt", "", "argument"}}},
		{"go build -o bin/app ./cmd", []claim{{W, "bin/app", "", "writer argument"}, {R, "./cmd", "", "argument"}}},
		{"tar -xzf a.tgz -C out", []claim{{R, "a.tgz", "", "argument"}, {W, "out", "", "writer argument"}}},
		{"git config core.hooksPath x", []claim{{W, ".git/config", "", "writer argument"}, {R, "core.hooksPath", "", "argument"}}},
		{"find . -delete", []claim{{W, ".", "", "writer argument"}}},
		{"find /etc -name '*.conf'", []claim{{R, "/etc", "", "argument"}}},
		{"find . -exec rm {} \\;", []claim{{W, ".", "", "writer argument"}, {R, ".", "", "argument"}}},
		{"python ./x.py", []claim{{R, "./x.py", "", "script"}}},
		{"./run.sh", []claim{{R, "./run.sh", "", "command"}}},
		{"env -C /tmp cat a.txt", []claim{{R, "/tmp", "", "cd"}, {R, "a.txt", "/tmp", "argument"}}},
		{"env -C /tmp sh -c 'cat a.txt'", []claim{{R, "/tmp", "", "cd"}, {R, "a.txt", "/tmp", "argument"}}},
		{"declare -x A=$(cat a.txt)", []claim{{R, "a.txt", "", "argument"}}},
		// Directories.
		{"cd ~ && cat .ssh/id_rsa", []claim{{R, home, "", "cd"}, {R, ".ssh/id_rsa", home, "argument"}}},
		{"cd && cat .ssh/id_rsa", []claim{{R, ".ssh/id_rsa", home, "argument"}}},
		{"cd src && go test ./... 2>&1 | tee out.log", []claim{{R, "src", "", "cd"}, {R, "./...", "src", "argument"}, {W, "out.log", "src", "writer argument"}}},
		{"cd a; cd b; cat x.txt", []claim{{R, "a", "", "cd"}, {R, "b", "a", "cd"}, {R, "x.txt", "a/b", "argument"}}},
		{"(cd /tmp); cat x.txt", []claim{{R, "/tmp", "", "cd"}, {R, "x.txt", "", "argument"}}},
		{"cd /tmp | cat x.txt", []claim{{R, "/tmp", "", "cd"}, {R, "x.txt", "", "argument"}}},
		{"true || cd /tmp; cat x.txt", []claim{{R, "/tmp", "", "cd"}, {R, "x.txt", "", "argument"}, {R, "x.txt", "/tmp", "argument"}}},
		{"if a; then cd /a; else cd /b; fi; cat x.txt", []claim{{R, "/a", "", "cd"}, {R, "/b", "", "cd"}, {R, "x.txt", "/b", "argument"}, {R, "x.txt", "/a", "argument"}}},
		{"f() { cd ~; }; f; cat .ssh/id_rsa", []claim{{R, home, "", "cd"}, {R, ".ssh/id_rsa", home, "argument"}}},
		{"cd $D && cat x.txt", []claim{{R, "?$D", "", "cd"}, {R, "?x.txt", "", "argument"}}},
		{"cd - && cat x.txt", []claim{{R, "?x.txt", "", "argument"}}},
		{"cd ~ && cd - && cat /etc/x.conf", []claim{{R, home, "", "cd"}, {R, "/etc/x.conf", "", "argument"}}},
		{"CDPATH=~ cd .ssh; cat id.pub", []claim{{R, ".ssh", "", "cd"}, {R, "?id.pub", "", "argument"}}},
		{"HOME=/etc; cat ~/shadow", []claim{{R, "?~/shadow", "", "argument"}}},
		{"for f in ~/.ssh/*; do cat $f; done", []claim{{R, home + "/.ssh", "", "argument"}}},
		{"for f in a b; do rm \"$f\"; done", []claim{{W, "a", "", "writer argument"}, {W, "b", "", "writer argument"}}},
		{"for f in $X; do cat $f; done", []claim{{R, "?$f", "", "argument"}}},
		{"while true; do cd sub; done; cat x.txt", []claim{{R, "sub", "", "cd"}, {R, "sub", "sub", "cd"}, {R, "sub", "sub/sub", "cd"}, {R, "?x.txt", "", "argument"}}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := Scan(tt.cmd, Options{Home: home})
			assert.Equal(t, tt.want, claims(r))
		})
	}
}

func TestShellscanNoHome(t *testing.T) {
	r := Scan("cat ~/.ssh/id_rsa $HOME/x", Options{})
	require.Len(t, r.Claims, 2)
	for _, c := range r.Claims {
		assert.NotEmpty(t, c.Unresolved, "%s must be unresolved without a home", c.Arg)
	}
}

func TestShellscanCaps(t *testing.T) {
	long := strings.Repeat("a", DefaultMaxLen+1)
	r := Scan(long, Options{})
	require.Len(t, r.Segments, 1)
	assert.NotEmpty(t, r.Segments[0].Dynamic)

	deep := strings.Repeat("(", 100) + "rm x" + strings.Repeat(")", 100)
	r = Scan(deep, Options{})
	require.NotEmpty(t, r.Segments)
	assert.NotEmpty(t, r.Segments[0].Dynamic, "nesting beyond the cap is dynamic")

	r = Scan(strings.Repeat("eval ", 80)+"rm x", Options{})
	dyn := false
	for _, s := range r.Segments {
		dyn = dyn || s.Dynamic != ""
	}
	assert.True(t, dyn, "recursion beyond the cap is dynamic")

	r = Scan("rm\x00x", Options{})
	require.Len(t, r.Segments, 1)
	assert.NotEmpty(t, r.Segments[0].Dynamic)

	// Exponential function re-walks stay bounded.
	var sb strings.Builder
	sb.WriteString("f0() { :; }\n")
	for i := 1; i < 40; i++ {
		sb.WriteString("f" + itoa(i) + "() { f" + itoa(i-1) + "; f" + itoa(i-1) + "; }\n")
	}
	sb.WriteString("f39\n")
	r = Scan(sb.String(), Options{})
	assert.NotEmpty(t, r.Segments)
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+i/10)) + string(rune('0'+i%10)))
}

func TestShellscanANSIC(t *testing.T) {
	tests := map[string]string{
		`\x72m`:      "rm",
		`\162m`:      "rm",
		`\u0072m`:    "rm",
		`r\cAm`:      "r\x01m",
		`a\nb`:       "a\nb",
		`a\x00b`:     "a",
		`\q`:         `\q`,
		`it\'s`:      "it's",
		`\U0001F600`: "😀",
	}
	for in, want := range tests {
		assert.Equal(t, want, decodeANSIC(in), in)
	}
}

func TestShellscanSed(t *testing.T) {
	tests := []struct {
		script        string
		execs, ok     bool
		writes, reads []string
	}{
		{"s/a/b/g", false, true, nil, nil},
		{"s|a/b|c|", false, true, nil, nil},
		{"1,/x/d; $p", false, true, nil, nil},
		{"/start/,/end/{s/a/b/;p}", false, true, nil, nil},
		{"1e rm x", true, true, nil, nil},
		{"s/a/b/e", true, true, nil, nil},
		{"s/a/b/w out.txt", false, true, []string{"out.txt"}, nil},
		{"w out", false, true, []string{"out"}, nil},
		{"r in\np", false, true, nil, []string{"in"}},
		{"y/abc/xyz/", false, true, nil, nil},
		{"a hello", false, true, nil, nil},
		{":a;N;$!ba;s/\\n/ /g", false, true, nil, nil},
		{"s/a", false, false, nil, nil},
		{"k", false, false, nil, nil},
	}
	for _, tt := range tests {
		execs, writes, reads, ok := scanSed(tt.script)
		assert.Equal(t, tt.ok, ok, tt.script)
		if ok {
			assert.Equal(t, tt.execs, execs, tt.script)
			assert.Equal(t, tt.writes, writes, tt.script)
			assert.Equal(t, tt.reads, reads, tt.script)
		}
	}
}

func BenchmarkShellscan(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Scan("cd src && go test ./... 2>&1 | tee out.log", Options{Home: home})
	}
}

func FuzzShellscan(f *testing.F) {
	for _, s := range []string{"ls", "cd a && cat b > c", "r''m x", "{a,b}{c,d}", "sh -c 'eval \"rm x\"'",
		"find . -exec sh -c 'x' \\;", "sed -n '1e x' f", "f() { f; }; f", "$'\\x72m'", "cat <<E\n$(x)\nE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		r := Scan(src, Options{Home: home})
		for _, s := range r.Segments {
			if len(s.Forms) == 0 {
				require.NotEmpty(t, s.Dynamic, "a segment without forms must say why")
			}
		}
		for _, c := range r.Claims {
			require.True(t, c.Op == Read || c.Op == Write)
		}
	})
}
