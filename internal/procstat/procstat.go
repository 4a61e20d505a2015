//go:build linux

// Package procstat reads the fields of /proc/PID/stat that process-tree
// walks need (parent, process group, session, state, threads, start
// time), for procgroup's tree kill and the landlock executor's orphan
// reaper. The kernel's format is parsed by hand: it is one line, and the
// only pitfall is the command name, which may hold spaces and
// parentheses, so fields are split after its last ')'.
package procstat

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Stat is the part of /proc/PID/stat a tree walk needs.
type Stat struct {
	PID, PPID, PGID, SID int
	// State is the state letter (R, S, D, Z, T, …).
	State byte
	// Threads is num_threads.
	Threads int
	// Start is starttime, in clock ticks after boot: with the pid, it
	// names a process (a pid is recycled, the pair is not).
	Start uint64
}

// Read parses /proc/PID/stat; ok is false when the process is gone.
func Read(pid int) (Stat, bool) {
	// Plain open+read into a stack buffer: os.ReadFile's fstat and
	// poller registration double the cost of a walk.
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stat{}, false
	}
	defer unix.Close(fd)
	var buf [1024]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return Stat{}, false
	}
	return Parse(pid, buf[:n])
}

// Parse parses the content of /proc/PID/stat.
func Parse(pid int, b []byte) (Stat, bool) {
	// "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime stime cutime cstime priority nice
	// num_threads itrealvalue starttime ..."
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, false
	}
	st := Stat{PID: pid, State: f[0][0]}
	var err error
	if st.PPID, err = strconv.Atoi(string(f[1])); err != nil {
		return Stat{}, false
	}
	if st.PGID, err = strconv.Atoi(string(f[2])); err != nil {
		return Stat{}, false
	}
	if st.SID, err = strconv.Atoi(string(f[3])); err != nil {
		return Stat{}, false
	}
	if st.Threads, err = strconv.Atoi(string(f[17])); err != nil {
		return Stat{}, false
	}
	if st.Start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return Stat{}, false
	}
	return st, true
}

// PIDs lists every process in /proc.
func PIDs() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]int, 0, len(names))
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// All reads the stat of every process in /proc.
func All() []Stat {
	pids := PIDs()
	out := make([]Stat, 0, len(pids))
	for _, pid := range pids {
		if st, ok := Read(pid); ok {
			out = append(out, st)
		}
	}
	return out
}
