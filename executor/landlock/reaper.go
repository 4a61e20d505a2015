package landlock

import (
	"sync"
	"sync/atomic"
)

// Without a cgroup of its own a command's process that double-forks out
// of its tree (its parent exits first) is reparented to the nearest
// child subreaper, or to the PID namespace's init. Config.ReapOrphans
// makes this process that subreaper (PR_SET_CHILD_SUBREAPER, Linux 3.4),
// so such a process becomes a child of this process that the executor
// did not start: when any command ends, before its guard runs, the
// executor kills every such child and reaps it, and again until none is
// left (the children of a killed one are reparented to this process in
// turn). The executor's own children — the commands' leaders and the
// kept namespaces' holders — are told apart by registration: each start
// is registered under the reaper's lock, and a sweep waits until no
// start is under way, so a command starting meanwhile is never mistaken
// for an orphan. This is for a process that runs nothing but the
// executor's commands (cordon-pod): a child the program started itself
// would be killed as well.

// reaper is the process-wide registry of the executor's children.
type reaper struct {
	on       atomic.Bool
	mu       sync.Mutex
	idle     *sync.Cond // broadcast when starting drops to 0
	starting int
	live     map[int]bool
}

// orphans is this process's reaper; on only after enable.
var orphans = newReaper()

func newReaper() *reaper {
	r := &reaper{live: map[int]bool{}}
	r.idle = sync.NewCond(&r.mu)
	return r
}

// begin registers a start about to happen. The returned function must be
// called once, with the started process's id or 0 when nothing started.
// With the reaper off both are no-ops.
func (r *reaper) begin() func(pid int) {
	if !r.on.Load() {
		return func(int) {}
	}
	r.mu.Lock()
	r.starting++
	r.mu.Unlock()
	var once sync.Once
	return func(pid int) {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if pid > 0 {
				r.live[pid] = true
			}
			if r.starting--; r.starting == 0 {
				r.idle.Broadcast()
			}
		})
	}
}

// forget forgets a child its waiter reaped.
func (r *reaper) forget(pid int) {
	if !r.on.Load() {
		return
	}
	r.mu.Lock()
	delete(r.live, pid)
	r.mu.Unlock()
}

// end forgets the given children (reaped by their waiters) and kills and
// reaps every other child of this process; it returns how many it
// killed.
func (r *reaper) end(pids ...int) int {
	if !r.on.Load() {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range pids {
		delete(r.live, p)
	}
	for r.starting > 0 {
		r.idle.Wait()
	}
	return sweep(r.live)
}
