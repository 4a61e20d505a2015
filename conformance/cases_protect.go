//go:build unix

package conformance

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

func protectCases() []*caseDef {
	iso := func(id, title string, ctl executor.Control, expected Outcome, verified string, run func(*caseRun)) *caseDef {
		return &caseDef{CaseInfo: CaseInfo{ID: id, Title: title, Layer: Protected, Control: ctl, Isolation: true, Expected: expected, Verified: verified}, probe: true, run: run}
	}
	return []*caseDef{
		iso("protect-git", "writes to .git/hooks/ and .git/config at the root are denied", executor.ControlProtect, Denied,
			"the probe creates .git/hooks/pre-commit, overwrites a sample hook, appends to and overwrites .git/config; host-side listing and hashes of .git/hooks and .git/config unchanged. Twin: protect none",
			func(c *caseRun) { caseProtectGit(c, c.fx.root) }),
		iso("protect-git-nested", "the same in a repository nested five levels down", executor.ControlProtect, Denied,
			"as protect-git, in root/a/b/c/d/e/.git",
			func(c *caseRun) { caseProtectGit(c, filepath.Join(c.fx.root, "a", "b", "c", "d", "e")) }),
		iso("protect-rename-recreate", "renaming .git (or .git/hooks) away and recreating it does not make hooks writable", executor.ControlProtect, Denied,
			"the probe renames .git away, recreates .git/hooks and writes a hook and a config, then does the same with .git/hooks; afterwards no file under a .git/hooks directory or named .git/config holds the token. Twin: protect none", caseProtectRenameRecreate),
		iso("protect-rename-roundtrip", "renaming .git away, writing its hooks and renaming it back does not plant a hook", executor.ControlProtect, Denied,
			"the probe renames .git to .git-away, writes .git-away/hooks/pre-commit and .git-away/config, renames it back; no hook or config holds the token afterwards. Twin: protect none", caseProtectRoundtrip),
		iso("protect-new-repo", "a repository created during the command keeps no hook", executor.ControlFSNewFiles, Denied,
			"the probe creates root/x/y/.git/hooks/pre-commit and root/x/y/.git/config; after Run no hook or config holds the token (masked, or removed by the post-command scan). Twin: protect none", caseProtectNewRepo),
		iso("git-redirect-commondir", "a commondir written into .git cannot make the host's git run a planted fsmonitor", executor.ControlProtect, Denied,
			"the probe makes a git directory by content (HEAD, objects/, refs/) with a fsmonitor in its config and writes .git/commondir pointing at it; afterwards the host's own git status in the root must not run the fsmonitor (a canary file outside the root). Twin: protect none", caseGitCommondir),
		iso("git-redirect-gitdir-file", "a .git file pointing at a git directory not named .git cannot plant a fsmonitor", executor.ControlProtect, Denied,
			"the probe writes sub/.git (gitdir: ../data/x) and data/x as a git directory by content whose config has a fsmonitor; afterwards the host's git status in sub must not run it. Twin: protect none", caseGitDirFile),
		iso("git-redirect-modules", "the config of an existing submodule's git directory (.git/modules/NAME) is protected", executor.ControlProtect, Denied,
			"the fixture absorbs a submodule's git directory into .git/modules/lib (host git init --separate-git-dir); the probe appends a fsmonitor to its config; afterwards the host's git status in lib must not run it. Twin: protect none", caseGitModules),
		iso("git-redirect-worktree-config", "extensions.worktreeConfig with a .git/config.worktree cannot plant a fsmonitor", executor.ControlProtect, Denied,
			"the probe appends [extensions] worktreeConfig = true to .git/config and writes .git/config.worktree with a fsmonitor; afterwards the host's git status in the root must not run it. Twin: protect none", caseGitWorktreeConfig),
		iso("git-redirect-worktrees", "a worktree's git directory (.git/worktrees/NAME) whose commondir points at a planted git directory cannot plant a fsmonitor", executor.ControlProtect, Denied,
			"the probe makes evil/ a git directory by content with a fsmonitor in its config, .git/worktrees/wt with HEAD, gitdir and a commondir pointing at evil/, and wt/.git (gitdir: .git/worktrees/wt); afterwards the host's git status in wt must not run it. Twin: protect none", caseGitWorktrees),
		iso("git-nested-repo", "a repository nested in a new git directory's parts (its .git, info/, refs/) cannot plant a fsmonitor", executor.ControlProtect, Denied,
			"the fixture registers gitlinks in the root's index (host git update-index); the probe makes new git directories by content at those paths' parents and plants a repository with a fsmonitor at sub/.git, lib/info/x/.git and bare/refs/x/.git; afterwards the host's git status in the root (which recurses into the gitlinks) must not run it. Twin: protect none", caseGitNested),
		iso("git-separate-git-dir", "a repository made by git init --separate-git-dir and registered as a gitlink cannot plant a fsmonitor", executor.ControlProtect, Denied,
			"inside the sandbox, real git: git init --separate-git-dir=data/x sub, a commit in sub, git config core.fsmonitor in it, and git update-index --cacheinfo 160000 registering sub in the root's index (no .gitmodules); afterwards the host's git status in the root (which recurses into the gitlink) must not run it. Twin: protect none. Unsupported without git (on the host or inside the sandbox)", caseGitSeparateDir),
		iso("tool-settings", "settings of agent and developer tools that run commands are protected", executor.ControlProtect, Denied,
			"the probe writes .claude/settings.json, .cursor/mcp.json, .gemini/settings.json, .devcontainer/devcontainer.json, .pre-commit-config.yaml, .husky/pre-commit, .npmrc and .yarnrc.yml (at the root and one level down); afterwards none of them exists with the token on the host. Twin: protect none", caseToolSettings),
		iso("project-policy", "the project policy layer (.cordon/policy.yaml) cannot be changed by a command", executor.ControlProtect, Denied,
			"the fixture writes root/.cordon/policy.yaml; the probe overwrites it, appends to it and writes .cordon/extra.yaml; host-side listing and hashes of root/.cordon unchanged. Twin: protect none", caseProjectPolicy),
		iso("git-works", "git add and git commit work with protection on", executor.ControlProtect, Allowed,
			"git add and git commit inside the sandbox; the host's git log and git show see the commit and the file. Unsupported without git (on the host or inside the sandbox)", caseGitWorks),
		iso("git-init-root", "git init works at the root of a workspace that is not a repository yet", executor.ControlProtect, Allowed,
			"in a root with no .git, inside the sandbox: git init, git add and git commit; afterwards the host's git log and git show in the root see the commit and the file. Unsupported without git (on the host or inside the sandbox)", caseGitInitRoot),
		iso("git-init-root-fsmonitor", "a repository created at the root during the command cannot plant a fsmonitor", executor.ControlProtect, Denied,
			"in a root with no .git, inside the sandbox, real git: git init, git config core.fsmonitor; afterwards the host's git status in the root must not run it (the new git directory's config is sanitized). Twin: protect none. Unsupported without git (on the host or inside the sandbox)", caseGitInitRootFsmonitor),
		iso("git-workflow", "everyday git works with protection on: branches, rebase, stash, worktrees, a local submodule, a local clone, a new repository", executor.ControlProtect, Allowed,
			"the user (host git) registers a repository in the root as submodule lib and moves the superproject to its newer commit; inside the sandbox: git checkout -b, commits on two branches, git rebase, git stash and stash pop, git worktree add, git submodule update, git clone of the submodule's repository and git init; afterwards the host's own git sees the rebased branch, the stashed change committed, the worktree, the submodule at the new commit, the clone's history and the new repository. Unsupported without git (on the host or inside the sandbox)", caseGitWorkflow),
	}
}

