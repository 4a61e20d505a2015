//go:build unix

package protectguard

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/gitdir"
)

// repair walks the trees again and undoes every difference from the
// baseline. The baseline stays as it was.
func (g *Guard) repair(ctx context.Context) ([]Violation, error) {
	cur, err := g.scan(ctx, g.base)
	if err != nil {
		return nil, err
	}
	vs, failed := g.apply(g.base, cur)
	for _, v := range vs {
		g.log.Debug("protectguard: repaired", "path", v.Path, "rule", v.Rule, "change", v.Change, "action", v.Action)
	}
	if failed {
		return vs, ErrRepairFailed
	}
	return vs, nil
}

// repairKnown checks and repairs only what the baseline knows — its git
// directories (their control entries; modules/ and worktrees/ walked)
// and its protected paths outside them — without a whole walk: the
// fallback when a walk fails. What the command created elsewhere (a new
// repository, a new protected name) is not found.
func (g *Guard) repairKnown(ctx context.Context) ([]Violation, error) {
	base := g.base
	sc := g.newScanner(ctx, base)
	sc.known = true
	sc.stream = true // only what it records counts
	treeOf := func(p string) string {
		for _, t := range g.trees {
			if abspath.Within(p, t) {
				return t
			}
		}
		return ""
	}
	for _, d := range slices.Sorted(maps.Keys(base.gitDirs)) {
		var st unix.Stat_t
		if sc.st.gitDirs[d] || unix.Lstat(d, &st) != nil || kindOf(uint32(st.Mode)) != kindDir {
			continue
		}
		l, err := sc.list(d, &st, true)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		if !l.gitDir {
			continue
		}
		sc.tree = treeOf(d)
		if err := sc.walkGitDir(d, l.children); err != nil {
			return nil, err
		}
	}
	var tops []string
	for _, p := range sortedKeys(base.entries) {
		b := base.entries[p]
		if b.gitDir != "" || underAny(p, tops) {
			continue
		}
		tops = append(tops, p)
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue
		}
		sc.tree = b.tree
		if err := sc.record(p, &st, b.rule); err != nil {
			return nil, err
		}
	}
	if err := sc.followPointers(); err != nil {
		return nil, err
	}
	// The listings and hashes read are not kept: the caches stay those
	// of the last whole walk.
	vs, _ := g.apply(base, sc.st)
	for _, v := range vs {
		g.log.Debug("protectguard: repaired (known paths only)", "path", v.Path, "rule", v.Rule, "change", v.Change, "action", v.Action)
	}
	return vs, nil
}

