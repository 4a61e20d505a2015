//go:build unix

package protectguard

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/gitdir"
	"github.com/cordon-sandbox/cordon/internal/pathwatch"
	"github.com/cordon-sandbox/cordon/policy"
)

// kind is the type of a file system entry.
type kind uint8

const (
	kindFile kind = iota
	kindDir
	kindSymlink
	kindOther // device, socket, FIFO
)

func (k kind) String() string {
	switch k {
	case kindFile:
		return "file"
	case kindDir:
		return "directory"
	case kindSymlink:
		return "symbolic link"
	}
	return "special file"
}

func kindOf(mode uint32) kind {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return kindFile
	case unix.S_IFDIR:
		return kindDir
	case unix.S_IFLNK:
		return kindSymlink
	}
	return kindOther
}

// entry is the recorded state of one protected path (a protected top or
// anything below it).
type entry struct {
	kind     kind
	perm     uint32 // mode & 07777
	uid, gid uint32
	size     int64
	ino, dev uint64
	mtime    int64
	ctime    int64
	hash     [32]byte // files
	data     []byte   // files: the content, when kept
	kept     bool
	target   string // symbolic links
	rule     string // the protect rule covering it
	tree     string // the watched tree it lies in
	// gitDir is the git directory whose control entry this is (or lies
	// below), gitName that entry's name in it; empty for paths protected
	// by name only.
	gitDir, gitName string
	// shallow: a new directory recorded without its subtree (the repair
	// removes it whole).
	shallow bool
}

// sweep is a directory that gained more new entries than a repair
// records one by one (floodEntries): the repair lists it again and
// removes every entry the baseline does not have (for a git directory,
// every new control entry), without holding them in memory.
type sweep struct {
	tree, rule string
	// git: the directory is a git directory; newRepo: one that is not
	// in the baseline.
	git, newRepo bool
}

// state maps absolute paths to entries: every protected top found and
// everything below the tops that are directories.
type state struct {
	entries map[string]*entry
	// gitDirs holds every git directory found (by content, see package
	// gitdir), protected or not.
	gitDirs map[string]bool
	// pointers are the .git files and commondir files read, with their
	// stat when read: what they say decides which git directories are
	// walked, and a write through a hard link elsewhere or a mapping
	// sends their directory no event (unchanged checks them).
	pointers map[string]unix.Stat_t
	// sweeps are the flooded directories a repair's walk found.
	sweeps map[string]sweep
	// dirs holds the identity of every directory a baseline's walk
	// listed (up to maxDirIDs; dirsPartial past it): a repair tells a new
	// directory from one that existed by it.
	dirs        map[devIno]struct{}
	dirsPartial bool
	// defused are directories of the baseline that became git
	// directories during the command (their tree): a repair takes them
	// out of git's reach instead of judging their entries as a new
	// repository's, which would remove the user's files.
	defused map[string]string
}

// devIno names a directory.
type devIno struct{ dev, ino uint64 }

// maxDirIDs bounds the directories a baseline remembers.
const maxDirIDs = 4 << 20

// racyWindow is how recent a change time must be for a cached listing or
// hash to be read again: file system timestamps come from a coarse clock,
// so a change within the same tick as the last read would leave them
// unchanged.
const racyWindow = int64(time.Second)

// cache keeps listings and hashes between walks.
type cache struct {
	dirs  map[string]*dirListing
	files map[string]*fileHash
}

func newCache() *cache {
	return &cache{dirs: map[string]*dirListing{}, files: map[string]*fileHash{}}
}

type dirListing struct {
	ino, dev uint64
	ctime    int64
	readAt   int64
	children []child
	// gitDir reports whether the directory is a git directory by content.
	gitDir bool
	// flood is set, in a repair, for a directory of the baseline that
	// gained more than floodEntries entries: children holds only the
	// baseline's (the repair sweeps the rest), and the listing is not
	// cached.
	flood bool
}

// child is a directory entry with what the walk decided about it, valid
// as long as the listing is.
type child struct {
	name string
	kind kind
	// rule is the index of the first protect rule matching the child, or
	// -1; below reports whether a rule may match below it (directories).
	rule  int
	below bool
}