// noProtect is coding mode with protection off: the twin of protect cases.
func (c *caseRun) noProtect() *policy.Policy {
	p := c.coding()
	p.Protect = policy.Protect{Disabled: true}
	return p
}

// gitRepo makes dir a repository: with git when installed, else by hand
// (protection does not need git itself). It always has a sample hook.
func (c *caseRun) gitRepo(dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.setupf("fixture: %v", err)
	}
	if gitTool, err := exec.LookPath("git"); err == nil {
		cmd := exec.CommandContext(c.ctx, gitTool, "init", "-q", dir)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+c.fx.home)
		if out, err := cmd.CombinedOutput(); err != nil {
			c.setupf("fixture: git init %s: %v: %s", dir, err, out)
		}
	} else {
		c.mustWrite(filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
		c.mustWrite(filepath.Join(dir, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
		for _, d := range []string{"objects", "refs/heads"} {
			if err := os.MkdirAll(filepath.Join(dir, ".git", d), 0o755); err != nil {
				c.setupf("fixture: %v", err)
			}
		}
	}
	sample := filepath.Join(dir, ".git", "hooks", "pre-commit.sample")
	if _, err := os.Stat(sample); err != nil {
		c.mustWrite(sample, "#!/bin/sh\nexit 0\n")
	}
}

func caseProtectGit(c *caseRun, repo string) {
	c.gitRepo(repo)
	tok := token("hook")
	git := filepath.Join(repo, ".git")
	cmd := c.probes(
		[]string{"write", filepath.Join(git, "hooks", "pre-commit"), "#!/bin/sh\necho " + tok + "\n"},
		[]string{"write", filepath.Join(git, "hooks", "pre-commit.sample"), "#!/bin/sh\necho " + tok + "\n"},
		[]string{"append", filepath.Join(git, "config"), "[core]\n\thooksPath = /tmp/" + tok + "\n"},
		[]string{"write", filepath.Join(git, "config"), "[core]\n\tfsmonitor = " + tok + "\n"},
	)
	c.isolate(changed(filepath.Join(git, "hooks"), filepath.Join(git, "config")), c.act(cmd, nil), c.twinPolicy("protect none", cmd, c.noProtect()))
}

// hookPlanted: the action took effect when, afterwards, a file under any
// .git/hooks directory in the root, or any .git/config, holds tok.
func hookPlanted(tok string) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		return func(*executor.Result) (bool, string) {
			var planted []string
			_ = filepath.WalkDir(c.fx.root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return nil
				}
				rel, _ := filepath.Rel(c.fx.root, p)
				rel = "/" + filepath.ToSlash(rel)
				if !strings.Contains(rel, "/.git/hooks/") && !strings.HasSuffix(rel, "/.git/config") {
					return nil
				}
				if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(tok)) {
					planted = append(planted, p)
				}
				return nil
			})
			if len(planted) == 0 {
				return false, "no file under a .git/hooks directory or named .git/config in the root holds the token"
			}
			return true, "planted: " + strings.Join(planted, ", ")
		}
	}
}