// apply makes the trees match base again, given their current state.
//
// failed reports that something planted could not be removed (a removal,
// a sweep, a sanitized config or a defused directory failed): the repair
// is then incomplete. A restoration that fails is reported only.
func (g *Guard) apply(base, cur *state) (vs []Violation, failed bool) {
	add := func(path, rule, change string, err error, action string) {
		if err != nil {
			action = "failed: " + err.Error()
		}
		vs = append(vs, Violation{Path: path, Rule: rule, Change: change, Action: action})
	}

	// Defused: directories of the baseline that became git directories
	// lose their HEAD (renamed aside, not removed: it may be a file of
	// the user's), and git no longer takes them for repositories.
	for _, dir := range slices.Sorted(maps.Keys(cur.defused)) {
		aside := tempName("HEAD")
		err := renameIn(cur.defused[dir], abspath.Join(dir, "HEAD"), aside)
		if err != nil {
			failed = true
		}
		add(dir, gitStructureRule, "became a git directory (HEAD, objects/ and refs/, or commondir, in a directory that was not one)", err, "HEAD renamed to "+aside+": git no longer takes it for a repository")
	}

	// Sweeps: flooded directories lose every entry the baseline lacks.
	for _, dir := range slices.Sorted(maps.Keys(cur.sweeps)) {
		sw := cur.sweeps[dir]
		n, err := sweepDir(sw.tree, dir, func(name string) bool {
			p := abspath.Join(dir, name)
			switch {
			case !sw.git:
				return base.entries[p] == nil
			case gitdir.IsData(name):
				return false
			case sw.newRepo:
				return gitdir.NewRepoAction(name) == "remove"
			}
			return base.entries[p] == nil
		})
		if err != nil {
			failed = true
		}
		add(dir, sw.rule, fmt.Sprintf("flooded (%d entries created in it)", n), err, "every entry the baseline did not have removed")
	}

	// Removals: what is new, or of another type than it was, goes with
	// its subtree.
	curPaths := sortedKeys(cur.entries)
	gone := map[string]bool{} // removed by this repair
	var removedTops []string
	for _, p := range curPaths {
		if underAny(p, removedTops) {
			gone[p] = true
			continue
		}
		c, b := cur.entries[p], base.entries[p]
		change := ""
		switch {
		case b == nil:
			change = "created"
		case b.kind != c.kind:
			change = "replaced"
		case c.kind == kindSymlink && c.target != b.target:
			change = "replaced"
		case c.kind == kindOther:
			change = "replaced"
		}
		if change == "" {
			continue
		}
		if b == nil && c.gitDir != "" && !base.gitDirs[c.gitDir] {
			// A control entry of a git directory created by the
			// command: a new repository keeps what it needs, with
			// its config reduced to inert keys (package gitdir).
			switch gitdir.NewRepoAction(c.gitName) {
			case "keep":
				continue
			case "sanitize":
				if p == abspath.Join(c.gitDir, "config") && c.kind == kindFile {
					if removed, err := g.sanitizeConfig(p, c); err != nil || len(removed) > 0 {
						failed = failed || err != nil
						add(p, c.rule, "created in a new repository", err, "reduced to inert keys (removed "+strings.Join(removed, ", ")+")")
					}
					continue
				}
			}
		}
		err := removePath(c.tree, p)
		failed = failed || err != nil
		gone[p] = true
		removedTops = append(removedTops, p)
		if change == "created" {
			what := c.kind.String()
			if c.kind == kindDir && !c.shallow {
				n := 0
				for _, q := range curPaths {
					if q != p && abspath.Within(q, p) {
						n++
					}
				}
				what = fmt.Sprintf("directory with %d entries", n)
			}
			add(p, c.rule, "created ("+what+")", err, "removed")
			continue
		}
		if b.kind == kindFile && !b.kept {
			add(p, c.rule, change, err, "removed (no copy was kept to restore it)")
			continue
		}
		if err != nil {
			add(p, c.rule, change, err, "")
		}
		// Restored below; the violation is reported there.
	}

	// Restorations, shallowest first: what is missing is recreated, what
	// changed is rewritten.
	var restoredTops []string
	for _, p := range sortedKeys(base.entries) {
		b := base.entries[p]
		c := cur.entries[p]
		if gone[p] {
			c = nil
		}
		if c == nil {
			if b.kind == kindOther || (b.kind == kindFile && !b.kept) {
				if cur.entries[p] == nil && !underAny(p, restoredTops) {
					add(p, b.rule, "removed", errors.New("cannot recreate a "+b.kind.String()+" without a copy"), "")
				}
				continue
			}
			err := g.create(p, b)
			if underAny(p, restoredTops) {
				if err != nil {
					add(p, b.rule, "removed", err, "")
				}
				continue
			}
			restoredTops = append(restoredTops, p)
			change := "removed"
			if cur.entries[p] != nil {
				change = "replaced"
			}
			add(p, b.rule, change, err, "restored")
			continue
		}
		switch {
		case b.kind == kindFile && (c.size != b.size || c.hash != b.hash):
			if !b.kept {
				err := removePath(c.tree, p)
				failed = failed || err != nil
				add(p, b.rule, "modified", err, "removed (no copy was kept to restore it)")
				continue
			}
			add(p, b.rule, "modified", g.create(p, b), "restored")
		case (b.kind == kindFile || b.kind == kindDir) && c.perm != b.perm:
			add(p, b.rule, fmt.Sprintf("mode changed (%04o → %04o)", b.perm, c.perm), setMode(b.tree, p, b), "restored")
		case (b.kind == kindFile || b.kind == kindDir) && os.Geteuid() == 0 && (c.uid != b.uid || c.gid != b.gid):
			add(p, b.rule, "owner changed", setMode(b.tree, p, b), "restored")
		}
	}
	return vs, failed
}