type fileHash struct {
	ino, dev           uint64
	size, mtime, ctime int64
	readAt             int64
	hash               [32]byte
	data               []byte
	kept               bool
}

func statTimes(st *unix.Stat_t) (mtime, ctime int64) {
	return st.Mtim.Nano(), st.Ctim.Nano()
}

// scanner is one walk.
type scanner struct {
	ctx    context.Context
	g      *Guard
	st     *state
	now    int64
	count  int
	budget int64
	tree   string
	// gitDir and gitName are set while recording a git directory's
	// control entry (see walkGitDir).
	gitDir, gitName string
	// pointers are the targets named by .git files and commondir files,
	// scanned as git directories wherever they lie in the trees (in a
	// data directory of another repository, say, which walks skip).
	pointers []string
	newDirs  map[string]*dirListing
	newFiles map[string]*fileHash
	// watched: every directory listed so far is watched (Options.Watcher).
	watched bool
	// followed are the pointer targets this walk has listed.
	followed map[string]bool
	// seen counts the directory entries listed; held is the most
	// children one listing held.
	seen, held int
	// recording is set while record lists a directory it records.
	recording bool
	// nameMemo is ruleFor's memory of the bare-name rules' verdicts.
	nameMemo map[string]int
	// known is set for repairKnown's partial scan: no data is walked
	// but modules/ and worktrees/.
	known bool
	// stream is set for a walk beyond Options.MaxEntries: no listing is
	// cached or kept, plain files are not held in memory, and only the
	// entries recorded count towards the bound.
	stream bool
	// base is the baseline a repair compares with (nil for a baseline's
	// own walk): what the repair will remove whole is not recorded below
	// its top.
	base *state
}

// floodEntries is how many new entries a directory of the baseline may
// gain before a repair stops recording them one by one and replaces the
// whole directory from the baseline instead.
const floodEntries = 4096

// newScanner returns a scanner for one walk, comparing with base (nil for
// a baseline).
func (g *Guard) newScanner(ctx context.Context, base *state) *scanner {
	return &scanner{
		ctx: ctx, g: g, st: &state{entries: map[string]*entry{}, gitDirs: map[string]bool{}, pointers: map[string]unix.Stat_t{}, sweeps: map[string]sweep{},
			dirs: map[devIno]struct{}{}, defused: map[string]string{}},
		now: time.Now().UnixNano(), budget: g.opts.MaxCopyBytes,
		newDirs: map[string]*dirListing{}, newFiles: map[string]*fileHash{},
		base: base,
	}
}

// removedWhole reports whether the directory path, about to be recorded
// with the scanner's current git attribution, is new and will be removed
// with its subtree by the repair: not in the baseline, and not an entry a
// new repository keeps.
func (sc *scanner) removedWhole(path string) bool {
	if sc.base == nil || sc.base.entries[path] != nil {
		return false
	}
	if sc.gitDir != "" && !sc.base.gitDirs[sc.gitDir] && gitdir.NewRepoAction(sc.gitName) != "remove" {
		return false
	}
	return true
}

// existedPlain reports whether dir, a git directory by content that the
// baseline does not have as one, is a directory the baseline listed (or
// may have: past maxDirIDs): it became a git directory during the
// command. Only in a repair.
func (sc *scanner) existedPlain(dir string, st *unix.Stat_t) bool {
	if sc.base == nil || sc.base.gitDirs[dir] {
		return false
	}
	if sc.base.dirsPartial {
		return true
	}
	_, ok := sc.base.dirs[devIno{uint64(st.Dev), st.Ino}]
	return ok
}

// sweepable reports whether the repair removes name, an entry of the git
// directory dir: a control entry the baseline does not have (for a new
// repository, one it does not keep).
func (sc *scanner) sweepable(dir, name string) bool {
	if gitdir.IsData(name) {
		return false
	}
	if !sc.base.gitDirs[dir] {
		return gitdir.NewRepoAction(name) == "remove"
	}
	return sc.base.entries[abspath.Join(dir, name)] == nil
}

