package shellscan

import "strings"

// gitCommands are the git subcommands the gate understands: they run no
// program named on the command line or in the environment beyond git's
// own (hooks and configuration are protected paths, see the policy). A
// subcommand not listed — an alias from configuration, a git-foo program
// on PATH — is opaque.
var gitCommands = map[string]bool{
	"add": true, "am": true, "annotate": true, "apply": true, "archive": true, "bisect": true, "blame": true,
	"branch": true, "bundle": true, "cat-file": true, "check-attr": true, "check-ignore": true,
	"check-mailmap": true, "check-ref-format": true, "checkout": true, "checkout-index": true,
	"cherry": true, "cherry-pick": true, "clean": true, "clone": true, "commit": true, "commit-graph": true,
	"commit-tree": true, "config": true, "count-objects": true, "describe": true, "diff": true,
	"diff-files": true, "diff-index": true, "diff-tree": true, "fetch": true, "for-each-ref": true,
	"format-patch": true, "fsck": true, "gc": true, "grep": true, "hash-object": true, "help": true,
	"init": true, "log": true, "ls-files": true, "ls-remote": true, "ls-tree": true, "merge": true,
	"merge-base": true, "merge-file": true, "mktree": true, "mv": true, "name-rev": true, "notes": true,
	"prune": true, "pull": true, "push": true, "range-diff": true, "read-tree": true, "rebase": true,
	"reflog": true, "remote": true, "repack": true, "replace": true, "reset": true, "restore": true,
	"rev-list": true, "rev-parse": true, "revert": true, "rm": true, "shortlog": true, "show": true,
	"show-branch": true, "show-ref": true, "sparse-checkout": true, "stash": true, "status": true,
	"stripspace": true, "submodule": true, "fsmonitor--daemon": false, "switch": true, "symbolic-ref": true, "tag": true,
	"update-index": true, "update-ref": true, "var": true, "verify-commit": true, "verify-tag": true,
	"version": true, "whatchanged": true, "worktree": true, "write-tree": true,
}

// gitRuns are options (by subcommand; "*" for any) that make git run a
// program the command names: each makes the segment opaque.
var gitRuns = map[string][]string{
	"*":            {"--upload-pack", "--receive-pack", "--exec", "--ext-diff", "--open-files-in-pager", "--textconv"},
	"rebase":       {"-x", "--exec"},
	"difftool":     {"-x", "--extcmd", "-t", "--tool"},
	"fetch":        {"-u"},
	"clone":        {"-u", "-c", "--config", "--template"},
	"ls-remote":    {"-u"},
	"pull":         {"-u"},
	"grep":         {"-O"},
	"archive":      {"--remote"},
	"submodule":    {"foreach"},
	"bisect":       {"run"},
	"init":         {"--template"},
	"worktree":     {},
	"format-patch": {},
}

// gitOpaque returns why the git subcommand sub with args runs a program
// the gate cannot read, or "".
func gitOpaque(sub string, args []xword) string {
	if !gitCommands[sub] {
		return "git " + sub + " is not a git command the gate knows (an alias from git's configuration, or a git-" + sub + " program, can run anything)"
	}
	for _, a := range args {
		if a.Kind != Literal {
			continue
		}
		for _, set := range [][]string{gitRuns["*"], gitRuns[sub]} {
			for _, o := range set {
				if optIs(a.Value, o) || !strings.HasPrefix(o, "-") && a.Value == o {
					return "git " + sub + " " + o + " runs a program the gate cannot read"
				}
			}
		}
	}
	return ""
}

// gitWrites are options (by subcommand) whose value is a path git writes.
var gitWrites = map[string][]string{
	"*":            {"--output", "--index-output", "--prefix", "--separate-git-dir", "--output-directory"},
	"format-patch": {"-o"}, "archive": {"-o"},
}

// initValueOpts are git init's options whose value is the next word
// unless given with "=".
var initValueOpts = []string{"--initial-branch", "--template", "--object-format", "--ref-format", "--separate-git-dir"}

// initOperand returns the index of git init's directory operand (-1:
// none) — option values (-b main, --template DIR) are not operands — and
// whether git may write elsewhere than DIR/.git: --separate-git-dir, a
// template, or a word known only at run time.
func initOperand(rest []xword) (op int, redirect bool) {
	op = -1
	for j := 0; j < len(rest); j++ {
		r := rest[j]
		if r.Kind != Literal {
			redirect = true
			if op < 0 {
				op = j
			}
			continue
		}
		v := r.Value
		switch {
		case v == "--":
			if j+1 < len(rest) && op < 0 {
				op = j + 1
			}
			return op, redirect || j+2 < len(rest)
		case v == "-" || !strings.HasPrefix(v, "-"):
			if op < 0 {
				op = j
			}
			continue
		}
		if optIs(v, "--separate-git-dir") || optIs(v, "--template") {
			redirect = true
		}
		takes := false
		for _, o := range initValueOpts {
			if optIs(v, o) && !strings.Contains(v, "=") {
				takes = true
			}
		}
		if !strings.HasPrefix(v, "--") && strings.IndexByte(v, 'b') == len(v)-1 {
			takes = true // -b NAME, -qb NAME
		}
		if takes {
			j++
		}
	}
	return op, redirect
}

// gitWriteOperands are subcommands whose operands (after options) are
// paths git creates or writes: the first operand (merge-file CURRENT).
// git init's directory is initOperand's.
var gitWriteOperands = map[string]bool{"merge-file": true}

// gitConfigWrite reports git subcommands that rewrite the repository's
// configuration (.git/config, a protected path) as a side effect: remotes,
// upstreams and tracking branches, branch renames and deletions (their
// sections), sparse checkout, init on an existing repository, submodules.
func gitConfigWrite(sub string, args []xword) bool {
	first := ""
	for _, a := range args {
		if a.Kind != Literal || !strings.HasPrefix(a.Value, "-") {
			first = a.Value
			break
		}
	}
	switch sub {
	case "remote":
		switch first {
		case "", "show", "get-url", "-v", "--verbose":
			return false
		}
		return true
	case "sparse-checkout", "init":
		return true
	case "submodule":
		switch first {
		case "", "status", "summary", "foreach":
			return false
		}
		return true
	case "branch", "checkout", "switch":
		always := []string{"-u", "--set-upstream-to", "--unset-upstream", "-t", "--track", "--edit-description"}
		if sub == "branch" {
			always = append(always, "-m", "-M", "--move", "-d", "-D", "--delete", "-c", "-C", "--copy")
		}
		for _, a := range args {
			for _, o := range always {
				if a.Kind == Literal && optIs(a.Value, o) {
					return true
				}
			}
		}
		// A new branch started from a remote-tracking branch tracks it
		// (branch.autoSetupMerge): git branch x origin/main,
		// git checkout -b x origin/main.
		ops := 0
		for _, a := range args {
			if a.Kind != Literal {
				return true
			}
			if strings.HasPrefix(a.Value, "-") || a.Value == "--" {
				continue
			}
			if ops++; ops >= 2 && strings.Contains(a.Value, "/") {
				return true
			}
		}
	case "push", "pull":
		return hasArg(args, "-u") || hasArg(args, "--set-upstream")
	}
	return false
}