func sortedKeys(m map[string]*entry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func underAny(p string, tops []string) bool {
	for _, t := range tops {
		if p != t && abspath.Within(p, t) {
			return true
		}
	}
	return false
}

// components splits path, which lies in tree, into the components below
// the tree.
func components(tree, path string) ([]string, error) {
	if !abspath.Within(path, tree) || path == tree {
		return nil, fmt.Errorf("%q is not below the watched tree %q", path, tree)
	}
	rest := strings.TrimPrefix(path[len(tree):], "/")
	return strings.Split(rest, "/"), nil
}

// openTree opens a watched tree's root, refusing a path on which a
// command swapped a directory for a symbolic link.
func openTree(tree string) (int, error) {
	fd, err := openNoLinks(tree, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: tree, Err: err}
	}
	return fd, nil
}

// openParent opens the directory holding path, one component at a time,
// never following a symbolic link. With create set, a missing component
// is created and a component that is not a directory (a symbolic link, a
// file) is removed and replaced by an empty directory.
func openParent(tree, path string, create bool) (fd int, name string, err error) {
	comps, err := components(tree, path)
	if err != nil {
		return -1, "", err
	}
	fd, err = openTree(tree)
	if err != nil {
		return -1, "", err
	}
	for _, c := range comps[:len(comps)-1] {
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EACCES) {
			// A command made an ancestor unreadable: make it usable
			// by its owner again, or the repair could be defeated.
			var st unix.Stat_t
			if unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && kindOf(uint32(st.Mode)) == kindDir {
				_ = unix.Fchmodat(fd, c, (uint32(st.Mode)&0o7777)|0o700, 0)
				next, err = unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if err != nil && create {
			var st unix.Stat_t
			switch serr := unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW); {
			case errors.Is(serr, unix.ENOENT):
			case serr == nil && kindOf(uint32(st.Mode)) != kindDir:
				if err := removeAt(fd, c); err != nil {
					unix.Close(fd)
					return -1, "", err
				}
			default:
				unix.Close(fd)
				return -1, "", &os.PathError{Op: "open", Path: path, Err: err}
			}
			if err := unix.Mkdirat(fd, c, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, "", &os.PathError{Op: "mkdir", Path: path, Err: err}
			}
			next, err = unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		unix.Close(fd)
		if err != nil {
			return -1, "", &os.PathError{Op: "open", Path: path, Err: err}
		}
		fd = next
	}
	return fd, comps[len(comps)-1], nil
}

// removePath removes path (a subtree, for a directory) without following
// symbolic links. A path that is already gone is not an error.
func removePath(tree, path string) error {
	fd, name, err := openParent(tree, path, false)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return nil // an ancestor changed meanwhile: path is not there any more
		}
		return err
	}
	defer unix.Close(fd)
	if err := removeAt(fd, name); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// openDir opens the directory path in tree (the tree itself included)