// scan walks every tree and returns the protected paths' state — the last
// walk's, when the watcher saw no change in any directory it listed since
// and every protected entry still has the stat it had. base is the
// baseline a repair compares with (nil for a baseline's own walk). A walk
// that exceeds Options.MaxEntries is done again streaming, without
// caches, bounded by the entries it records.
func (g *Guard) scan(ctx context.Context, base *state) (*state, error) {
	var gen uint64
	w := g.opts.Watcher
	if w != nil {
		gen = w.Gen()
		if g.last != nil && g.lastOK && (g.lastGen == gen || g.inert(w)) && g.last.unchanged() {
			g.lastGen = gen
			return g.last, nil
		}
	}
	var st *state
	err := ErrLimit
	if !g.stream {
		sc := g.newScanner(ctx, base)
		sc.watched = w != nil
		st, err = sc.scan()
		g.walks++
		g.listed, g.held = sc.seen, sc.held
		g.last = nil
		if err == nil && w != nil {
			g.last, g.lastGen, g.lastOK = st, gen, sc.watched
		}
	}
	if errors.Is(err, ErrLimit) {
		// Beyond the bound of a cached walk: walk streaming, bounded
		// only by the entries it records (and the context). Later
		// scans stream at once while the trees stay beyond the bound.
		if !g.stream {
			g.log.Debug("protectguard: the trees exceed the walk's bound; walking without caches", "limit", g.opts.MaxEntries)
		}
		g.last = nil
		sc := g.newScanner(ctx, base)
		sc.stream = true
		st, err = sc.scan()
		g.walks++
		g.listed, g.held = sc.seen, sc.held
		g.stream = err == nil && sc.seen > g.opts.MaxEntries
	}
	return st, err
}

// inert reports whether the events since the last walk leave its state
// as it was: each names an entry of a directory the walk listed that is
// now as the listing has it and that nothing the guard records depends
// on — absent as it was (a temporary file created and removed, a mount
// backend's placeholder made for a command and removed after it), or an
// ordinary file that no protect rule matches, not a .git pointer file and
// not recorded, whose content changed. Anything else, or events lost,
// means a walk.
func (g *Guard) inert(w *pathwatch.Watcher) bool {
	evs, ok := w.Since(g.lastGen)
	if !ok {
		return false
	}
	for _, ev := range evs {
		if ev.Mask&pathwatch.Mount != 0 {
			// A mount elsewhere (a container's) changes nothing here.
			if abspath.WithinAny(ev.Dir, g.trees) || slices.ContainsFunc(g.trees, func(t string) bool { return abspath.Within(t, ev.Dir) }) {
				return false
			}
			continue
		}
		if ev.Dir == "" || ev.Name == "" {
			return false // a directory itself deleted or moved
		}
		l := g.cache.dirs[ev.Dir]
		if l == nil {
			if abspath.WithinAny(ev.Dir, g.trees) {
				return false
			}
			continue // another guard's directory (the watcher is shared)
		}
		p := abspath.Join(ev.Dir, ev.Name)
		if g.last.entries[p] != nil {
			return false
		}
		var c *child
		for i := range l.children {
			if l.children[i].name == ev.Name {
				c = &l.children[i]
				break
			}
		}
		var st unix.Stat_t
		err := unix.Lstat(p, &st)
		switch {
		case err != nil && errors.Is(err, unix.ENOENT) && c == nil:
			// Absent then, absent now.
		case err == nil && c != nil && c.kind == kindFile && kindOf(uint32(st.Mode)) == kindFile && c.rule < 0 && ev.Name != ".git":
			// An ordinary file's content or times.
		default:
			return false
		}
	}
	return true
}

// unchanged reports whether every entry still has the type, mode, owner,
// size, inode and times recorded, and every pointer file read its stat:
// inotify does not report writes through a shared memory mapping, nor
// writes through a hard link in a directory not watched, which update
// the times.
func (st *state) unchanged() bool {
	for p, was := range st.pointers {
		var cur unix.Stat_t
		if unix.Lstat(p, &cur) != nil || cur.Ino != was.Ino || cur.Dev != was.Dev || cur.Size != was.Size ||
			cur.Mtim != was.Mtim || cur.Ctim != was.Ctim || cur.Mode != was.Mode {
			return false
		}
	}
	for p, e := range st.entries {
		var cur unix.Stat_t
		if unix.Lstat(p, &cur) != nil {
			return false
		}
		if kindOf(uint32(cur.Mode)) != e.kind || uint32(cur.Mode)&0o7777 != e.perm || cur.Uid != e.uid || cur.Gid != e.gid ||
			cur.Ino != e.ino || uint64(cur.Dev) != e.dev {
			return false
		}
		// A directory's times change with its listing, which the events
		// vouch for (inert); a file's with its content.
		if mtime, ctime := statTimes(&cur); e.kind != kindDir && (mtime != e.mtime || ctime != e.ctime || cur.Size != e.size) {
			return false
		}
	}
	return true
}

