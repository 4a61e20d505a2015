// Package gitdir knows git's repository structure well enough to protect
// it by structure rather than by name: which directories are git
// directories, which of their entries git writes during ordinary work
// (data), and which it obeys (control: config, hooks, commondir, …), and
// how to reduce a new repository's config to keys that run nothing.
//
// A directory is a git directory when it holds HEAD and either objects/
// and refs/, or a commondir file — the test git itself applies
// (setup.c: is_git_directory), so a git directory not named .git (a bare
// repository, a --separate-git-dir target, modules/NAME, worktrees/NAME)
// is recognised by its content, whatever its name or location.
//
// Config files are parsed and written with go-git's
// plumbing/format/config (a maintained decoder and encoder for git's
// config format) rather than by hand. Sanitizing re-encodes only the
// allow-listed keys, so a difference between go-git's parser and git's
// can only drop a key, never add one: git reads exactly what was written.
package gitdir

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// IsGitDir reports whether a directory is a git directory, given the
// names of its entries. Their types are not checked: git follows a
// symbolic objects/ or refs/, so a link counts like a directory.
func IsGitDir(names map[string]bool) bool {
	if _, ok := names["HEAD"]; !ok {
		return false
	}
	if _, ok := names["commondir"]; ok {
		return true
	}
	_, objects := names["objects"]
	_, refs := names["refs"]
	return objects && refs
}

// dataNames are the entries of a git directory that git writes during
// ordinary work (commit, fetch, merge, rebase, gc, worktree and
// submodule commands) and that run nothing on the host. Everything else
// in a git directory — config, config.worktree, hooks/, commondir,
// info/ (attributes select filter drivers), remotes/, branches/, and any
// file a future git adds — is control and is protected. modules/ and
// worktrees/ hold further git directories, recognised by content.
var dataNames = map[string]bool{
	"objects": true, "refs": true, "logs": true, "index": true, "HEAD": true,
	"ORIG_HEAD": true, "FETCH_HEAD": true, "MERGE_HEAD": true, "MERGE_MSG": true,
	"MERGE_MODE": true, "MERGE_RR": true, "MERGE_AUTOSTASH": true, "AUTO_MERGE": true,
	"CHERRY_PICK_HEAD": true, "REVERT_HEAD": true, "REBASE_HEAD": true, "BISECT_HEAD": true,
	"BISECT_LOG": true, "BISECT_START": true, "BISECT_TERMS": true, "BISECT_NAMES": true,
	"BISECT_EXPECTED_REV": true, "BISECT_ANCESTORS_OK": true, "BISECT_FIRST_PARENT": true,
	"SQUASH_MSG": true, "COMMIT_EDITMSG": true, "TAG_EDITMSG": true, "NOTES_MERGE_PARTIAL": true,
	"NOTES_MERGE_REF": true, "NOTES_MERGE_WORKTREE": true, "packed-refs": true, "shallow": true,
	"description": true, "rebase-merge": true, "rebase-apply": true, "sequencer": true,
	"rr-cache": true, "modules": true, "worktrees": true, "lfs": true, "gc.log": true,
	"gc.pid": true, "gitk.cache": true, "FETCH_PACK": true, "reftable": true,
	"gitdir": true, // worktrees/NAME/gitdir: where the worktree lives (informational)
	"locked": true, // worktrees/NAME/locked
}

// IsData reports whether name, an entry directly in a git directory, is
// data git writes in ordinary work (see dataNames); lock files and
// temporary index files are data too. Anything else is control.
func IsData(name string) bool {
	if dataNames[name] {
		return true
	}
	if strings.HasSuffix(name, ".lock") && !strings.HasPrefix(name, "config") && !strings.HasPrefix(name, "commondir") {
		return true
	}
	return strings.HasPrefix(name, "next-index-") || strings.HasPrefix(name, "sharedindex.") ||
		strings.HasPrefix(name, "index.") || strings.HasPrefix(name, "tmp_")
}

