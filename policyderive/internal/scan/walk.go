package scan

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cordon-sandbox/cordon/internal/abspath"
)

// node is one directory of a searched tree. A Cache keeps nodes between
// searches; Search builds them afresh.
//
// During a search a node is touched only by the worker that holds its
// task; the task queue orders those accesses.
type node struct {
	parent *node
	name   string
	path   string // absolute, clean
	dino   uint64 // inode number in the parent's listing; 0 for a root

	listed   bool // entries, err and children reflect the directory
	modes    bool // the entries carry their permission bits
	entries  []entry
	err      error // listing failed: the entries are unknown
	children map[string]*node

	// Validation state, used by Cache only.
	wd     int32   // inotify watch descriptor, or -1
	fsw    bool    // its file system reports changes to inotify
	vol    bool    // a pseudo file system: re-read at every search
	st     dirStat // from the listing, for validation by stat
	readAt int64   // wall clock (ns) just before the listing

	// Match cache: matches and subs are valid for match key mid and the
	// active pattern set active.
	mid     uint64
	active  patset
	matches []Match
	subs    []sub
}

// entry is one directory entry.
type entry struct {
	name string
	ino  uint64
	typ  Type
	perm uint32 // permission bits, when the listing has modes (node.modes)
}

// private reports whether e's permission bits keep it from other users
// (Pattern.Private).
func (e *entry) private() bool {
	return e.typ != TypeSymlink && PrivatePerm(e.typ == TypeDir, fs.FileMode(e.perm))
}

// PrivatePerm reports whether permission bits perm keep a file (or a
// directory, dir) from other users: a file others may not read, a
// directory others may not list or enter. Symlinks have no such bits.
func PrivatePerm(dir bool, perm fs.FileMode) bool {
	if dir {
		return perm&0o005 != 0o005
	}
	return perm&0o004 == 0
}

// sub is a subdirectory the search must enter, with the patterns still to
// find below it.
type sub struct {
	name, path string
	ino        uint64
	active     patset
}

// dirStat is what detects a change of a directory without inotify.
type dirStat struct {
	dev, ino     uint64
	mtime, ctime int64 // ns
}

// patset is a set of pattern indexes.
type patset []uint64

func newPatset(n int) patset { return make(patset, (n+63)/64) }

func (s patset) add(i int)           { s[i/64] |= 1 << (i % 64) }
func (s patset) has(i int) bool      { return s[i/64]&(1<<(i%64)) != 0 }
func (s patset) equal(t patset) bool { return slices.Equal(s, t) }

func (s patset) empty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