// scan is one walk of every tree.
func (sc *scanner) scan() (*state, error) {
	g := sc.g
	for _, t := range g.trees {
		var st unix.Stat_t
		fd, err := openNoLinks(t, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
		if err == nil {
			err = unix.Fstat(fd, &st)
			unix.Close(fd)
		}
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				// Gone, or no longer reachable without a symbolic
				// link (a command swapped a directory on its path):
				// nothing of the tree is recorded, and what the
				// baseline had there is restored only through
				// directories (openParent), never through the link.
				continue
			}
			return nil, &os.PathError{Op: "open", Path: t, Err: err}
		}
		if kindOf(uint32(st.Mode)) != kindDir {
			continue
		}
		sc.tree = t
		if r, ok := g.protectedBy(t); ok {
			if err := sc.record(t, &st, ruleName(r)); err != nil {
				return nil, err
			}
			continue
		}
		if err := sc.walk(t, &st); err != nil {
			return nil, err
		}
	}
	if err := sc.followPointers(); err != nil {
		return nil, err
	}
	if !sc.stream {
		g.cache.dirs, g.cache.files = sc.newDirs, sc.newFiles
	}
	return sc.st, nil
}

// watch adds dir to the watcher before it is read; a directory that
// cannot be watched means the next scan walks again.
func (sc *scanner) watch(dir string) {
	if sc.watched {
		if err := sc.g.opts.Watcher.Add(dir); err != nil {
			sc.watched = false
			sc.g.log.Debug("protectguard: a directory cannot be watched; every scan walks", "dir", dir, "err", err)
		}
	}
}

// pointer reads file, a .git file (prefix "gitdir:") or a commondir
// (no prefix), and queues the directory it names, relative to base.
func (sc *scanner) pointer(base, file, prefix string) {
	fd, err := openNoLinks(file, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	key := file
	if errors.Is(err, unix.ELOOP) {
		// A symbolic link, which git follows: to a directory, it is
		// the git directory itself; to a file, the pointer file. Its
		// own stat and its target's are both remembered (a change of
		// either is a change).
		var lst, tst unix.Stat_t
		real, rerr := filepath.EvalSymlinks(file)
		if rerr != nil || unix.Lstat(file, &lst) != nil || unix.Stat(real, &tst) != nil {
			return
		}
		sc.st.pointers[file] = lst
		if kindOf(uint32(tst.Mode)) == kindDir {
			sc.pointers = append(sc.pointers, real)
			return
		}
		key = real
		fd, err = openNoLinks(real, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	}
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), file)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		sc.st.pointers[key] = st
	}
	data, _ := io.ReadAll(io.LimitReader(f, 4096))
	f.Close()
	line, _, _ := strings.Cut(string(data), "\n")
	if prefix != "" {
		var ok bool
		if line, ok = strings.CutPrefix(line, prefix); !ok {
			return
		}
	}
	target := strings.TrimSpace(line)
	if target == "" {
		return
	}
	if !filepath.IsAbs(target) {
		// Joined, not cleaned: "link/../x" is resolved as the kernel
		// does (the link first), by EvalSymlinks in followPointers.
		target = base + "/" + target
	}
	sc.pointers = append(sc.pointers, target)
}

