package policyderive

import (
	"io/fs"
	"os"
	"sync"
	"time"
)

// dirState identifies a directory's contents without reading them: any
// entry created, removed or renamed in it changes its modification time
// (and change time); a replaced directory has another inode.
type dirState struct {
	dev, ino     uint64
	mtime, ctime int64
}

// racyWindow is how recent a directory's times must be for a cached
// listing of it not to be trusted: a change in the same clock tick as the
// listing leaves the times unchanged. Two seconds covers file systems with
// coarse timestamps.
const racyWindow = int64(2 * time.Second)

// maxListings bounds a listCache; beyond it the cache starts afresh.
const maxListings = 200_000

// listCache keeps the listings of the directories Landlock splits, so
// that deriving again reads only those that changed: one lstat per
// directory instead of a full read.
type listCache struct {
	mu sync.Mutex
	m  map[string]*cachedListing
}

type cachedListing struct {
	st      dirState
	readAt  int64
	entries []Entry
}

// list returns the listing of dir, from the cache when the directory is
// unchanged. A nil cache always reads.
func (c *listCache) list(dir string) Listing {
	fi, err := os.Lstat(dir)
	if err != nil {
		return Listing{Path: dir, Err: err.Error()}
	}
	if !fi.IsDir() {
		return Listing{Path: dir, Err: "not a directory"}
	}
	st := dirStateOf(fi)
	if c != nil {
		c.mu.Lock()
		cl := c.m[dir]
		c.mu.Unlock()
		if cl != nil && cl.st == st && max(st.mtime, st.ctime) < cl.readAt-racyWindow {
			return Listing{Path: dir, Entries: cl.entries}
		}
	}
	readAt := time.Now().UnixNano()
	ents, err := os.ReadDir(dir)
	l := Listing{Path: dir}
	if err != nil {
		l.Err = err.Error()
		return l
	}
	for _, e := range ents {
		t := TypeFile
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			t = TypeSymlink
		case e.IsDir():
			t = TypeDir
		case !e.Type().IsRegular():
			t = TypeOther
		}
		l.Entries = append(l.Entries, Entry{Name: e.Name(), Type: t})
	}
	if c != nil {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxListings {
			c.m = map[string]*cachedListing{}
		}
		c.m[dir] = &cachedListing{st: st, readAt: readAt, entries: l.Entries}
		c.mu.Unlock()
	}
	return l
}
