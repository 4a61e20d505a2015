package scan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// Options configure a Cache. The zero value is usable.
type Options struct {
	// MaxWatches caps the inotify watches the cache holds (one per
	// directory); directories beyond it are validated by stat at every
	// search. 0 means half of fs.inotify.max_user_watches; negative
	// disables inotify altogether.
	MaxWatches int
	// MaxTrees caps the trees (walk roots) kept; the least recently
	// searched are dropped. 0 means 8.
	MaxTrees int
	// Logger receives debug records (overflows, fallbacks); nil means
	// slog.Default().
	Logger *slog.Logger
}

// ErrClosed is returned by a closed Cache.
var ErrClosed = errors.New("mask search cache closed")

// Cache searches like Search and keeps the trees it read, so that a search
// when nothing changed costs almost nothing and one after a change re-reads
// only the changed directories. It is safe for concurrent use; searches
// are serialised.
//
// Changes are detected with inotify on Linux (one watch per directory, the
// mount table polled for mounts appearing or disappearing inside a tree),
// and by stat of every directory elsewhere, or when watches run out or the
// file system does not report changes (network and FUSE file systems).
// A lost event queue (IN_Q_OVERFLOW) makes the next search re-read
// everything. Changes made to a network file system by another machine
// are seen only through its modification times.
type Cache struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex // serialises searches and validation
	closed  bool
	trees   map[string]*tree
	clock   uint64 // counts searches, for LRU
	gen     uint64 // bumped on every change seen
	nextMID uint64
	mids    map[string]uint64
	results map[string]*cachedResult

	wmu       sync.Mutex // guards the fields below; workers use them
	unwatched map[*node]struct{}
	plat      platformCache
}

// tree is one cached walk root.
type tree struct {
	root     *node
	dev, ino uint64 // of the root directory when the tree was made
	used     uint64
}

// cachedResult is the result of an earlier search and the state it saw.
type cachedResult struct {
	gen   uint64
	roots []rootState
	res   *Result
}

// rootState identifies what a walk root was at a search.
type rootState struct {
	path     string
	exists   bool
	typ      Type
	dev, ino uint64
	fi       fs.FileInfo
	err      error
}

// CacheStats describe a cache.
type CacheStats struct {
	Trees int
	// Dirs counts cached directories; Watched of them have an inotify
	// watch and Unwatched are validated by stat at every search.
	Dirs, Watched, Unwatched int
	// Generation counts the changes seen.
	Generation uint64
	// Overflows counts lost event queues, each a re-read of everything.
	Overflows int
}

// NewCache returns an empty cache. On Linux it holds an inotify instance
// (and a goroutine that applies events as they come) until Close.
func NewCache(opts Options) *Cache {
	c := &Cache{
		opts:      opts,
		log:       cmp.Or(opts.Logger, slog.Default()),
		trees:     map[string]*tree{},
		mids:      map[string]uint64{},
		results:   map[string]*cachedResult{},
		unwatched: map[*node]struct{}{},
		nextMID:   1,
	}
	if c.opts.MaxTrees == 0 {
		c.opts.MaxTrees = 8
	}
	c.initPlatform()
	return c
}

// Close releases the watches. Searches after Close fail with ErrClosed.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.trees = map[string]*tree{}
	c.results = nil
	c.mu.Unlock()
	// Without the lock: the drainer may be waiting for it.
	return c.closePlatform()
}

// Stats returns counters describing the cache.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := CacheStats{Trees: len(c.trees), Generation: c.gen, Overflows: c.overflows()}
	var count func(n *node)
	count = func(n *node) {
		st.Dirs++
		if n.wd >= 0 {
			st.Watched++
		}
		for _, ch := range n.children {
			count(ch)
		}
	}
	for _, t := range c.trees {
		count(t.root)
	}
	st.Unwatched = len(c.unwatched)
	return st
}

// Search is Search with the cache: same request, same result.
func (c *Cache) Search(ctx context.Context, req *Request) (*Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	s, err := newSearch(ctx, req, c)
	if err != nil {
		return nil, err
	}
	if len(s.pats) == 0 {
		return &Result{}, nil
	}
	c.clock++
	c.validate()
	states := s.rootStates()

	key, mkey := requestKey(s, req)
	if key != "" {
		if cr := c.results[key]; cr != nil && cr.gen == c.gen && sameRoots(cr.roots, states) {
			for _, wr := range s.roots {
				if t := c.trees[wr.path]; t != nil {
					t.used = c.clock
				}
			}
			return cr.res, nil
		}
		if c.mids[mkey] == 0 {
			c.nextMID++
			c.mids[mkey] = c.nextMID
		}
		s.mid = c.mids[mkey]
	} else {
		c.nextMID++
		s.mid = c.nextMID
	}
	gen := c.gen
	res, err := s.runWith(states)
	c.evict()
	if err != nil {
		return nil, err
	}
	if key != "" && !s.unstable.Load() {
		if len(c.results) >= 4 {
			clear(c.results)
		}
		c.results[key] = &cachedResult{gen: gen, roots: states, res: res}
	}
	return res, nil
}