// followPointers scans the git directories that .git files and commondir
// files name, as git would find them (symbolic links followed), when they
// lie in a watched tree and the walk has not already seen them.
func (sc *scanner) followPointers() error {
	for len(sc.pointers) > 0 {
		target := sc.pointers[0]
		sc.pointers = sc.pointers[1:]
		if err := sc.tick(); err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(target)
		if err != nil || sc.st.gitDirs[real] || sc.followed[real] {
			continue
		}
		if sc.followed == nil {
			sc.followed = map[string]bool{}
		}
		sc.followed[real] = true
		tree := ""
		for _, t := range sc.g.trees {
			if abspath.Within(real, t) && real != t {
				tree = t
			}
		}
		if tree == "" {
			continue // outside the writable trees: the command could not write it
		}
		var st unix.Stat_t
		if unix.Lstat(real, &st) != nil || kindOf(uint32(st.Mode)) != kindDir {
			continue
		}
		l, err := sc.list(real, &st, true)
		if err != nil || !l.gitDir {
			continue
		}
		sc.tree = tree
		if sc.existedPlain(real, &st) {
			sc.st.defused[real] = tree
			continue
		}
		if err := sc.walkGitDir(real, l.children); err != nil {
			return err
		}
	}
	return nil
}

func (sc *scanner) tick() error {
	sc.count++
	if !sc.stream && sc.count > sc.g.opts.MaxEntries {
		return &LimitError{Trees: sc.g.trees, Limit: sc.g.opts.MaxEntries}
	}
	if sc.count%4096 == 0 {
		return sc.ctx.Err()
	}
	return nil
}

// list returns dir's listing, from the cache when the directory has not
// changed since it was last read. A streaming walk (sc.stream) neither
// uses nor fills the cache, and unless all is set keeps only the children
// a walk visits (directories, rule matches, .git), reading in chunks: a
// directory of millions of plain files costs no memory.
func (sc *scanner) list(dir string, st *unix.Stat_t, all bool) (*dirListing, error) {
	if !sc.known {
		if len(sc.st.dirs) < maxDirIDs {
			sc.st.dirs[devIno{uint64(st.Dev), st.Ino}] = struct{}{}
		} else {
			sc.st.dirsPartial = true
		}
	}
	if !sc.stream {
		if sc.g.opts.Watcher != nil {
			// Watched first, then looked at: a change after the
			// watch is an event, one before it is in this stat.
			sc.watch(dir)
			var fresh unix.Stat_t
			if unix.Lstat(dir, &fresh) == nil {
				st = &fresh
			}
		}
		_, ctime := statTimes(st)
		if l := sc.g.cache.dirs[dir]; l != nil && l.ino == st.Ino && l.dev == uint64(st.Dev) && l.ctime == ctime && ctime < l.readAt-racyWindow {
			sc.newDirs[dir] = l
			return l, nil
		}
	}
	// The command may have swapped dir for a FIFO or a link since the
	// lstat: O_DIRECTORY fails on anything but a directory without
	// blocking, O_NOFOLLOW on a link, and the listing is used only if it
	// is the directory that was stat'ed.
	fd, err := openNoLinks(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil || fst.Ino != st.Ino || fst.Dev != st.Dev {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: dir, Err: errors.New("replaced while being scanned")}
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	_, ctime := statTimes(st)
	l := &dirListing{ino: st.Ino, dev: uint64(st.Dev), ctime: ctime, readAt: sc.now}
	filter := sc.stream && !all
	// In a repair, a recorded directory of the baseline that gains
	// more than floodEntries entries is swept (flooded): its new
	// entries are counted, not held, past the bound. (Only a recorded
	// one: a directory the walk merely visits must be searched whole
	// for git directories, whatever the baseline recorded there.)
	inBase := false
	if sc.base != nil && sc.recording {
		b := sc.base.entries[dir]
		inBase = b != nil && b.kind == kindDir
	}
	chunk := -1
	if filter || inBase {
		chunk = 4096
	}
	marks := map[string]bool{}
	fresh := 0
	for {
		des, err := f.ReadDir(chunk)
		sc.seen += len(des)
		for _, de := range des {
			switch n := de.Name(); n {
			case "HEAD", "commondir", "objects", "refs":
				marks[n] = true
			}
			if inBase && sc.base.entries[abspath.Join(dir, de.Name())] == nil {
				if fresh++; fresh > floodEntries {
					l.flood = true
					continue
				}
			}
			c := sc.child(dir, de)
			if filter && c.kind != kindDir && c.rule < 0 && c.name != ".git" {
				continue
			}
			l.children = append(l.children, c)
		}
		if chunk < 0 || errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &os.PathError{Op: "readdir", Path: dir, Err: err}
		}
		if err := sc.ctx.Err(); err != nil {
			return nil, err
		}
	}
	if l.flood {
		// Only what the baseline has is recorded: the repair sweeps the
		// rest.
		l.children = slices.DeleteFunc(l.children, func(c child) bool { return sc.base.entries[abspath.Join(dir, c.name)] == nil })
	}
	sc.held = max(sc.held, len(l.children))
	l.gitDir = sc.g.structure && gitdir.IsGitDir(marks)
	if filter && l.gitDir {
		// Every entry of a git directory matters (its control entries).
		return sc.list(dir, st, true)
	}
	if !sc.stream && !l.flood {
		sc.newDirs[dir] = l
	}
	return l, nil
}

