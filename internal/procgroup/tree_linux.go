package procgroup

import (
	"time"

	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
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
type procStat struct {
	pid, ppid, pgid, sid int
	start                uint64 // starttime, clock ticks after boot
}

// readStat parses /proc/PID/stat; ok is false when the process is gone.
func readStat(pid int) (procStat, bool) {
	// Plain open+read into a stack buffer: os.ReadFile's fstat and
	// poller registration double the cost of a walk.
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, false
	}
	defer unix.Close(fd)
	var buf [1024]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	return parseStat(pid, buf[:n])
}

func parseStat(pid int, b []byte) (procStat, bool) {
	// "pid (comm) state ppid pgrp session tty_nr ... starttime ...";
	// comm may hold spaces and parentheses, so split after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	st := procStat{pid: pid}
	var err error
	if st.ppid, err = strconv.Atoi(string(f[1])); err != nil {
		return procStat{}, false
	}
	if st.pgid, err = strconv.Atoi(string(f[2])); err != nil {
		return procStat{}, false
	}
	if st.sid, err = strconv.Atoi(string(f[3])); err != nil {
		return procStat{}, false
	}
	if st.start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return procStat{}, false
	}
	return st, true
}

// listProcs reads the stat of every process on the host.
func listProcs() []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procStat, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// victim is a process found by the walk, pinned by a pidfd where the kernel
// has them.
type victim struct {
	pid   int
	pidfd int // -1: signal by pid
}

// pin opens st.pid as a pidfd and checks that it is still the process the
// walk saw (same start time); ok is false when it is gone or recycled.
func pin(st procStat) (victim, bool) {
	fd, err := unix.PidfdOpen(st.pid, 0)
	switch {
	case errors.Is(err, unix.ENOSYS):
		fd = -1
	case err != nil:
		return victim{}, false // ESRCH: gone
	}
	now, ok := readStat(st.pid)
	if !ok || now.start != st.start {
		if fd >= 0 {
			unix.Close(fd)
		}
		return victim{}, false
	}
	return victim{pid: st.pid, pidfd: fd}, true
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
		procs := listProcs()
		children := map[int][]procStat{}
		var queue []procStat
		for _, p := range procs {
			children[p.ppid] = append(children[p.ppid], p)
			if p.pid == leader || p.sid == leader || p.pgid == leader {
				queue = append(queue, p)
			} else if _, ok := found[p.pid]; ok {
				queue = append(queue, p)
			}
		}
		seen := map[int]bool{}
		fresh := 0
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if seen[p.pid] {
				continue
			}
			seen[p.pid] = true
			if _, ok := found[p.pid]; !ok {
				if v, ok := pin(p); ok {
					v.signal(unix.SIGSTOP)
					found[p.pid] = v
					fresh++
				}
			}
			queue = append(queue, children[p.pid]...)
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