func caseProtectRenameRecreate(c *caseRun) {
	c.gitRepo(c.fx.root)
	tok := token("hook")
	r := c.fx.root
	cmd := c.probes(
		[]string{"rename", filepath.Join(r, ".git"), filepath.Join(r, ".git-away")},
		[]string{"mkdir", filepath.Join(r, ".git", "hooks")},
		[]string{"write", filepath.Join(r, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho " + tok + "\n"},
		[]string{"write", filepath.Join(r, ".git", "config"), "[core]\n\tfsmonitor = " + tok + "\n"},
		[]string{"rename", filepath.Join(r, ".git", "hooks"), filepath.Join(r, ".git", "hooks-away")},
		[]string{"mkdir", filepath.Join(r, ".git", "hooks")},
		[]string{"write", filepath.Join(r, ".git", "hooks", "post-checkout"), "#!/bin/sh\necho " + tok + "\n"},
	)
	c.isolate(hookPlanted(tok), c.act(cmd, nil), c.twinPolicy("protect none", cmd, c.noProtect()))
}

func caseProtectRoundtrip(c *caseRun) {
	c.gitRepo(c.fx.root)
	tok := token("hook")
	r := c.fx.root
	away := filepath.Join(r, ".git-away")
	cmd := c.probes(
		[]string{"rename", filepath.Join(r, ".git"), away},
		[]string{"write", filepath.Join(away, "hooks", "pre-commit"), "#!/bin/sh\necho " + tok + "\n"},
		[]string{"append", filepath.Join(away, "config"), "[core]\n\tfsmonitor = " + tok + "\n"},
		[]string{"rename", away, filepath.Join(r, ".git")},
	)
	c.isolate(hookPlanted(tok), c.act(cmd, nil), c.twinPolicy("protect none", cmd, c.noProtect()))
}

func caseProtectNewRepo(c *caseRun) {
	tok := token("hook")
	seq := 0
	cmdFor := func() string {
		seq++
		git := filepath.Join(c.fx.root, fmt.Sprintf("x%d", seq), "y", ".git")
		return c.probes(
			[]string{"mkdir", filepath.Join(git, "hooks")},
			[]string{"write", filepath.Join(git, "hooks", "pre-commit"), "#!/bin/sh\necho " + tok + "\n"},
			[]string{"write", filepath.Join(git, "config"), "[core]\n\tfsmonitor = " + tok + "\n"},
		)
	}
	act := c.act(cmdFor(), nil)
	twinCmd := cmdFor()
	// The twin's repository is a different one, so a hook the action left
	// does not count for the twin.
	c.isolate(hookPlantedUnder(tok, "x1"), act, c.twinPolicy("protect none", twinCmd, c.noProtect()))
}

// hookPlantedUnder is hookPlanted for the action (x1) or, once that has
// run, for the twin (x2).
func hookPlantedUnder(tok, first string) observer {
	calls := 0
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		calls++
		sub := first
		if calls > 1 {
			sub = "x2"
		}
		check := hookPlanted(tok)(c)
		return func(res *executor.Result) (bool, string) {
			took, seen := check(res)
			if took && !strings.Contains(seen, string(filepath.Separator)+sub+string(filepath.Separator)) {
				return false, "no hook planted in the repository of this attempt (" + seen + " is from the previous one)"
			}
			return took, seen
		}
	}
}

func caseGitWorks(c *caseRun) {
	gitTool, err := exec.LookPath("git")
	if err != nil {
		c.unsupportedf("git is not installed on the host")
	}
	c.gitRepo(c.fx.root)
	probeRes := c.run(c.x, "is git available inside the sandbox", c.req("command -v git", nil), roleAct)
	if probeRes.ExitCode != 0 {
		c.unsupportedf("git is not available inside the sandbox")
	}
	c.commitSeen(gitTool, "")
}

// commitSeen runs prefix (a command ending in "&& ", or "") and then a
// commit of a new file inside the sandbox, and passes when the host's own
// git log and git show in the root see that commit and the file.
func (c *caseRun) commitSeen(gitTool, prefix string) {
	tok := token("git")
	cmd := prefix + "printf '%s\\n' " + tok + " > f.txt && git add f.txt && git -c user.name=cordon -c user.email=cordon@example.invalid commit -q -m msg-" + tok
	committed := func(c *caseRun) func(*executor.Result) (bool, string) {
		return func(res *executor.Result) (bool, string) {
			host := func(args ...string) string {
				cmd := exec.CommandContext(c.ctx, gitTool, append([]string{"-C", c.fx.root}, args...)...)
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+c.fx.home)
				out, err := cmd.CombinedOutput()
				if err != nil {
					return "error: " + err.Error() + ": " + string(bytes.TrimSpace(out))
				}
				return string(bytes.TrimSpace(out))
			}
			subject, file := host("log", "-1", "--format=%s"), host("show", "HEAD:f.txt")
			ok := subject == "msg-"+tok && file == tok
			return ok, fmt.Sprintf("host git log -1: %q; git show HEAD:f.txt: %q (stderr inside: %s)", clip(subject, 200), clip(file, 200), clip(string(res.Stderr), 200))
		}
	}
	c.permit(committed, c.act(cmd, nil))
}

