package workspace

import (
	"hash/maphash"
	"sync"
)

// pathLocks serialises read-modify-write operations (EditText, WriteText)
// on the same resolved path within one Workspace, with a fixed number of
// striped mutexes (no per-path state to grow or clean up).
type pathLocks struct {
	once  sync.Once
	seed  maphash.Seed
	locks [64]sync.Mutex
}

// lock locks the stripe of path and returns its unlock function.
func (l *pathLocks) lock(path string) func() {
	l.once.Do(func() { l.seed = maphash.MakeSeed() })
	m := &l.locks[maphash.String(l.seed, path)%uint64(len(l.locks))]
	m.Lock()
	return m.Unlock
}