// inert lists the config keys a new repository keeps, as
// "section.key" or "section.*.key" (any subsection), lower case. None of
// them names a program, a hook, a filter, an include or an extension
// that changes where git reads config.
var inert = []string{
	"core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
	"core.ignorecase", "core.symlinks", "core.precomposeunicode", "core.autocrlf", "core.eol",
	"core.safecrlf", "core.quotepath", "core.abbrev", "core.sharedrepository",
	"extensions.objectformat", "extensions.refstorage", "extensions.noop",
	"remote.*.url", "remote.*.pushurl", "remote.*.fetch", "remote.*.push", "remote.*.tagopt",
	"remote.*.prune", "remote.*.mirror", "remote.*.promisor", "remote.*.partialclonefilter",
	"branch.*.remote", "branch.*.merge", "branch.*.rebase", "branch.*.pushremote", "branch.*.description",
	"submodule.*.url", "submodule.*.active", "submodule.*.branch",
	"user.name", "user.email", "init.defaultbranch", "pull.rebase", "pull.ff",
	"fetch.prune", "push.default", "gc.auto", "lfs.repositoryformatversion", "clone.defaultremotename",
	"maintenance.auto", "index.version",
}

// Inert reports whether the key section[.subsection].key is on the
// allow-list of keys a new repository keeps.
func Inert(section, subsection, key string) bool {
	k := strings.ToLower(section) + "." + strings.ToLower(key)
	if subsection != "" {
		k = strings.ToLower(section) + ".*." + strings.ToLower(key)
	}
	return slices.Contains(inert, k)
}

// Sanitize parses a git config and returns it reduced to the inert keys,
// and the keys it removed ("core.fsmonitor", `remote "x".uploadpack`).
// A config go-git cannot parse is reduced to nothing, reported as the
// single removed key "(unparseable config)".
func Sanitize(data []byte) (out []byte, removed []string) {
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return nil, []string{"(unparseable config: " + err.Error() + ")"}
	}
	keep := gitconfig.New()
	for _, s := range cfg.Sections {
		ks := &gitconfig.Section{Name: strings.ToLower(s.Name)}
		for _, o := range s.Options {
			if Inert(s.Name, "", o.Key) && safeValue(o.Value) {
				ks.Options = append(ks.Options, &gitconfig.Option{Key: strings.ToLower(o.Key), Value: o.Value})
			} else {
				removed = append(removed, strings.ToLower(s.Name)+"."+strings.ToLower(o.Key))
			}
		}
		for _, ss := range s.Subsections {
			kss := &gitconfig.Subsection{Name: ss.Name}
			for _, o := range ss.Options {
				if Inert(s.Name, ss.Name, o.Key) && safeValue(o.Value) && safeValue(ss.Name) {
					kss.Options = append(kss.Options, &gitconfig.Option{Key: strings.ToLower(o.Key), Value: o.Value})
				} else {
					removed = append(removed, fmt.Sprintf("%s %q.%s", strings.ToLower(s.Name), ss.Name, strings.ToLower(o.Key)))
				}
			}
			if len(kss.Options) > 0 {
				ks.Subsections = append(ks.Subsections, kss)
			}
		}
		if len(ks.Options) > 0 || len(ks.Subsections) > 0 {
			keep.Sections = append(keep.Sections, ks)
		}
	}
	var buf bytes.Buffer
	if err := gitconfig.NewEncoder(&buf).Encode(keep); err != nil {
		return nil, append(removed, "(unencodable config: "+err.Error()+")")
	}
	return buf.Bytes(), removed
}

// safeValue refuses values and subsection names with control characters,
// which no inert key needs and which only make parsers disagree.
func safeValue(v string) bool {
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// NewRepoAction says what the guard does with an entry (named by its
// first component below the git directory) of a git directory that did
// not exist before the command: "sanitize" the config, "keep" data (see
// IsData) and the control entries git itself creates in a new repository
// or worktree — commondir and info/, which a new repository needs, and
// the remotes/ and branches/ files older templates made, none of which
// runs anything (commondir can only point at another git directory,
// itself protected or sanitized) — and "remove" everything else: hooks,
// config.worktree (read only with an extension a sanitized config no
// longer enables), a nested .git, and any name git does not create, which
// a future git might obey.
func NewRepoAction(name string) string {
	switch {
	case name == "config":
		return "sanitize"
	case IsData(name), newRepoKeep[name]:
		return "keep"
	}
	return "remove"
}

// newRepoKeep are the control entries a new repository keeps.
var newRepoKeep = map[string]bool{"commondir": true, "info": true, "remotes": true, "branches": true}

// BelowDotGit reports whether path has a component named .git (in any
// case): git refuses such paths in an index, so nothing there is a
// submodule or a work tree the host's git would look into.
func BelowDotGit(path string) bool {
	for c := range strings.SplitSeq(path, "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}
