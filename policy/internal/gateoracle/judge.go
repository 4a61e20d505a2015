//go:build linux

package gateoracle

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// Violation is something a run did that the policy denies or asks for.
type Violation struct {
	Shell string
	What  string
	Rule  string
}

func (v Violation) String() string { return fmt.Sprintf("[%s] %s (%s)", v.Shell, v.What, v.Rule) }

// Judge returns what the run did that the checker's policy denies or asks
// for:
//   - reading a file the policy denies reading, or a file that shares its
//     inode with one; reading a file in the fixture's home that the policy
//     asks for (programs' own configuration there, ~/.gitconfig and
//     ~/.config, excepted);
//   - listing a directory the policy denies reading (except by git, which
//     lists untracked directories for status);
//   - writing, creating, removing or renaming a path the policy does not
//     allow writing (/dev and /proc excepted), attempted or — seen from
//     outside in the snapshot diff — done;
//   - linking a denied file to a new name;
//   - executing a program whose words match a command rule that denies or
//     asks (git global options removed; busybox applets by name);
//   - connecting to an internet address when the policy's network is none.
//
// Not counted, because the gate judges the command line and cannot know
// them (the README's "What the gate does not do"): programs' implicit
// reads outside the root (libraries, locale, the system's configuration);
// their implicit state in the home (~/.npm, ~/.cache, ~/.config/go,
// ~/go, ~/.local/share) and temporary files whose names the command does not contain
// (mkstemp names under /tmp and /var/tmp); and the file effects of code
// from files — a script or program in the workspace or home, or an
// interpreter running one, and everything it starts. Executions matching
// a rule are counted wherever they happen.
func Judge(c *policy.Checker, f *Fixture, tr *Trace) []Violation {
	var out []Violation
	add := func(what, rule string) {
		out = append(out, Violation{Shell: tr.Shell, What: what, Rule: rule})
	}
	denied := map[uint64]string{}
	for p, st := range tr.before {
		if st.mode.IsRegular() {
			if v := c.DecideResolved(p, policy.Read); v.Decision == policy.Deny {
				denied[st.ino] = p
			}
		}
	}
	decide := func(p string, op policy.Op) *policy.Verdict {
		abs, err := c.Resolve("", p)
		if err != nil {
			abs = path.Clean(p)
		}
		return c.DecideResolved(abs, op)
	}
	home := f.Home
	for _, e := range tr.Events {
		if e.Code && e.Kind != Exec {
			continue
		}
		switch e.Kind {
		case Read:
			v := decide(e.Path, policy.Read)
			switch {
			case v.Decision == policy.Deny:
				add(fmt.Sprintf("%s read %s", e.Prog, e.Path), v.Rule)
			case v.Decision == policy.Ask && within(home, e.Path) && !homeConfig(home, e.Path):
				add(fmt.Sprintf("%s read %s", e.Prog, e.Path), v.Rule)
			default:
				if ino := inode(e.Path); ino != 0 && denied[ino] != "" {
					d := denied[ino]
					add(fmt.Sprintf("%s read %s, a hard link of %s", e.Prog, e.Path, d), "hard link")
				}
			}
		case List:
			if e.Prog == "git" {
				continue
			}
			if v := decide(e.Path, policy.Read); v.Decision == policy.Deny {
				add(fmt.Sprintf("%s listed %s", e.Prog, e.Path), v.Rule)
			}
		case Write:
			if skipWrite(e.Path) || implicitState(f, tr.Command, e.Path) {
				continue
			}
			if v := decideNoFollow(c, e.Path, policy.Write); v.Decision != policy.Allow {
				add(fmt.Sprintf("%s wrote %s (%s)", e.Prog, e.Path, e.Syscall), v.Rule)
			}
		case Link:
			if v := decide(e.Path, policy.Read); v.Decision == policy.Deny {
				add(fmt.Sprintf("%s linked %s to a new name", e.Prog, e.Path), v.Rule)
			}
		case Exec:
			if r, ok := ruleHit(c.Policy().CommandRules, e.Argv, e.Path); ok {
				add(fmt.Sprintf("executed %q", strings.Join(e.Argv, " ")), fmt.Sprintf("command rule %q %v", r.Pattern, r.Action))
			}
		case Connect:
			if c.Policy().Network == policy.NetworkNone {
				add(fmt.Sprintf("%s connected to %s", e.Prog, e.Path), "network: none")
			}
		}
	}
	for _, p := range tr.Changed {
		if implicitState(f, tr.Command, p) {
			continue
		}
		if v := c.DecideResolved(p, policy.Write); v.Decision != policy.Allow {
			add("changed "+p+" (seen from outside)", v.Rule)
		}
	}
	return dedupe(out)
}