// child describes the directory entry de of dir.
func (sc *scanner) child(dir string, de os.DirEntry) child {
	c := child{name: de.Name(), rule: -1}
	switch t := de.Type(); {
	case t.IsDir():
		c.kind = kindDir
	case t&os.ModeSymlink != 0:
		c.kind = kindSymlink
	case t.IsRegular():
		c.kind = kindFile
	default:
		c.kind = kindOther
	}
	c.rule = sc.ruleFor(dir, c.name)
	if c.rule < 0 && c.kind == kindDir {
		abs := abspath.Join(dir, c.name)
		// With git protected by structure, a git directory may be
		// anywhere: every directory is visited.
		c.below = sc.g.structure || sc.g.mayMatchBelow(abs)
	}
	return c
}

// ruleFor returns the index of the first protect rule matching name, a
// child of dir (a directory no rule matched, so a bare-name rule can only
// match the child's own name), or -1. What the bare-name rules say about
// a name is remembered for the walk (names repeat across directories:
// main.go, index.js), up to maxNameMemo names.
func (sc *scanner) ruleFor(dir, name string) int {
	byName, ok := sc.nameMemo[name]
	if !ok {
		byName = -1
		for i, r := range sc.g.rules {
			if r.Pattern.Kind() == policy.PatternName && r.Pattern.MatchName(name) {
				byName = i
				break
			}
		}
		if sc.nameMemo == nil {
			sc.nameMemo = map[string]int{}
		}
		if len(sc.nameMemo) < maxNameMemo {
			sc.nameMemo[name] = byName
		}
	}
	if !sc.g.pathRules {
		return byName
	}
	abs := abspath.Join(dir, name)
	rel, inside := sc.g.opts.Checker.Inside(abs)
	for i, r := range sc.g.rules {
		if byName >= 0 && i >= byName {
			break
		}
		if r.Pattern.Kind() != policy.PatternName && r.Pattern.Match(abs, rel, inside) {
			return i
		}
	}
	return byName
}

// maxNameMemo bounds the names a walk remembers the bare-name rules'
// verdict for.
const maxNameMemo = 1 << 16

// walk visits dir, which no protect rule matches.
func (sc *scanner) walk(dir string, st *unix.Stat_t) error {
	l, err := sc.list(dir, st, false)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // removed meanwhile
		}
		return err
	}
	if l.gitDir {
		if !sc.existedPlain(dir, st) {
			return sc.walkGitDir(dir, l.children)
		}
		// A directory of the baseline that became a git directory: it
		// is defused (by the repair) and walked as what it was.
		sc.st.defused[dir] = sc.tree
	}
	for _, c := range l.children {
		if err := sc.tick(); err != nil {
			return err
		}
		if c.name == ".git" && (c.kind == kindFile || c.kind == kindSymlink) && sc.g.structure {
			sc.pointer(dir, abspath.Join(dir, c.name), "gitdir:")
		}
		if c.rule < 0 && (c.kind != kindDir || !c.below) {
			continue
		}
		abs := abspath.Join(dir, c.name)
		var cst unix.Stat_t
		if err := unix.Lstat(abs, &cst); err != nil {
			continue // gone meanwhile
		}
		if c.rule >= 0 {
			if err := sc.record(abs, &cst, ruleName(sc.g.rules[c.rule])); err != nil {
				return err
			}
			continue
		}
		if kindOf(uint32(cst.Mode)) == kindDir {
			if err := sc.walk(abs, &cst); err != nil {
				return err
			}
		}
	}
	return nil
}

// gitStructureRule names the protection of a git directory's control
// entries in violations.
const gitStructureRule = "git directory (control entry)"