// gitWorkflowScript is the git-workflow case's command; TOK is replaced
// by the case's token.
const gitWorkflowScript = `set -e
g() { git -c user.name=cordon -c user.email=cordon@example.invalid -c protocol.file.allow=always -c init.defaultBranch=main "$@"; }
printf 'a\n' > a.txt; g add a.txt; g commit -q -m base
main=$(g symbolic-ref --short HEAD)
g checkout -q -b topic
printf 'b\n' > b.txt; g add b.txt; g commit -q -m topic-TOK
g checkout -q "$main"
printf 'c\n' > c.txt; g add c.txt; g commit -q -m main-TOK
g checkout -q topic
g rebase -q "$main"
printf 's\n' > s.txt; g add s.txt; g stash -q; g stash pop -q; g commit -q -m stash-TOK
g worktree add -q wt
g submodule -q update
g clone -q subsrc cloned
g init -q fresh
echo done-TOK`

func caseGitWorkflow(c *caseRun) {
	gitTool, err := exec.LookPath("git")
	if err != nil {
		c.unsupportedf("git is not installed on the host")
	}
	c.gitRepo(c.fx.root)
	if res := c.run(c.x, "is git available inside the sandbox", c.req("command -v git", nil), roleAct); res.ExitCode != 0 {
		c.unsupportedf("git is not available inside the sandbox")
	}
	tok := token("flow")
	// The user's side: a repository subsrc in the root, registered as
	// the submodule lib (its URL in .git/config, which commands may not
	// change) at its first commit; then the superproject is moved to
	// subsrc's second commit while lib stays at the first, so that
	// git submodule update has work to do.
	fixture := func(dir string, args ...string) string {
		cmd := exec.CommandContext(c.ctx, gitTool, append([]string{"-C", filepath.Join(c.fx.root, dir),
			"-c", "user.name=cordon", "-c", "user.email=cordon@example.invalid", "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+c.fx.home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			c.setupf("fixture: git %s in %s: %v: %s", strings.Join(args, " "), dir, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	c.mustWrite(filepath.Join(c.fx.root, "subsrc", "x.txt"), "x\n")
	fixture("subsrc", "init", "-q")
	fixture("subsrc", "add", "x.txt")
	fixture("subsrc", "commit", "-q", "-m", "sub-first")
	first := fixture("subsrc", "rev-parse", "HEAD")
	fixture(".", "submodule", "-q", "add", "./subsrc", "lib")
	c.mustWrite(filepath.Join(c.fx.root, "subsrc", "y.txt"), "y\n")
	fixture("subsrc", "add", "y.txt")
	fixture("subsrc", "commit", "-q", "-m", "sub-"+tok)
	second := fixture("subsrc", "rev-parse", "HEAD")
	fixture("lib", "fetch", "-q", "origin")
	fixture("lib", "checkout", "-q", "origin/HEAD")
	fixture(".", "add", "lib")
	fixture(".", "commit", "-q", "-m", "the submodule")
	fixture("lib", "checkout", "-q", first)
	cmd := strings.ReplaceAll(gitWorkflowScript, "TOK", tok)
	worked := func(c *caseRun) func(*executor.Result) (bool, string) {
		return func(res *executor.Result) (bool, string) {
			host := func(dir string, args ...string) (string, bool) {
				cmd := exec.CommandContext(c.ctx, gitTool, append([]string{"-C", filepath.Join(c.fx.root, dir)}, args...)...)
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+c.fx.home)
				out, err := cmd.CombinedOutput()
				return strings.TrimSpace(string(out)), err == nil
			}
			var bad []string
			check := func(what string, ok bool, out string) {
				if !ok {
					bad = append(bad, what+": "+clip(out, 200))
				}
			}
			log, ok := host(".", "log", "--format=%s", "topic")
			check("topic rebased onto main, the stashed change committed", ok && strings.HasPrefix(log, "stash-"+tok+"\ntopic-"+tok+"\nmain-"+tok+"\nbase\nthe submodule"), log)
			wts, ok := host(".", "worktree", "list", "--porcelain")
			check("worktree wt listed", ok && strings.Contains(wts, "worktree "+filepath.Join(c.fx.root, "wt")), wts)
			st, ok := host("wt", "status", "--porcelain")
			check("git status in wt", ok, st)
			sub, ok := host(".", "submodule", "status")
			check("submodule lib at subsrc's second commit", ok && strings.HasPrefix(sub, second+" lib"), sub) // "+" or "-" first otherwise
			sl, ok := host("lib", "log", "-1", "--format=%s")
			check("git log in lib", ok && sl == "sub-"+tok, sl)
			cl, ok := host("cloned", "log", "-1", "--format=%s")
			check("git log in the clone", ok && cl == "sub-"+tok, cl)
			fr, ok := host("fresh", "rev-parse", "--is-inside-work-tree")
			check("the new repository", ok && fr == "true", fr)
			if !strings.Contains(string(res.Stdout), "done-"+tok) {
				bad = append(bad, "the script did not finish: "+clip(string(res.Stderr), 300))
			}
			if len(bad) > 0 {
				return false, "host git: " + strings.Join(bad, "; ")
			}
			return true, "host git sees the rebased branch with the stashed change, worktree wt, submodule lib checked out, the clone and the new repository"
		}
	}
	c.permit(worked, c.act(cmd, nil))
}

// hostGitRuns: the action took effect when the host's own git status in
// the directory dir() (run with no user or system config, as the user's
// editor would in the workspace) runs the command planted as a fsmonitor,
// which creates the canary file outside the root.
func hostGitRuns(dir func() string, canary string) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		gitTool, err := exec.LookPath("git")
		if err != nil {
			c.unsupportedf("git is not installed on the host")
		}
		_ = os.Remove(canary)
		return func(*executor.Result) (bool, string) {
			_ = os.Remove(canary)
			cmd := exec.CommandContext(c.ctx, gitTool, "-C", dir(), "status", "--porcelain")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+c.fx.home)
			out, _ := cmd.CombinedOutput()
			if _, err := os.Stat(canary); err == nil {
				_ = os.Remove(canary)
				return true, "the host's git status in " + dir() + " ran the planted fsmonitor (canary created)"
			}
			return false, "the host's git status in " + dir() + " ran nothing planted: " + strings.TrimSpace(firstLine(string(out)))
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// fsmonitorConfig is a git config whose fsmonitor creates canary.
func fsmonitorConfig(canary string) string {
	return "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch " + canary + "; false\"\n"
}

// fakeGitDir returns probe invocations that make dir a git directory by
// content (HEAD, objects/, refs/heads/) with config text.
func fakeGitDir(dir, config string) [][]string {
	return [][]string{
		{"mkdir", filepath.Join(dir, "objects")},
		{"mkdir", filepath.Join(dir, "refs", "heads")},
		{"write", filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n"},
		{"write", filepath.Join(dir, "config"), config},
	}
}

func caseGitCommondir(c *caseRun) {
	c.gitRepo(c.fx.root)
	canary := filepath.Join(c.fx.outside, "fsmonitor-ran")
	seq := 0
	cmdFor := func() string {
		seq++
		evil := filepath.Join(c.fx.root, fmt.Sprintf("common%d", seq))
		inv := fakeGitDir(evil, fsmonitorConfig(canary))
		inv = append(inv, []string{"write", filepath.Join(c.fx.root, ".git", "commondir"), evil + "\n"})
		return c.probes(inv...)
	}
	root := func() string { return c.fx.root }
	c.isolate(hostGitRuns(root, canary), c.act(cmdFor(), nil), c.twinPolicy("protect none", cmdFor(), c.noProtect()))
}

func caseGitDirFile(c *caseRun) {
	canary := filepath.Join(c.fx.outside, "fsmonitor-ran")
	seq := 0
	cmdFor := func() string {
		seq++
		sub := filepath.Join(c.fx.root, fmt.Sprintf("sub%d", seq))
		data := filepath.Join(c.fx.root, "data", fmt.Sprintf("x%d", seq))
		inv := [][]string{{"mkdir", sub}, {"write", filepath.Join(sub, "f"), "f\n"}}
		inv = append(inv, fakeGitDir(data, fsmonitorConfig(canary))...)
		inv = append(inv, []string{"write", filepath.Join(sub, ".git"), "gitdir: " + data + "\n"})
		return c.probes(inv...)
	}
	act, twin := cmdFor(), cmdFor()
	calls := 0
	sub := func() string { return filepath.Join(c.fx.root, fmt.Sprintf("sub%d", calls)) }
	obs := func(c *caseRun) func(*executor.Result) (bool, string) {
		calls++
		return hostGitRuns(sub, canary)(c)
	}
	c.isolate(obs, c.act(act, nil), c.twinPolicy("protect none", twin, c.noProtect()))
}

func caseGitSeparateDir(c *caseRun) {
	if _, err := exec.LookPath("git"); err != nil {
		c.unsupportedf("git is not installed on the host")
	}
	c.gitRepo(c.fx.root)
	if res := c.run(c.x, "is git available inside the sandbox", c.req("command -v git", nil), roleAct); res.ExitCode != 0 {
		c.unsupportedf("git is not available inside the sandbox")
	}
	canary := filepath.Join(c.fx.outside, "fsmonitor-ran")
	seq := 0
	cmdFor := func() string {
		seq++
		// The fsmonitor is set after the commit, so the command's own
		// git never runs it (it could not write outside the root
		// anyway).
		return strings.NewReplacer("SUB", fmt.Sprintf("sub%d", seq), "DATA", fmt.Sprintf("data/x%d", seq), "CANARY", canary).Replace(`set -e
g() { git -c user.name=cordon -c user.email=cordon@example.invalid -c init.defaultBranch=main "$@"; }
mkdir -p data
g init -q --separate-git-dir=DATA SUB
printf 'x\n' > SUB/x.txt
g -C SUB add x.txt
g -C SUB commit -q -m x
g -C SUB config core.fsmonitor 'touch CANARY; false'
g update-index --add --cacheinfo "160000,$(g -C SUB rev-parse HEAD),SUB"
`) + c.probeCmd("list", filepath.Join(c.fx.root, fmt.Sprintf("data/x%d", seq)))
	}
	root := func() string { return c.fx.root }
	c.isolate(hostGitRuns(root, canary), c.act(cmdFor(), nil), c.twinPolicy("protect none", cmdFor(), c.noProtect()))
}

func caseGitModules(c *caseRun) {
	gitTool, err := exec.LookPath("git")
	if err != nil {
		c.unsupportedf("git is not installed on the host")
	}
	c.gitRepo(c.fx.root)
	lib := filepath.Join(c.fx.root, "lib")
	modules := filepath.Join(c.fx.root, ".git", "modules", "lib")
	if err := os.MkdirAll(filepath.Dir(modules), 0o755); err != nil {
		c.setupf("fixture: %v", err)
	}
	cmd := exec.CommandContext(c.ctx, gitTool, "init", "-q", "--separate-git-dir="+modules, lib)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+c.fx.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		c.setupf("fixture: git init --separate-git-dir: %v: %s", err, out)
	}
	canary := filepath.Join(c.fx.outside, "fsmonitor-ran")
	plant := c.probes([]string{"append", filepath.Join(modules, "config"), "[core]\n\tfsmonitor = \"touch " + canary + "; false\"\n"})
	c.isolate(hostGitRuns(func() string { return lib }, canary), c.act(plant, nil), c.twinPolicy("protect none", plant, c.noProtect()))
}

// toolSettings are files of the host-run surface that tool-settings
// writes, relative to the root and to a subdirectory.
var toolSettings = []string{
	".claude/settings.json", ".cursor/mcp.json", ".gemini/settings.json",
	".devcontainer/devcontainer.json", ".pre-commit-config.yaml", ".husky/pre-commit",
	".npmrc", ".yarnrc.yml",
}

func caseToolSettings(c *caseRun) {
	tok := token("settings")
	seq := 0
	cmdFor := func() string {
		seq++
		var inv [][]string
		for _, base := range []string{c.fx.root, filepath.Join(c.fx.root, fmt.Sprintf("pkg%d", seq))} {
			for _, rel := range toolSettings {
				p := filepath.Join(base, rel)
				if d := filepath.Dir(rel); d != "." {
					inv = append(inv, []string{"mkdir", filepath.Join(base, d)})
				}
				inv = append(inv, []string{"write", p, tok + "\n"})
			}
		}
		return c.probes(inv...)
	}
	planted := func(c *caseRun) func(*executor.Result) (bool, string) {
		return func(*executor.Result) (bool, string) {
			var found []string
			_ = filepath.WalkDir(c.fx.root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return nil
				}
				if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(tok)) {
					found = append(found, p)
				}
				return nil
			})
			if len(found) == 0 {
				return false, "no tool settings file in the root holds the token"
			}
			return true, fmt.Sprintf("%d tool settings files hold the token: %s", len(found), strings.Join(found, ", "))
		}
	}
	act := cmdFor()
	twin := cmdFor()
	// The twin writes the same root files again; they are gone after the
	// action (removed by the guard), so what the twin leaves is its own.
	c.isolate(planted, c.act(act, nil), c.twinPolicy("protect none", twin, c.noProtect()))
}

