//go:build linux

package landlock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
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

// maxSweepRounds bounds a sweep against children that fork faster than
// they are killed (each round kills every child it found).
const maxSweepRounds = 1000

// sweep kills and reaps every child of this process not in keep, until
// there is none: a killed child's own children are reparented here
// before waiting for it returns.
func sweep(keep map[int]bool) int {
	n := 0
	for range maxSweepRounds {
		kids := children(keep)
		if len(kids) == 0 {
			return n
		}
		for _, pid := range kids {
			// A child is not recycled before it is reaped here, so its
			// pid names it until the wait below.
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		for _, pid := range kids {
			for {
				_, err := unix.Wait4(pid, nil, 0, nil)
				if !errors.Is(err, unix.EINTR) {
					break
				}
			}
			n++
		}
	}
	return n
}

// children lists the processes whose parent is this process, except
// those in keep.
func children(keep map[int]bool) []int {
	self := os.Getpid()
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || keep[pid] || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces and
		// parentheses, so split after the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(string(f[1])); err == nil && ppid == self {
			out = append(out, pid)
		}
	}
	return out
}