// list returns the members in increasing order.
func (s patset) list() []int {
	var out []int
	for wi, w := range s {
		for w != 0 {
			out = append(out, wi*64+bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
	return out
}

// intersects reports whether s and t share a member.
func (s patset) intersects(t patset) bool {
	for i := range s {
		if s[i]&t[i] != 0 {
			return true
		}
	}
	return false
}

// walkRoot is one tree of a search.
type walkRoot struct {
	path   string
	inside bool
	skip   map[string]bool // roots below this one, searched on their own
	root   *node
	h      *rootHandle
}

// task asks a worker to process node n of walk root wr with patterns active.
type task struct {
	wr     *walkRoot
	n      *node
	active patset
}

// search is one run over a set of trees.
type search struct {
	ctx      context.Context
	pats     []Pattern
	needMode bool   // a Private pattern: listings carry modes
	names    patset // the bare-name patterns
	ws       string
	roots    []*walkRoot
	rootList []string
	mid      uint64
	cache    *Cache // nil for Search
	workers  int

	maxEntries int64
	timeout    time.Duration
	deadline   time.Time

	entries  atomic.Int64
	dirs     atomic.Int64
	unstable atomic.Bool // a directory changed under the search

	// Found at the roots themselves, before the walk.
	states     []rootState
	matches    []Match
	unreadable []Unreadable
	tasks      []task
}

// newSearch validates req and prepares the walk roots. With a cache, the
// roots' nodes come from it; the caller holds the cache's lock.
func newSearch(ctx context.Context, req *Request, c *Cache) (*search, error) {
	ws, roots, err := validate(req)
	if err != nil {
		return nil, err
	}
	s := &search{
		ctx:        ctx,
		pats:       req.Patterns,
		names:      newPatset(len(req.Patterns)),
		ws:         ws,
		rootList:   roots,
		mid:        1,
		cache:      c,
		workers:    cmp.Or(req.Workers, DefaultWorkers()),
		maxEntries: int64(cmp.Or(req.Limits.MaxEntries, DefaultMaxEntries)),
		timeout:    cmp.Or(req.Limits.Timeout, DefaultTimeout),
	}
	for i, p := range s.pats {
		if p.Name != nil {
			s.names.add(i)
		}
		if p.Private {
			s.needMode = true
		}
	}
	for _, r := range roots {
		wr := &walkRoot{path: r, inside: ws != "" && abspath.Within(r, ws)}
		for _, o := range roots {
			if o != r && abspath.Within(o, r) {
				if wr.skip == nil {
					wr.skip = map[string]bool{}
				}
				wr.skip[o] = true
			}
		}
		s.roots = append(s.roots, wr)
	}
	return s, nil
}

// rel returns the path of abs relative to the workspace root, or "" when
// the walk root is outside it.
func (s *search) rel(wr *walkRoot, abs string) string {
	switch {
	case !wr.inside:
		return ""
	case abs == s.ws:
		return "."
	case s.ws == "/":
		return abs[1:]
	}
	return abs[len(s.ws)+1:]
}

// run performs the search.
func (s *search) run() (*Result, error) {
	if len(s.pats) == 0 {
		return &Result{}, nil
	}
	s.deadline = time.Now().Add(s.timeout)
	if err := s.start(); err != nil {
		return nil, err
	}
	defer func() {
		for _, wr := range s.roots {
			if wr.h != nil {
				wr.h.close()
			}
		}
	}()
	workers, err := s.walk()
	if err != nil {
		return nil, err
	}
	res := &Result{Matches: s.matches, Unreadable: s.unreadable, Entries: int(s.entries.Load()), Dirs: int(s.dirs.Load())}
	for _, w := range workers {
		res.Matches = append(res.Matches, w.matches...)
		res.Unreadable = append(res.Unreadable, w.unreadable...)
	}
	slices.SortFunc(res.Matches, func(a, b Match) int { return cmp.Compare(a.Path, b.Path) })
	slices.SortFunc(res.Unreadable, func(a, b Unreadable) int { return cmp.Compare(a.Path, b.Path) })
	res.Matches = slices.Clip(res.Matches)
	res.Unreadable = slices.Clip(res.Unreadable)
	return res, nil
}

// start matches each walk root itself and queues the directories.
func (s *search) start() error {
	if s.states == nil {
		s.states = s.rootStates()
	}
	for i, wr := range s.roots {
		st := s.states[i]
		if st.err != nil {
			s.unreadable = append(s.unreadable, Unreadable{Path: wr.path, Err: st.err})
			continue
		}
		if !st.exists {
			if s.cache != nil {
				s.cache.dropTree(wr.path)
			}
			continue
		}
		isDir := st.typ == TypeDir
		rel := s.rel(wr, wr.path)
		hit := newPatset(len(s.pats))
		active := newPatset(len(s.pats))
		for i, p := range s.pats {
			switch {
			case p.Match(wr.path, rel, wr.inside):
				hit.add(i)
			case isDir && (p.MayMatchBelow == nil || p.MayMatchBelow(wr.path, rel, wr.inside)):
				active.add(i)
			}
		}
		if !hit.empty() {
			s.matches = append(s.matches, Match{Path: wr.path, Rel: rel, Inside: wr.inside, Type: st.typ, Patterns: hit.list()})
		}
		if !isDir || active.empty() {
			continue
		}
		if s.cache != nil {
			wr.root = s.cache.tree(wr.path, st)
		} else {
			wr.root = &node{path: wr.path, wd: -1, children: map[string]*node{}}
		}
		h, err := openRoot(wr.path)
		if err != nil {
			if isVanished(err) {
				s.unstable.Store(true)
				continue
			}
			// Not listable: the root itself is unreadable. Rare enough
			// not to cache.
			s.unreadable = append(s.unreadable, Unreadable{Path: wr.path, Err: err})
			s.unstable.Store(true)
			continue
		}
		wr.h = h
		s.tasks = append(s.tasks, task{wr: wr, n: wr.root, active: active})
	}
	return nil
}

func modeType(m fs.FileMode) Type {
	switch {
	case m.IsDir():
		return TypeDir
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	case m.IsRegular():
		return TypeFile
	case m&fs.ModeSocket != 0:
		return TypeSocket
	}
	return TypeOther
}

// worker is the per-goroutine state of a walk.
type worker struct {
	buf        []byte
	matches    []Match
	unreadable []Unreadable
}

// process handles one directory and returns the subdirectories to enter.
func (s *search) process(w *worker, t task, out []task) ([]task, error) {
	select {
	case <-s.ctx.Done():
		return nil, fmt.Errorf("searching %v for masks: %w", s.rootList, s.ctx.Err())
	default:
	}
	if time.Now().After(s.deadline) {
		return nil, &LimitError{Limit: LimitTime, Max: int64(s.timeout), Roots: s.rootList}
	}
	n := t.n
	if !n.listed || (s.needMode && !n.modes) {
		s.list(w, t.wr, n)
		n.mid = 0
	}
	if s.entries.Add(int64(len(n.entries))) > s.maxEntries {
		return nil, &LimitError{Limit: LimitEntries, Max: s.maxEntries, Roots: s.rootList}
	}
	s.dirs.Add(1)
	if n.mid != s.mid || !n.active.equal(t.active) {
		s.match(t.wr, n, t.active)
		n.mid, n.active = s.mid, t.active
	}
	w.matches = append(w.matches, n.matches...)
	if n.err != nil {
		w.unreadable = append(w.unreadable, Unreadable{Path: n.path, Err: n.err})
	}
	for _, sb := range n.subs {
		if t.wr.skip[sb.path] {
			continue
		}
		c := n.children[sb.name]
		if c == nil {
			c = &node{parent: n, name: sb.name, path: sb.path, dino: sb.ino, wd: -1, children: map[string]*node{}}
			n.children[sb.name] = c
		}
		out = append(out, task{wr: t.wr, n: c, active: sb.active})
	}
	return out, nil
}

// list reads directory n and reconciles its children.
func (s *search) list(w *worker, wr *walkRoot, n *node) {
	entries, err := s.readDir(w, wr, n)
	if err != nil && isVanished(err) {
		// Gone or replaced (by a symlink, say) since its parent was
		// listed: nothing to find below; the parent's change will be
		// seen by the next search, and this one is not cached.
		s.unstable.Store(true)
		entries, err = nil, nil
	} else {
		n.listed = true
	}
	n.modes = s.needMode
	n.entries, n.err = entries, err
	if err != nil {
		s.cache.noteUnreadable(n)
	}
	if len(n.children) == 0 {
		return
	}
	byName := make(map[string]entry, len(entries))
	for _, e := range entries {
		if e.typ == TypeDir {
			byName[e.name] = e
		}
	}
	for name, c := range n.children {
		if e, ok := byName[name]; !ok || e.ino != c.dino {
			s.cache.drop(c)
			delete(n.children, name)
		}
	}
}

// match computes the matches among n's entries and the subdirectories to
// enter, for the patterns active at n.
func (s *search) match(wr *walkRoot, n *node, active patset) {
	n.matches, n.subs = nil, nil
	idx := active.list()
	needPath := false
	for _, i := range idx {
		if s.pats[i].Name == nil && !s.pats[i].Socket && s.pats[i].Inode == nil && !s.pats[i].Private {
			needPath = true
		}
	}
	for _, e := range n.entries {
		var abs, rel string
		if needPath || e.typ == TypeDir {
			abs = abspath.Join(n.path, e.name)
			rel = s.rel(wr, abs)
		}
		var hit patset // allocated on the first hit only
		for _, i := range idx {
			p := &s.pats[i]
			var ok bool
			switch {
			case p.Socket:
				ok = e.typ == TypeSocket
			case p.Private:
				ok = e.private()
			case p.Inode != nil:
				ok = e.typ != TypeDir && e.ino != 0 && p.Inode(e.ino)
			case p.Name != nil:
				ok = p.Name(e.name)
			default:
				ok = p.Match(abs, rel, wr.inside)
			}
			if ok {
				if hit == nil {
					hit = newPatset(len(s.pats))
				}
				hit.add(i)
			}
		}
		if hit != nil {
			if abs == "" {
				abs = abspath.Join(n.path, e.name)
				rel = s.rel(wr, abs)
			}
			n.matches = append(n.matches, Match{Path: abs, Rel: rel, Inside: wr.inside, Type: e.typ, Patterns: hit.list()})
		}
		if e.typ != TypeDir {
			continue
		}
		// The patterns to look for below: the active ones, minus those
		// this directory matched (its subtree matches them too) and
		// those that cannot match below it. Usually nothing is removed
		// and the set is shared.
		child, cloned := active, false
		for _, i := range idx {
			p := &s.pats[i]
			drop := hit != nil && hit.has(i)
			if !drop && p.Name == nil && p.MayMatchBelow != nil && !p.MayMatchBelow(abs, rel, wr.inside) {
				drop = true
			}
			if drop {
				if !cloned {
					child, cloned = slices.Clone(active), true
				}
				child[i/64] &^= 1 << (i % 64)
			}
		}
		if !child.empty() {
			n.subs = append(n.subs, sub{name: e.name, path: abs, ino: e.ino, active: child})
		}
	}
}

// walk runs the worker pool over the queued tasks.
func (s *search) walk() ([]*worker, error) {
	p := &pool{}
	p.cond.L = &p.mu
	p.shared = s.tasks
	p.pending.Store(int64(len(s.tasks)))
	workers := make([]*worker, s.workers)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{}
		workers[i] = w
		wg.Go(func() { p.run(s, w) })
	}
	wg.Wait()
	if p.err != nil {
		return nil, p.err
	}
	return workers, nil
}

// pool shares tasks among workers. Each worker keeps a local stack and
// hands half of it over when another worker is idle.
type pool struct {
	mu      sync.Mutex
	cond    sync.Cond
	shared  []task
	pending atomic.Int64 // tasks queued anywhere or running
	idle    atomic.Int32
	failed  atomic.Bool
	err     error
}

func (p *pool) run(s *search, w *worker) {
	var local []task
	for {
		var t task
		if n := len(local); n > 0 {
			t, local = local[n-1], local[:n-1]
		} else {
			var ok bool
			if t, ok = p.get(); !ok {
				return
			}
		}
		if p.failed.Load() {
			return
		}
		before := len(local)
		var err error
		local, err = s.process(w, t, local)
		if err != nil {
			p.fail(err)
			return
		}
		if p.pending.Add(int64(len(local)-before-1)) == 0 {
			p.mu.Lock()
			p.cond.Broadcast()
			p.mu.Unlock()
			return
		}
		if len(local) > 1 && p.idle.Load() > 0 {
			half := len(local) / 2
			p.mu.Lock()
			p.shared = append(p.shared, local[:half]...)
			p.cond.Broadcast()
			p.mu.Unlock()
			local = append(local[:0], local[half:]...)
		}
	}
}

func (p *pool) get() (task, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.shared) == 0 && p.pending.Load() > 0 && !p.failed.Load() {
		p.idle.Add(1)
		p.cond.Wait()
		p.idle.Add(-1)
	}
	if len(p.shared) == 0 || p.failed.Load() {
		return task{}, false
	}
	t := p.shared[len(p.shared)-1]
	p.shared = p.shared[:len(p.shared)-1]
	return t, true
}

func (p *pool) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.failed.Store(true)
	p.cond.Broadcast()
	p.mu.Unlock()
}
