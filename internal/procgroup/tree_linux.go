package procgroup

import (
	"errors"
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

func (v victim) signal(sig unix.Signal) {
	if v.pidfd >= 0 {
		_ = unix.PidfdSendSignal(v.pidfd, sig, nil, 0)
		return
	}
	_ = unix.Kill(v.pid, sig)
}

// maxRounds bounds the freeze loop against a tree that forks faster than
// it can be stopped (each round stops everything it found, so a real tree
// converges in a few rounds).
const maxRounds = 100

// killTree freezes the leader, its session and process group and all their
// descendants with SIGSTOP until a walk of /proc finds nothing new, then
// SIGKILLs the group and every process found.
func killTree(leader int) {
	found := map[int]victim{}
	defer func() {
		for _, v := range found {
			if v.pidfd >= 0 {
				unix.Close(v.pidfd)
			}
		}
	}()
	for range maxRounds {
		procs := procstat.All()
		children := map[int][]procStat{}
		var queue []procStat
		for _, p := range procs {
			children[p.PPID] = append(children[p.PPID], p)
			if p.PID == leader || p.SID == leader || p.PGID == leader {
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
			if _, ok := found[p.PID]; !ok {
				if v, ok := pin(p); ok {
					v.signal(unix.SIGSTOP)
					found[p.PID] = v
					fresh++
				}
			}
			queue = append(queue, children[p.PID]...)
		}
		if fresh == 0 {
			break
		}
	}
	killGroup(leader)
	for _, v := range found {
		v.signal(unix.SIGKILL)
	}
	awaitExit(found, killWait)
}

// killWait bounds how long killTree waits for the killed processes to
// exit, so that a caller sees them gone when it returns.
const killWait = 2 * time.Second

// awaitExit waits, at most d, until every victim held by a pidfd has
// exited (a pidfd polls readable once its process has exited, whoever
// reaps it). SIGKILL is delivered at once, but a process in the middle of
// a system call or exiting a large address space takes a moment to die.
func awaitExit(found map[int]victim, d time.Duration) {
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
			return
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err != nil && err != unix.EINTR {
			return
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
}
