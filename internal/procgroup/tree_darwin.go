package procgroup

import (
	"os"

	"golang.org/x/sys/unix"
)

// waitExited reaps the leader: Darwin has no waitid(WNOWAIT) in x/sys.
func waitExited(p *os.Process) (*os.ProcessState, error) { return p.Wait() }

// killTree freezes the leader, its process group and all their descendants
// (from kern.proc.all) with SIGSTOP until nothing new appears, then SIGKILLs
// the group and every process found.
func killTree(leader int) {
	found := map[int]bool{}
	for range 100 {
		procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
		if err != nil {
			break
		}
		children := map[int][]int{}
		var queue []int
		for _, kp := range procs {
			pid, ppid, pgid := int(kp.Proc.P_pid), int(kp.Eproc.Ppid), int(kp.Eproc.Pgid)
			children[ppid] = append(children[ppid], pid)
			if pid == leader || pgid == leader || found[pid] {
				queue = append(queue, pid)
			}
		}
		seen := map[int]bool{}
		fresh := 0
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			if seen[pid] {
				continue
			}
			seen[pid] = true
			if !found[pid] {
				_ = unix.Kill(pid, unix.SIGSTOP)
				found[pid] = true
				fresh++
			}
			queue = append(queue, children[pid]...)
		}
		if fresh == 0 {
			break
		}
	}
	killGroup(leader)
	for pid := range found {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}