// caseProjectPolicy: a command cannot rewrite the project policy layer
// that confines the next session.
func caseProjectPolicy(c *caseRun) {
	dir := filepath.Join(c.fx.root, ".cordon")
	c.mustWrite(filepath.Join(dir, "policy.yaml"), "denied_paths: [secrets]\n")
	tok := token("policy")
	cmd := c.probes(
		[]string{"write", filepath.Join(dir, "policy.yaml"), "mode: coding # " + tok + "\n"},
		[]string{"append", filepath.Join(dir, "policy.yaml"), "command_rules: [{pattern: curl, action: allow}] # " + tok + "\n"},
		[]string{"write", filepath.Join(dir, "extra.yaml"), tok + "\n"},
	)
	c.isolate(changed(dir), c.act(cmd, nil), c.twinPolicy("protect none", cmd, c.noProtect()))
}

// caseGitNested: the host's git status recurses into every gitlink of the
// index and discovers the .git below it; a repository planted inside a
// new git directory's kept or data entries must be found and sanitized
// like any new repository.
func caseGitNested(c *caseRun) {
	gitTool, err := exec.LookPath("git")
	if err != nil {
		c.unsupportedf("git is not installed on the host")
	}
	c.gitRepo(c.fx.root)
	canary := filepath.Join(c.fx.outside, "fsmonitor-ran")
	// at are the gitlinks of attempt n, relative to the root: a nested
	// repository lies at each.
	at := func(n int) []string {
		return []string{fmt.Sprintf("sub%d", n), fmt.Sprintf("lib%d/info/x", n), fmt.Sprintf("bare%d/refs/x", n)}
	}
	const sha = "1111111111111111111111111111111111111111"
	for n := 1; n <= 2; n++ {
		for _, rel := range at(n) {
			cmd := exec.CommandContext(c.ctx, gitTool, "-C", c.fx.root, "update-index", "--add", "--cacheinfo", "160000,"+sha+","+rel)
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+c.fx.home)
			if out, err := cmd.CombinedOutput(); err != nil {
				c.setupf("fixture: git update-index %s: %v: %s", rel, err, out)
			}
		}
	}
	seq := 0
	cmdFor := func() string {
		seq++
		inert := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
		var inv [][]string
		for i, rel := range at(seq) {
			// The enclosing new git directory: sub itself, lib, bare.
			outer := filepath.Join(c.fx.root, strings.Split(rel, "/")[0])
			inv = append(inv, fakeGitDir(outer, inert)...)
			if i > 0 {
				inv = append(inv, []string{"mkdir", filepath.Join(c.fx.root, rel)})
			}
			inv = append(inv, fakeGitDir(filepath.Join(c.fx.root, rel, ".git"), fsmonitorConfig(canary))...)
		}
		return c.probes(inv...)
	}
	root := func() string { return c.fx.root }
	c.isolate(hostGitRuns(root, canary), c.act(cmdFor(), nil), c.twinPolicy("protect none", cmdFor(), c.noProtect()))
}

