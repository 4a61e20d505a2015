package landlock

import (
	"os"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/cordon-sandbox/cordon/executor"
)

// ruleset is what the sandbox helper applies: the Landlock ruleset
// descriptor (nil without a Landlock layer), landlock_restrict_self's
// flags and the seccomp program in helperArgs' form.
type ruleset struct {
	file   *os.File
	flags  uint32
	filter string
	// mounts says how each command gets a mount namespace in which
	// everything outside writable is read-only (see mountns_linux.go);
	// writable are the top writable regions and masks the read-only
	// masks inside them (mountRegions).
	mounts          mountMode
	writable, masks []string
	// kept is the mount namespace made once for the commands of this
	// ruleset (cgo start path; see keptNamespace), nil until made.
	keptMu sync.Mutex
	kept   *keptNS
	// plan is the plan the ruleset was built for (its rules' reach),
	// maskReach holds the masks and every directory above them
	// (keptCurrent).
	plan      *plan
	maskReach map[string]bool
}

func (r *ruleset) fd() int {
	if r.file == nil {
		return -1
	}
	return helperRulesetFD
}

func (r *ruleset) close() {
	if r.file != nil {
		r.file.Close()
	}
	r.keptMu.Lock()
	r.kept.close()
	r.kept = nil
	r.keptMu.Unlock()
}

// rulesetCache keeps the rulesets of the most recently used plans, so a
// ruleset is built once per profile. A ruleset evicted while a start is
// using it is closed when that start releases it; commands already
// started keep their own restriction.
type rulesetCache struct {
	mu     sync.Mutex // guards refs and evicted, and orders the LRU's use
	lru    *lru.Cache[string, *rulesetRef]
	closed bool
}

type rulesetRef struct {
	rs      *ruleset
	refs    int
	evicted bool
}

func newRulesetCache(max int) *rulesetCache {
	c := &rulesetCache{}
	// The LRU calls evict from Add and Purge, which run under c.mu.
	c.lru, _ = lru.NewWithEvict(max, func(_ string, r *rulesetRef) { c.evict(r) }) // errs only for a size ≤ 0
	return c
}

// acquire returns the ruleset for key, building it when missing, and
// whether it was built. Call release when the start is done.
func (c *rulesetCache) acquire(key string, build func() (*ruleset, error)) (*rulesetRef, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false, executor.ErrClosed
	}
	if r, ok := c.lru.Get(key); ok {
		r.refs++
		return r, false, nil
	}
	rs, err := build()
	if err != nil {
		return nil, false, err
	}
	r := &rulesetRef{rs: rs, refs: 1}
	c.lru.Add(key, r) // evicts the least recently used beyond the bound, never r
	return r, true, nil
}

// evict marks r evicted and closes it unless a start still uses it.
func (c *rulesetCache) evict(r *rulesetRef) {
	r.evicted = true
	if r.refs == 0 {
		r.rs.close()
	}
}

func (c *rulesetCache) release(r *rulesetRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.refs--
	if r.evicted && r.refs == 0 {
		r.rs.close()
	}
}

// len returns the number of cached rulesets.
func (c *rulesetCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// close evicts every ruleset.
func (c *rulesetCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.lru.Purge()
}
