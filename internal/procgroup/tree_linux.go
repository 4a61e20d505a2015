package procgroup

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/procstat"
)

// waitExited blocks until the leader has exited without reaping it, so its
// pid (and with it the process group and session id) cannot be recycled
// while the group is killed.
func waitExited(p *os.Process) (*os.ProcessState, error) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return nil, err
		}
	}
}

// procStat is the part of /proc/PID/stat the tree walk needs.
type procStat = procstat.Stat

// victim is a process found by the walk, pinned by a pidfd where the kernel
// has them.
type victim struct {
	pid   int
	pidfd int // -1: signal by pid
}

// pin opens st.PID as a pidfd and checks that it is still the process the
// walk saw (same start time); ok is false when it is gone or recycled.
func pin(st procStat) (victim, bool) {
	fd, err := unix.PidfdOpen(st.PID, 0)
	switch {
	case errors.Is(err, unix.ENOSYS):
		fd = -1
	case err != nil:
		return victim{}, false // ESRCH: gone
	}
	now, ok := procstat.Read(st.PID)
	if !ok || now.Start != st.Start {
		if fd >= 0 {
			unix.Close(fd)
		}
		return victim{}, false
	}
	return victim{pid: st.PID, pidfd: fd}, true
}

func (v victim) signal(sig unix.Signal) error {
	if v.pidfd >= 0 {
		return unix.PidfdSendSignal(v.pidfd, sig, nil, 0)
	}
	return unix.Kill(v.pid, sig)
}

// maxRounds bounds the freeze loop against a tree that forks faster than
// it can be stopped (each round stops everything it found, so a real tree
// converges in a few rounds).
const maxRounds = 100

// killTree freezes the leader, its session and process group and all their
// descendants with SIGSTOP until a walk of /proc finds nothing new, then
// SIGKILLs the group and every process found.
func killTree(leader int) {
	_, _ = kill(func(p procstat.Stat) bool { return p.PID == leader || p.SID == leader || p.PGID == leader },
		func() { killGroup(leader) })
}

// KillTrees kills every process for which root returns true, and all
// their descendants, race-free: it walks /proc in rounds, pinning each
// process it finds with a pidfd (so a recycled pid is never signalled)
// and stopping it with SIGSTOP, so that nothing found can fork any more,
// until a round finds nothing new (root is asked again on every round:
// a process reparented meanwhile is seen); then it SIGKILLs them all and
// waits (at most two seconds) until they have exited. It returns how
// many processes it killed and an error when one could not be signalled
// (EPERM: another user's process), when the rounds did not converge (a
// tree that forks faster than it can be stopped) or when one was still
// alive after the wait.
//
// Zombies with no thread left are not counted (they cannot run), and
// neither is a process root returns false for, unless it descends from
// one it returned true for.
func KillTrees(root func(procstat.Stat) bool) (int, error) {
	return kill(root, nil)
}

func kill(root func(procstat.Stat) bool, beforeKill func()) (int, error) {
	found := map[int]victim{}
	defer func() {
		for _, v := range found {
			if v.pidfd >= 0 {
				unix.Close(v.pidfd)
			}
		}
	}()
	var errs []error
	converged := false
	for range maxRounds {
		procs := procstat.All()
		children := map[int][]procStat{}
		var queue []procStat
		for _, p := range procs {
			children[p.PPID] = append(children[p.PPID], p)
			if root(p) {
				queue = append(queue, p)
			} else if _, ok := found[p.PID]; ok {
				queue = append(queue, p)
			}
		}
		seen := map[int]bool{}
		fresh := 0
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if seen[p.PID] {
				continue
			}
			seen[p.PID] = true
			if _, ok := found[p.PID]; !ok && !(p.State == 'Z' && p.Threads <= 1) {
				if v, ok := pin(p); ok {
					if err := v.signal(unix.SIGSTOP); err != nil && !errors.Is(err, unix.ESRCH) {
						errs = append(errs, fmt.Errorf("stopping process %d: %w", p.PID, err))
					}
					found[p.PID] = v
					fresh++
				}
			}
			queue = append(queue, children[p.PID]...)
		}
		if fresh == 0 {
			converged = true
			break
		}
	}
	if !converged {
		errs = append(errs, fmt.Errorf("new processes kept appearing after %d rounds", maxRounds))
	}
	if beforeKill != nil {
		beforeKill()
	}
	for _, v := range found {
		if err := v.signal(unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("killing process %d: %w", v.pid, err))
		}
	}
	if left := awaitExit(found, killWait); left > 0 {
		errs = append(errs, fmt.Errorf("%d processes were still alive %v after SIGKILL", left, killWait))
	}
	return len(found), errors.Join(errs...)
}

// killWait bounds how long killTree waits for the killed processes to
// exit, so that a caller sees them gone when it returns.
const killWait = 2 * time.Second

// awaitExit waits, at most d, until every victim held by a pidfd has
// exited (a pidfd polls readable once its process has exited, whoever
// reaps it). SIGKILL is delivered at once, but a process in the middle of
// a system call or exiting a large address space takes a moment to die.
// It returns how many were still alive when it gave up.
func awaitExit(found map[int]victim, d time.Duration) int {
	var fds []unix.PollFd
	for _, v := range found {
		if v.pidfd >= 0 {
			fds = append(fds, unix.PollFd{Fd: int32(v.pidfd), Events: unix.POLLIN})
		}
	}
	deadline := time.Now().Add(d)
	for len(fds) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			return len(fds)
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err != nil && err != unix.EINTR {
			return len(fds)
		}
		if n <= 0 {
			continue
		}
		live := fds[:0]
		for _, f := range fds {
			if f.Revents == 0 {
				f.Revents = 0
				live = append(live, f)
			}
		}
		fds = live
	}
	return 0
}