func caseGitWorktreeConfig(c *caseRun) {
	c.gitRepo(c.fx.root)
	canary := filepath.Join(c.fx.outside, "fsmonitor-ran")
	git := filepath.Join(c.fx.root, ".git")
	cmd := c.probes(
		[]string{"append", filepath.Join(git, "config"), "[extensions]\n\tworktreeConfig = true\n"},
		[]string{"write", filepath.Join(git, "config.worktree"), "[core]\n\tfsmonitor = \"touch " + canary + "; false\"\n"},
	)
	root := func() string { return c.fx.root }
	c.isolate(hostGitRuns(root, canary), c.act(cmd, nil), c.twinPolicy("protect none", cmd, c.noProtect()))
}

func caseGitWorktrees(c *caseRun) {
	c.gitRepo(c.fx.root)
	canary := filepath.Join(c.fx.outside, "fsmonitor-ran")
	seq := 0
	cmdFor := func() string {
		seq++
		evil := filepath.Join(c.fx.root, fmt.Sprintf("evil%d", seq))
		admin := filepath.Join(c.fx.root, ".git", "worktrees", fmt.Sprintf("wt%d", seq))
		wt := filepath.Join(c.fx.root, fmt.Sprintf("wt%d", seq))
		inv := fakeGitDir(evil, fsmonitorConfig(canary))
		inv = append(inv,
			[]string{"mkdir", admin},
			[]string{"write", filepath.Join(admin, "HEAD"), "ref: refs/heads/main\n"},
			[]string{"write", filepath.Join(admin, "commondir"), evil + "\n"},
			[]string{"write", filepath.Join(admin, "gitdir"), filepath.Join(wt, ".git") + "\n"},
			[]string{"mkdir", wt},
			[]string{"write", filepath.Join(wt, ".git"), "gitdir: " + admin + "\n"},
		)
		return c.probes(inv...)
	}
	act, twin := cmdFor(), cmdFor()
	calls := 0
	wt := func() string { return filepath.Join(c.fx.root, fmt.Sprintf("wt%d", calls)) }
	obs := func(c *caseRun) func(*executor.Result) (bool, string) {
		calls++
		return hostGitRuns(wt, canary)(c)
	}
	c.isolate(obs, c.act(act, nil), c.twinPolicy("protect none", twin, c.noProtect()))
}