// without following a symbolic link.
func openDir(tree, path string) (int, error) {
	if path == tree {
		return openTree(tree)
	}
	pfd, name, err := openParent(tree, path, false)
	if err != nil {
		return -1, err
	}
	fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	unix.Close(pfd)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// renameIn renames path (in tree) to name in the same directory, without
// following a symbolic link on the way.
func renameIn(tree, path, name string) error {
	fd, base, err := openParent(tree, path, false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Renameat(fd, base, fd, name); err != nil {
		return &os.PathError{Op: "rename", Path: path, Err: err}
	}
	return nil
}

// sweepDir removes, in the directory path (in tree), every entry for
// which remove says so, reading the directory in chunks, and returns how
// many it removed.
func sweepDir(tree, path string, remove func(name string) bool) (int, error) {
	// Entries removed while the directory is read may make a pass miss
	// others: passes repeat until one removes nothing.
	total := 0
	for range 8 {
		n, err := sweepPass(tree, path, remove)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, nil
}

func sweepPass(tree, path string, remove func(name string) bool) (int, error) {
	fd, err := openDir(tree, path)
	if err != nil {
		return 0, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	n := 0
	for {
		names, err := f.Readdirnames(4096)
		var first error
		for _, c := range names {
			if !remove(c) {
				continue
			}
			if rerr := removeAt(fd, c); rerr != nil && !errors.Is(rerr, unix.ENOENT) {
				first = cmp.Or(first, error(&os.PathError{Op: "remove", Path: abspath.Join(path, c), Err: rerr}))
				continue
			}
			n++
		}
		if first != nil {
			return n, first
		}
		if errors.Is(err, io.EOF) || len(names) == 0 {
			return n, nil
		}
		if err != nil {
			return n, &os.PathError{Op: "readdir", Path: path, Err: err}
		}
	}
}

// removeAt removes name in the directory dirfd, recursively, going on
// past an entry it cannot remove (the first error is returned). It holds
// one descriptor per level down to maxRemoveDepth; a subtree deeper than
// that is moved up into the directory being removed and removed from
// there, so a chain of any depth cannot exhaust the descriptors and stop
// the removal before what it was for.
func removeAt(dirfd int, name string) error {
	fd, err := openForRemoval(dirfd, name)
	if fd < 0 {
		return err
	}
	var first error
	for range maxFlattenPasses {
		moved, err := emptyDir(fd, fd, 1)
		first = cmp.Or(first, err)
		if !moved {
			break
		}
	}
	unix.Close(fd)
	return cmp.Or(first, rmdirAt(dirfd, name))
}

// maxRemoveDepth is how deep removeAt descends before it moves a subtree
// up; maxFlattenPasses bounds how often it does.
const (
	maxRemoveDepth   = 64
	maxFlattenPasses = 1 << 16
)

// openForRemoval unlinks name in dirfd when it is not a directory
// (returning -1 and the error), or opens the directory (a command may have
// made it unreadable: it is made usable by its owner again).
func openForRemoval(dirfd int, name string) (int, error) {
	err := unix.Unlinkat(dirfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return -1, nil
	}
	var st unix.Stat_t
	if serr := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr != nil || kindOf(uint32(st.Mode)) != kindDir {
		if errors.Is(err, unix.EACCES) {
			return -1, retryWritable(dirfd, func() error { return unix.Unlinkat(dirfd, name, 0) })
		}
		return -1, err
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) {
		_ = unix.Fchmodat(dirfd, name, 0o700, 0)
		fd, err = unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return -1, err
	}
	return fd, nil
}

// rmdirAt removes the empty directory name in dirfd.
func rmdirAt(dirfd int, name string) error {
	err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
	if errors.Is(err, unix.EACCES) {
		return retryWritable(dirfd, func() error { return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR) })
	}
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// emptyDir removes every entry of the directory fd, depth levels below
// top, reading it in chunks and again until a pass finds nothing; moved
// reports a subtree moved up into top.
func emptyDir(fd, top, depth int) (moved bool, first error) {
	for range 16 {
		dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return moved, cmp.Or(first, err)
		}
		f := os.NewFile(uintptr(dfd), ".")
		n := 0
		for {
			names, rerr := f.Readdirnames(4096)
			for _, name := range names {
				m, err := removeEntry(fd, name, top, depth)
				if errors.Is(err, unix.EACCES) {
					err = retryWritable(fd, func() error {
						var e error
						m, e = removeEntry(fd, name, top, depth)
						return e
					})
				}
				moved = moved || m
				if err != nil {
					first = cmp.Or(first, err)
					continue
				}
				n++
			}
			if rerr != nil || len(names) == 0 {
				break
			}
		}
		f.Close()
		if n == 0 {
			break
		}
	}
	return moved, first
}

// removeEntry removes name in dirfd (depth levels below top), or moves it
// into top when it is a directory too deep to descend into.
func removeEntry(dirfd int, name string, top, depth int) (moved bool, err error) {
	if depth >= maxRemoveDepth {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && kindOf(uint32(st.Mode)) == kindDir {
			if err := unix.Renameat(dirfd, name, top, tempName("deep")); err == nil {
				return true, nil
			}
		}
	}
	fd, err := openForRemoval(dirfd, name)
	if fd < 0 {
		return false, err
	}
	moved, first := emptyDir(fd, top, depth+1)
	unix.Close(fd)
	return moved, cmp.Or(first, rmdirAt(dirfd, name))
}

// retryWritable makes the directory dirfd writable by its owner and
// retries op (a command may have made a protected directory read-only).
func retryWritable(dirfd int, op func() error) error {
	var st unix.Stat_t
	if err := unix.Fstat(dirfd, &st); err != nil {
		return err
	}
	if err := unix.Fchmod(dirfd, (uint32(st.Mode)&0o7777)|0o700); err != nil {
		return err
	}
	return op()
}

// sanitizeConfig rewrites the git config at path (state c) reduced to
// inert keys, returning the keys removed. It rewrites even when nothing
// was removed, so that git reads exactly what the sanitizer wrote.
func (g *Guard) sanitizeConfig(path string, c *entry) ([]string, error) {
	data := c.data
	if !c.kept {
		var err error
		if data, err = readFileAt(c.tree, path, g.opts.MaxFileSize); err != nil {
			return []string{"(unread config)"}, removePath(c.tree, path)
		}
	}
	clean, removed := gitdir.Sanitize(data)
	if string(clean) == string(data) {
		return nil, nil
	}
	b := &entry{kind: kindFile, perm: c.perm & 0o666, uid: c.uid, gid: c.gid, data: clean, kept: true, tree: c.tree}
	return removed, g.create(path, b)
}

// readFileAt reads path, in tree, without following a symbolic link,
// refusing files larger than max.
func readFileAt(tree, path string, max int64) ([]byte, error) {
	fd, name, err := openParent(tree, path, false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	ffd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(ffd), path)
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return data, err
}

// create writes b at path: a directory, a file from its copy (to a
// temporary name, renamed over), or a symbolic link, replacing what is
// there.
func (g *Guard) create(path string, b *entry) error {
	fd, name, err := openParent(b.tree, path, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	switch b.kind {
	case kindDir:
		err := unix.Mkdirat(fd, name, 0o700)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return &os.PathError{Op: "mkdir", Path: path, Err: err}
		}
		return chmodOwn(fd, name, b, path)
	case kindSymlink:
		tmp := tempName(name)
		if err := unix.Symlinkat(b.target, fd, tmp); err != nil {
			return &os.PathError{Op: "symlink", Path: path, Err: err}
		}
		if os.Geteuid() == 0 {
			_ = unix.Fchownat(fd, tmp, int(b.uid), int(b.gid), unix.AT_SYMLINK_NOFOLLOW)
		}
		return renameOver(fd, tmp, name, path)
	case kindFile:
		tmp := tempName(name)
		wfd, err := unix.Openat(fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return &os.PathError{Op: "create", Path: path, Err: err}
		}
		f := os.NewFile(uintptr(wfd), tmp)
		_, werr := f.Write(b.data)
		if werr == nil {
			werr = f.Chmod(os.FileMode(b.perm & 0o777))
			if b.perm&^0o777 != 0 {
				werr = unix.Fchmod(wfd, b.perm)
			}
		}
		if werr == nil && os.Geteuid() == 0 {
			werr = f.Chown(int(b.uid), int(b.gid))
		}
		cerr := f.Close()
		if werr == nil {
			werr = cerr
		}
		if werr != nil {
			_ = unix.Unlinkat(fd, tmp, 0)
			return &os.PathError{Op: "write", Path: path, Err: werr}
		}
		return renameOver(fd, tmp, name, path)
	}
	return fmt.Errorf("cannot recreate %s %q", b.kind, path)
}

// renameOver renames tmp to name in dirfd, removing a directory in the way.
func renameOver(dirfd int, tmp, name, path string) error {
	err := unix.Renameat(dirfd, tmp, dirfd, name)
	if err != nil && (errors.Is(err, unix.EISDIR) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST)) {
		if rerr := removeAt(dirfd, name); rerr == nil {
			err = unix.Renameat(dirfd, tmp, dirfd, name)
		}
	}
	if err != nil {
		_ = removeAt(dirfd, tmp)
		return &os.PathError{Op: "rename", Path: path, Err: err}
	}
	return nil
}

// setMode restores path's mode and (as root) owner.
func setMode(tree, path string, b *entry) error {
	fd, name, err := openParent(tree, path, false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return chmodOwn(fd, name, b, path)
}

// chmodOwn sets name's mode and (as root) owner, refusing to act on a
// symbolic link.
func chmodOwn(dirfd int, name string, b *entry, path string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if kindOf(uint32(st.Mode)) == kindSymlink {
		return &os.PathError{Op: "chmod", Path: path, Err: unix.ELOOP}
	}
	if err := unix.Fchmodat(dirfd, name, b.perm, 0); err != nil {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	if os.Geteuid() == 0 && (st.Uid != b.uid || st.Gid != b.gid) {
		if err := unix.Fchownat(dirfd, name, int(b.uid), int(b.gid), unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &os.PathError{Op: "chown", Path: path, Err: err}
		}
	}
	return nil
}

func tempName(name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "." + name + ".cordon-restore-" + hex.EncodeToString(b[:])
}