// requestKey returns the key of the whole request (for the result cache)
// and of its match semantics (for the per-directory match cache), or ""
// when a pattern has no key.
func requestKey(s *search, req *Request) (key, mkey string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%q", s.ws)
	for _, p := range s.pats {
		if p.Key == "" {
			return "", ""
		}
		fmt.Fprintf(&b, " %q", p.Key)
	}
	mkey = b.String()
	fmt.Fprintf(&b, " max=%d roots=%q", s.maxEntries, s.rootList)
	return b.String(), mkey
}

// rootStates looks at each walk root.
func (s *search) rootStates() []rootState {
	out := make([]rootState, len(s.roots))
	for i, wr := range s.roots {
		st := rootState{path: wr.path}
		fi, err := os.Lstat(wr.path)
		switch {
		case err == nil:
			st.exists, st.typ, st.fi = true, modeType(fi.Mode()), fi
			st.dev, st.ino = fileID(fi)
		case !isVanished(err):
			st.err = err
		}
		out[i] = st
	}
	return out
}

func sameRoots(a, b []rootState) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.path != y.path || x.exists != y.exists || x.typ != y.typ || x.dev != y.dev || x.ino != y.ino || (x.err == nil) != (y.err == nil) {
			return false
		}
	}
	return true
}

// tree returns the cached root node for path, making a new tree when there
// is none or the directory there is not the one cached.
func (c *Cache) tree(path string, st rootState) *node {
	t := c.trees[path]
	if t != nil && (t.dev != st.dev || t.ino != st.ino) {
		c.dropTree(path)
		t = nil
	}
	if t == nil {
		t = &tree{root: &node{path: path, wd: -1, children: map[string]*node{}}, dev: st.dev, ino: st.ino}
		c.trees[path] = t
	}
	t.used = c.clock
	return t.root
}

// dropTree forgets the tree at path.
func (c *Cache) dropTree(path string) {
	if t := c.trees[path]; t != nil {
		c.drop(t.root)
		delete(c.trees, path)
		c.gen++
	}
}

// evict drops the least recently used trees beyond MaxTrees.
func (c *Cache) evict() {
	for len(c.trees) > c.opts.MaxTrees {
		var oldest string
		for p, t := range c.trees {
			if oldest == "" || t.used < c.trees[oldest].used {
				oldest = p
			}
		}
		c.dropTree(oldest)
	}
}

// drop forgets node n and its subtree: watches removed, stat validation
// stopped. The caller unlinks n from its parent. A nil cache does nothing.
func (c *Cache) drop(n *node) {
	if c == nil {
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.dropLocked(n)
}

func (c *Cache) dropLocked(n *node) {
	c.unwatch(n)
	delete(c.unwatched, n)
	for _, ch := range n.children {
		c.dropLocked(ch)
	}
}

// invalidate forgets node n because the directory there changed identity
// (deleted, moved, watch lost): its parent is re-read at the next search.
func (c *Cache) invalidate(n *node) {
	if n.parent == nil {
		c.dropTree(n.path)
		return
	}
	if n.parent.children[n.name] == n {
		delete(n.parent.children, n.name)
	}
	n.parent.listed = false
	c.drop(n)
	c.gen++
}

// racyWindow is how recent a modification time must be for a directory to
// be re-read regardless: a change in the same clock tick as the listing
// leaves the time unchanged. Two seconds covers file systems with coarse
// timestamps.
const racyWindow = int64(2 * time.Second)

// validate applies the changes seen since the last search.
func (c *Cache) validate() {
	c.validatePlatform()
	for _, t := range c.trees {
		fi, err := os.Lstat(t.root.path)
		if err != nil || !fi.IsDir() {
			c.dropTree(t.root.path)
			continue
		}
		if dev, ino := fileID(fi); dev != t.dev || ino != t.ino {
			c.dropTree(t.root.path)
		}
	}
	var gone []*node
	for n := range c.unwatched {
		if !n.listed {
			continue
		}
		if n.vol || n.modes {
			// A pseudo file system, or a listing with modes: a
			// file's chmod does not change its directory's times.
			n.listed = false
			c.gen++
			continue
		}
		fi, err := os.Lstat(n.path)
		if err != nil || !fi.IsDir() {
			gone = append(gone, n)
			continue
		}
		st := statOf(fi)
		if st != n.st || max(st.mtime, st.ctime) > n.readAt-racyWindow {
			n.listed = false
			c.gen++
		}
	}
	for _, n := range gone {
		c.invalidate(n)
	}
}

// runWith runs a cached search with the roots as states describes them.
func (s *search) runWith(states []rootState) (*Result, error) {
	s.states = states
	return s.run()
}

// noteUnreadable records a directory that could not be listed: without a
// watch, it is validated by stat (a chmod changes its ctime). A nil cache
// does nothing.
func (c *Cache) noteUnreadable(n *node) {
	if c == nil || n.wd >= 0 {
		return
	}
	n.readAt = time.Now().UnixNano()
	if fi, err := os.Lstat(n.path); err == nil {
		n.st = statOf(fi)
	}
	c.wmu.Lock()
	c.unwatched[n] = struct{}{}
	c.wmu.Unlock()
}