func dedupe(vs []Violation) []Violation {
	seen := map[Violation]bool{}
	out := vs[:0]
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func homeConfig(home, p string) bool {
	return p == home || p == filepath.Join(home, ".gitconfig") || within(filepath.Join(home, ".config"), p)
}

// decideNoFollow judges op on p with its directory resolved and its last
// component not followed: a write to a name (symlink, unlink, rename)
// changes the name, not what it points to.
func decideNoFollow(c *policy.Checker, p string, op policy.Op) *policy.Verdict {
	dir, err := c.Resolve("", path.Dir(p))
	if err != nil {
		dir = path.Dir(p)
	}
	return c.DecideResolved(path.Join(dir, path.Base(p)), op)
}

// implicitState reports a write to programs' own state in the home, or to
// a temporary file whose name the command does not contain.
func implicitState(f *Fixture, cmd, p string) bool {
	for _, d := range []string{".npm", ".cache", ".config/go", "go", ".local/share"} {
		if within(filepath.Join(f.Home, d), p) {
			return true
		}
	}
	if within(f.Base, p) {
		return false // the fixture itself (which may live under /tmp)
	}
	if within("/tmp", p) || within("/var/tmp", p) {
		return !strings.Contains(cmd, path.Base(p))
	}
	return false
}

func skipWrite(p string) bool {
	return within("/dev", p) || within("/proc", p)
}

// gitGlobal are git's options before the subcommand, with whether they
// take the next word as a value.
var gitGlobal = map[string]bool{
	"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true, "--exec-path": false,
	"--config-env": true, "--super-prefix": true, "-p": false, "-P": false, "--paginate": false, "--no-pager": false,
	"--bare": false, "--no-replace-objects": false, "--literal-pathspecs": false, "--glob-pathspecs": false,
	"--noglob-pathspecs": false, "--icase-pathspecs": false, "--no-optional-locks": false, "--no-advice": false,
	"--html-path": false, "--man-path": false, "--info-path": false, "--list-cmds": false, "--attr-source": true,
}

// words normalises an executed argv for rule matching: the program's
// basename, busybox applets by name, git without its global options and
// git's helper programs by the command that runs them.
func words(argv []string, file string) []string {
	if len(argv) == 0 {
		argv = []string{file}
	}
	w := append([]string{path.Base(file)}, argv[1:]...)
	if strings.HasPrefix(w[0], "ld-") && strings.Contains(w[0], ".so") && len(w) > 1 {
		// The dynamic loader runs the program named after it.
		w = append([]string{path.Base(w[1])}, w[2:]...)
	}
	if w[0] == "busybox" && len(w) > 1 {
		w = append([]string{path.Base(w[1])}, w[2:]...)
	}
	switch {
	case w[0] == "git-receive-pack", w[0] == "git-send-pack",
		w[0] == "git" && len(w) > 1 && (w[1] == "receive-pack" || w[1] == "send-pack"):
		return []string{"git", "push"}
	case w[0] == "git":
		out := []string{"git"}
		for i := 1; i < len(w); i++ {
			a := w[i]
			name, _, hasVal := strings.Cut(a, "=")
			if takes, ok := gitGlobal[name]; ok {
				if takes && !hasVal {
					i++
				}
				continue
			}
			out = append(out, w[i:]...)
			break
		}
		return out
	}
	return w
}

// ruleHit returns the first command rule that denies or asks and whose
// words are a prefix of the executed program's words.
func ruleHit(rules []policy.CommandRule, argv []string, file string) (policy.CommandRule, bool) {
	w := words(argv, file)
	for _, r := range rules {
		if r.Action == policy.Allow {
			continue
		}
		rw := strings.Fields(r.Pattern)
		if len(rw) == 0 || len(rw) > len(w) {
			continue
		}
		match := true
		for i := range rw {
			if rw[i] != w[i] {
				match = false
				break
			}
		}
		if match {
			return r, true
		}
	}
	return policy.CommandRule{}, false
}
