package workspace

import (
	"context"
	"io/fs"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/cordon-sandbox/cordon/policy"
)

// walkVisit is called for every entry of a walk, in lexical order per
// directory. v is the read verdict on the entry's own path (links are not
// followed). It returns whether to descend into a directory entry and
// whether to stop the walk.
type walkVisit func(dh *dirHandle, e fs.DirEntry, abs, rel string, v *policy.Verdict) (descend, stop bool)

// walk visits the tree below dh depth first. Every directory is opened
// relative to its verified parent with O_NOFOLLOW, so a directory swapped
// for a link is skipped, never followed. Hidden entries (a leading ".")
// are skipped unless includeHidden. Directories that cannot be opened are
// skipped silently.
func (s *Session) walk(ctx context.Context, dh *dirHandle, rel string, includeHidden bool, visit walkVisit) (stopped bool, err error) {
	if err := ctx.Err(); err != nil {
		return true, err
	}
	if err := s.check("walk"); err != nil {
		return true, err
	}
	entries, err := dh.readDir()
	if err != nil {
		return false, nil // unreadable: nothing to list
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		name := e.Name()
		if !includeHidden && strings.HasPrefix(name, ".") {
			continue
		}
		abs := dh.child(name)
		erel := name
		if rel != "" {
			erel = rel + "/" + name
		}
		v := s.ws.checker.DecideResolved(abs, policy.Read)
		descend, stop := visit(dh, e, abs, erel, v)
		if stop {
			return true, nil
		}
		if !descend || !e.IsDir() {
			continue
		}
		child, err := dh.openChildDir(name)
		if err != nil {
			continue
		}
		stopped, err := s.walk(ctx, child, erel, includeHidden, visit)
		child.Close()
		if stopped || err != nil {
			return stopped, err
		}
	}
	return false, nil
}

// globMatcher returns a matcher for glob: a glob without "/" matches an
// entry's name at any depth; one with "/" matches the path relative to the
// directory searched. "" matches everything.
func globMatcher(glob string) (func(name, rel string) bool, error) {
	if glob == "" {
		return func(string, string) bool { return true }, nil
	}
	g := strings.TrimPrefix(glob, "./")
	if !doublestar.ValidatePattern(g) {
		return nil, &ArgumentError{Arg: "glob", Value: glob, Reason: "malformed glob pattern"}
	}
	if !strings.Contains(g, "/") {
		return func(name, _ string) bool {
			ok, _ := doublestar.Match(g, name)
			return ok
		}, nil
	}
	return func(_, rel string) bool {
		ok, _ := doublestar.Match(g, rel)
		return ok
	}, nil
}

// walkAllowed reports whether the walk may use an entry: an allow, or an
// ask decided by the same rule as an ask the user approved for the
// starting directory.
func walkAllowed(v *policy.Verdict, approved string) bool {
	switch v.Decision {
	case policy.Allow:
		return true
	case policy.Ask:
		return approved != "" && v.Rule == approved
	}
	return false
}
