package landlock

import (
	"sync"

	"github.com/cordon-sandbox/cordon/internal/launcher"
)

// launcherCache keeps the launcher threads of the most recently used
// rulesets. A launcher evicted while a start is using it is closed when
// that start releases it; closing ends the thread, and commands already
// forked from it keep running.
type launcherCache struct {
	mu     sync.Mutex
	max    int
	tick   uint64
	m      map[string]*launcherRef
	closed bool
}

type launcherRef struct {
	key     string
	l       *launcher.Launcher
	refs    int
	used    uint64
	evicted bool
}

func newLauncherCache(max int) *launcherCache {
	return &launcherCache{max: max, m: map[string]*launcherRef{}}
}

// acquire returns the launcher for key, building it when missing. Call
// release when the start is done.
func (c *launcherCache) acquire(key string, build func() (*launcher.Launcher, error)) (*launcherRef, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false, launcher.ErrClosed
	}
	c.tick++
	if r := c.m[key]; r != nil {
		r.refs++
		r.used = c.tick
		return r, false, nil
	}
	l, err := build()
	if err != nil {
		return nil, false, err
	}
	r := &launcherRef{key: key, l: l, refs: 1, used: c.tick}
	c.m[key] = r
	for len(c.m) > c.max {
		var old *launcherRef
		for _, x := range c.m {
			if x != r && (old == nil || x.used < old.used) {
				old = x
			}
		}
		c.evict(old)
	}
	return r, true, nil
}

func (c *launcherCache) evict(r *launcherRef) {
	delete(c.m, r.key)
	r.evicted = true
	if r.refs == 0 {
		r.l.Close()
	}
}

func (c *launcherCache) release(r *launcherRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.refs--
	if r.evicted && r.refs == 0 {
		r.l.Close()
	}
}

// len returns the number of cached launchers.
func (c *launcherCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// close evicts every launcher.
func (c *launcherCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, r := range c.m {
		c.evict(r)
	}
}