// walkGitDir visits a git directory: its control entries are recorded
// (whatever their name); its data is not, but modules/ and worktrees/,
// which hold further git directories, are walked, and so is all data of
// a git directory not below a .git.
func (sc *scanner) walkGitDir(dir string, children []child) error {
	sc.st.gitDirs[dir] = true
	swept := false
	if sc.base != nil && len(children) > floodEntries {
		n := 0
		for _, c := range children {
			if sc.sweepable(dir, c.name) {
				n++
			}
		}
		if n > floodEntries {
			sc.st.sweeps[dir] = sweep{tree: sc.tree, rule: gitStructureRule, git: true, newRepo: !sc.base.gitDirs[dir]}
			swept = true
		}
	}
	for _, c := range children {
		if err := sc.tick(); err != nil {
			return err
		}
		if swept && sc.sweepable(dir, c.name) {
			continue
		}
		abs := abspath.Join(dir, c.name)
		var cst unix.Stat_t
		if err := unix.Lstat(abs, &cst); err != nil {
			continue // gone meanwhile
		}
		if gitdir.IsData(c.name) {
			// Data is not recorded. modules/ and worktrees/ hold
			// git directories; and the data of a git directory that
			// is not below a .git (a bare repository, a separate git
			// directory) is a work tree path as well, where a
			// gitlink can name a nested repository.
			if (c.name == "modules" || c.name == "worktrees" || (!sc.known && !gitdir.BelowDotGit(dir))) && kindOf(uint32(cst.Mode)) == kindDir {
				if err := sc.walk(abs, &cst); err != nil {
					return err
				}
			}
			continue
		}
		if c.name == "commondir" && (c.kind == kindFile || c.kind == kindSymlink) {
			sc.pointer(dir, abs, "")
		}
		rule := gitStructureRule
		if c.rule >= 0 {
			rule = ruleName(sc.g.rules[c.rule])
		}
		sc.gitDir, sc.gitName = dir, c.name
		err := sc.record(abs, &cst, rule)
		sc.gitDir, sc.gitName = "", ""
		if err != nil {
			return err
		}
	}
	return nil
}