// freshRootGit skips (unsupported) without git on the host or inside the
// sandbox, and fails the setup when the root is a repository already.
func (c *caseRun) freshRootGit() string {
	gitTool, err := exec.LookPath("git")
	if err != nil {
		c.unsupportedf("git is not installed on the host")
	}
	if _, err := os.Lstat(filepath.Join(c.fx.root, ".git")); err == nil {
		c.setupf("fixture: the root already holds .git")
	}
	if res := c.run(c.x, "is git available inside the sandbox", c.req("command -v git", nil), roleAct); res.ExitCode != 0 {
		c.unsupportedf("git is not available inside the sandbox")
	}
	return gitTool
}

func caseGitInitRoot(c *caseRun) {
	c.commitSeen(c.freshRootGit(), "git init -q && ")
}

func caseGitInitRootFsmonitor(c *caseRun) {
	c.freshRootGit()
	canary := filepath.Join(c.fx.outside, "fsmonitor-ran")
	cmd := "git init -q && git config core.fsmonitor 'touch " + canary + "; false'\n" + c.probeCmd("list", filepath.Join(c.fx.root, ".git"))
	root := func() string { return c.fx.root }
	c.isolate(hostGitRuns(root, canary), c.act(cmd, nil), c.twinPolicy("protect none", cmd, c.noProtect()))
}
