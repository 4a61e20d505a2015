package protectguard

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/cordon-sandbox/cordon/internal/pathwatch"
	"github.com/cordon-sandbox/cordon/policy"
)

// Cache keeps the guards of an executor, one per protect rules, root,
// home and writable trees, so that a guard's snapshot carries over from
// one command to the next. Use NewCache; a Cache is safe for concurrent
// use.
type Cache struct {
	max    int
	logger *slog.Logger

	mu   sync.Mutex
	tick uint64
	m    map[string]*cached
	// dropped are guards dropped from m that may still be in use (handed
	// out before they were dropped): they stay peers while they live.
	dropped []droppedGuard
	// watcher is shared by the guards (nil: none could be made); see
	// Options.Watcher.
	watcher     *pathwatch.Watcher
	watcherOnce bool
}

type droppedGuard struct {
	g     weak.Pointer[Guard]
	rules string
}

type cached struct {
	g     *Guard
	used  uint64
	rules string // root, home and protect patterns
}

// NewCache returns a cache of at most max guards (a guard with running
// commands, or whose last repair could not walk everything, is never
// dropped, so it may hold more for a while; a dropped guard still in use
// stays a peer of the others while it lives). logger
// goes to every guard (nil: slog.Default()).
func NewCache(max int, logger *slog.Logger) *Cache {
	return &Cache{max: max, logger: logger, m: map[string]*cached{}}
}

// For returns the guard of pc's protect rules over trees (pc is the
// compiled policy of the workspace, its root and home; the cache compiles
// nothing), or nil when there is nothing to guard (no protect rules, or
// no writable tree).
func (c *Cache) For(pc *policy.Checker, trees []string) (*Guard, error) {
	root, home := pc.Root(), pc.Home()
	patterns := pc.Policy().Protect.Patterns()
	if len(patterns) == 0 || len(trees) == 0 {
		return nil, nil
	}
	key := strings.Join([]string{root, home, strings.Join(trees, "\x00"), strings.Join(patterns, "\x00")}, "\x01")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	if e := c.m[key]; e != nil {
		e.used = c.tick
		return e.g, nil
	}
	if !c.watcherOnce {
		c.watcherOnce = true
		if w, err := pathwatch.New(pathwatch.Content, 0); err == nil {
			c.watcher = w
		} else if c.logger != nil {
			c.logger.Debug("protectguard: no change watcher; every scan walks", "err", err)
		}
	}
	g, err := New(Options{Checker: pc, Trees: trees, Logger: c.logger, Watcher: c.watcher})
	if err != nil {
		return nil, err
	}
	// Guards of the same rules over other trees share their regions'
	// baselines while running (Guard.inherited).
	rules := strings.Join([]string{root, home, strings.Join(patterns, "\x00")}, "\x01")
	g.peers = func(self *Guard) []*Guard {
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []*Guard
		for _, e := range c.m {
			if e.g != self && e.rules == rules {
				out = append(out, e.g)
			}
		}
		c.dropped = slices.DeleteFunc(c.dropped, func(d droppedGuard) bool { return d.g.Value() == nil })
		for _, d := range c.dropped {
			if g := d.g.Value(); g != nil && g != self && d.rules == rules {
				out = append(out, g)
			}
		}
		return out
	}
	c.m[key] = &cached{g: g, used: c.tick, rules: rules}
	for len(c.m) > c.max {
		oldest := ""
		for k, e := range c.m {
			if k != key && e.g.Active() == 0 && !e.g.isBroken.Load() && (oldest == "" || e.used < c.m[oldest].used) {
				oldest = k
			}
		}
		if oldest == "" {
			break
		}
		c.dropped = append(c.dropped, droppedGuard{g: weak.Make(c.m[oldest].g), rules: c.m[oldest].rules})
		delete(c.m, oldest)
	}
	return g, nil
}

// Close releases the watcher the guards share; they walk at every scan
// from then on. The executors close their Cache when they are closed.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watcher != nil {
		return c.watcher.Close()
	}
	c.watcherOnce = true
	return nil
}