// record adds path and, for a directory, its whole subtree.
func (sc *scanner) record(path string, st *unix.Stat_t, rule string) error {
	mtime, ctime := statTimes(st)
	e := &entry{
		kind: kindOf(uint32(st.Mode)), perm: uint32(st.Mode) & 0o7777, uid: st.Uid, gid: st.Gid,
		size: st.Size, ino: st.Ino, dev: uint64(st.Dev), mtime: mtime, ctime: ctime,
		rule: rule, tree: sc.tree, gitDir: sc.gitDir, gitName: sc.gitName,
	}
	// In a repair, an entry a new repository keeps (its data, info/)
	// leads to no action: it is not recorded, only searched for git
	// directories and pointers below it.
	kept := sc.base != nil && sc.base.entries[path] == nil && sc.gitDir != "" && !sc.base.gitDirs[sc.gitDir] &&
		gitdir.NewRepoAction(sc.gitName) == "keep"
	if !kept {
		sc.st.entries[path] = e
		if sc.stream && len(sc.st.entries) > sc.g.opts.MaxEntries {
			return &LimitError{Trees: sc.g.trees, Limit: sc.g.opts.MaxEntries}
		}
	} else if e.kind != kindDir {
		return nil
	}
	switch e.kind {
	case kindSymlink:
		t, err := readlinkNoLinks(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		e.target = t
	case kindFile:
		if err := sc.hash(path, e); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	case kindDir:
		if sc.removedWhole(path) {
			// New, and removed with its subtree by the repair: what
			// it holds needs no record (a flood of entries in it
			// costs nothing).
			e.shallow = true
			return nil
		}
		sc.recording = true
		l, err := sc.list(path, st, !kept)
		sc.recording = false
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		skipNew := false
		if l.flood {
			// More new entries than a repair records one by one:
			// the repair sweeps them; what the baseline has in it is
			// recorded as usual.
			sc.st.sweeps[path] = sweep{tree: sc.tree, rule: rule}
			skipNew = true
		}
		// A git directory in the subtree is one of its own: its
		// entries are attributed to it, so that a new one is treated as
		// a new repository even where its enclosing entry is kept.
		nested := l.gitDir
		if nested {
			sc.st.gitDirs[path] = true
		}
		for _, c := range l.children {
			if err := sc.tick(); err != nil {
				return err
			}
			abs := abspath.Join(path, c.name)
			if skipNew && sc.base.entries[abs] == nil {
				continue
			}
			var cst unix.Stat_t
			if err := unix.Lstat(abs, &cst); err != nil {
				continue
			}
			if c.name == ".git" && (c.kind == kindFile || c.kind == kindSymlink) && sc.g.structure {
				sc.pointer(path, abs, "gitdir:")
			}
			if nested && c.name == "commondir" && (c.kind == kindFile || c.kind == kindSymlink) {
				sc.pointer(path, abs, "")
			}
			gd, gn := sc.gitDir, sc.gitName
			if nested {
				sc.gitDir, sc.gitName = path, c.name
			}
			err := sc.record(abs, &cst, rule)
			sc.gitDir, sc.gitName = gd, gn
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// readlinkNoLinks reads the symbolic link at path, whose directory is
// opened without following a link.
func readlinkNoLinks(path string) (string, error) {
	dfd, err := openNoLinks(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: path, Err: err}
	}
	defer unix.Close(dfd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dfd, filepath.Base(path), buf)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: path, Err: err}
	}
	return string(buf[:n]), nil
}

// hash fills e's hash (and copy) from the cache or by reading the file.
// A repair reads only what it compares: not a new file (it is removed,
// or for a new repository's config read again when sanitized), nor one
// whose size differs from the baseline's (changed whatever its content).
func (sc *scanner) hash(path string, e *entry) error {
	if sc.base != nil {
		if b := sc.base.entries[path]; b == nil || b.kind != kindFile || b.size != e.size {
			return nil
		}
	}
	if h := sc.g.cache.files[path]; h != nil && h.ino == e.ino && h.dev == e.dev && h.size == e.size &&
		h.mtime == e.mtime && h.ctime == e.ctime && e.ctime < h.readAt-racyWindow {
		if h.kept && sc.budget < int64(len(h.data)) {
			h = &fileHash{ino: h.ino, dev: h.dev, size: h.size, mtime: h.mtime, ctime: h.ctime, readAt: h.readAt, hash: h.hash}
		}
		sc.budget -= int64(len(h.data))
		sc.newFiles[path] = h
		e.hash, e.data, e.kept = h.hash, h.data, h.kept
		return nil
	}
	fd, err := openNoLinks(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if kindOf(uint32(st.Mode)) != kindFile {
		e.kind = kindOf(uint32(st.Mode)) // replaced meanwhile
		return nil
	}
	e.perm, e.uid, e.gid, e.size, e.ino, e.dev = uint32(st.Mode)&0o7777, st.Uid, st.Gid, st.Size, st.Ino, uint64(st.Dev)
	e.mtime, e.ctime = statTimes(&st)
	sc.g.hashed += st.Size
	keep := st.Size <= sc.g.opts.MaxFileSize && st.Size <= sc.budget
	h := sha256.New()
	var data []byte
	if keep {
		data, err = io.ReadAll(io.LimitReader(f, sc.g.opts.MaxFileSize+1))
		if err != nil {
			return &os.PathError{Op: "read", Path: path, Err: err}
		}
		if int64(len(data)) > sc.g.opts.MaxFileSize || int64(len(data)) > sc.budget {
			keep = false // grew while being read
			h.Write(data)
			if _, err := io.Copy(h, f); err != nil {
				return &os.PathError{Op: "read", Path: path, Err: err}
			}
			data = nil
		} else {
			h.Write(data)
		}
	} else if _, err := io.Copy(h, f); err != nil {
		return &os.PathError{Op: "read", Path: path, Err: err}
	}
	copy(e.hash[:], h.Sum(nil))
	e.data, e.kept = data, keep
	if keep {
		sc.budget -= int64(len(data))
	}
	sc.newFiles[path] = &fileHash{ino: e.ino, dev: e.dev, size: e.size, mtime: e.mtime, ctime: e.ctime, readAt: sc.now, hash: e.hash, data: data, kept: keep}
	return nil
}
