//go:build linux

package landlock

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/procstat"
)

// enable makes this process a child subreaper and turns the reaper on.
func (r *reaper) enable() error {
	if r.on.Load() {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	r.on.Store(true)
	return nil
}

// sweepWait bounds how long a sweep waits for the processes it killed to
// die. SIGKILL kills a stopped or traced process too, but one in an
// uninterruptible sleep dies only when the sleep ends.
const sweepWait = 5 * time.Second

// sweep kills every child of this process not in keep, again until none
// but zombies is left (a killed child's own children are reparented
// here when it dies), reaping the zombies it can; it returns how many it
// killed. It never blocks on a wait: a zombie traced by another process
// is reported to that tracer first and can be reaped only after it —
// and the tracer, if it is one of the children, dies in the same sweep.
// A zombie cannot run, so what cannot be reaped yet is left for a later
// sweep.
func sweep(keep map[int]bool) int {
	killed := map[int]bool{}
	deadline := time.Now().Add(sweepWait)
	self := unix.Getpgrp()
	delay := 50 * time.Microsecond
	for {
		live, fresh := 0, false
		for _, k := range children(keep) {
			// Every child is killed, whatever its state: a process whose
			// leader thread exited (pthread_exit) shows the leader's Z
			// while its other threads run on. Its process group goes
			// with it, at once (unless a running command leads it): a
			// process that hops from pid to pid (fork, the parent exits)
			// keeps its group.
			if k.pgid > 1 && k.pgid != self && !keep[k.pgid] {
				_ = unix.Kill(-k.pgid, unix.SIGKILL)
			}
			if err := unix.Kill(k.pid, unix.SIGKILL); err == nil && !k.dead() && !killed[k.pid] {
				killed[k.pid], fresh = true, true
			}
			if !k.dead() {
				live++
			}
			// A child is not recycled before it is reaped here, so its
			// pid names it until then.
			_, _ = unix.Wait4(k.pid, nil, unix.WNOHANG, nil)
		}
		if live == 0 {
			return len(killed)
		}
		if time.Now().After(deadline) {
			slog.Warn("landlock: processes that left a command's tree are still alive after SIGKILL", "count", live, "waited", sweepWait)
			return len(killed)
		}
		if fresh {
			// New children keep appearing: list again at once.
			delay = 50 * time.Microsecond
			continue
		}
		time.Sleep(delay)
		delay = min(2*delay, 10*time.Millisecond)
	}
}

// child is a child process, its state letter, process group and number
// of threads.
type child struct {
	pid     int
	state   byte
	pgid    int
	threads int
}

// dead reports a zombie with no thread left running.
func (c child) dead() bool { return c.state == 'Z' && c.threads <= 1 }

// children lists the processes whose parent is this process, except
// those in keep: from the threads' children files where the kernel has
// them (CONFIG_PROC_CHILDREN; a few reads, where a scan of /proc reads
// every process), else from every process's stat.
func children(keep map[int]bool) []child {
	pids, ok := childPids()
	if !ok {
		pids = procstat.PIDs()
	}
	self := os.Getpid()
	var out []child
	for _, pid := range pids {
		if keep[pid] || pid == self {
			continue
		}
		st, ok := procstat.Read(pid)
		if !ok || st.PPID != self {
			continue
		}
		out = append(out, child{pid: pid, state: st.State, pgid: st.PGID, threads: st.Threads})
	}
	return out
}

// childPids reads the children files of this process's threads.
func childPids() ([]int, bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, false
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && t.Name() == strconv.Itoa(os.Getpid()) {
				return nil, false // no CONFIG_PROC_CHILDREN
			}
			continue // a thread that exited meanwhile
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out, true
}
