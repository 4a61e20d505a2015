//go:build linux

package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/procgroup"
	"github.com/cordon-sandbox/cordon/internal/procstat"
)

// sweepSupported is true: with the engine on this host's kernel the
// container's processes are in this host's /proc.
const sweepSupported = true

// initProc is the host's view of a container's init: its pid and start
// time (together they name it; a pid alone is recycled).
type initProc struct {
	pid   int
	start uint64
	// shim is init's parent, the engine's shim: the parent of every
	// exec of the container, the command runner included.
	shim int
}

// initOf returns b's container init as the host sees it, found once by
// inspecting the container and checked to be that container's process by
// its cgroup (an engine in a virtual machine reports a pid of another
// kernel; /proc here would name an unrelated process), and again on every
// call by its start time.
func (x *Executor) initOf(ctx context.Context, b *box) (initProc, error) {
	b.nsMu.Lock()
	defer b.nsMu.Unlock()
	if b.init.pid == 0 {
		info, err := x.cli.ContainerInspect(ctx, b.id)
		if err != nil {
			return initProc{}, fmt.Errorf("inspecting the container: %w", err)
		}
		if info.State == nil || info.State.Pid <= 0 {
			return initProc{}, errors.New("the container has no running process")
		}
		pid := info.State.Pid
		cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
		if err != nil || !bytes.Contains(cg, []byte(b.id)) {
			return initProc{}, &foreignKernelError{pid: pid}
		}
		st, ok := procstat.Read(pid)
		if !ok {
			return initProc{}, fmt.Errorf("the container's init (pid %d) has exited", pid)
		}
		b.init = initProc{pid: pid, start: st.Start, shim: st.PPID}
	}
	st, ok := procstat.Read(b.init.pid)
	if !ok || st.Start != b.init.start {
		return initProc{}, fmt.Errorf("the container's init (pid %d) has exited", b.init.pid)
	}
	return b.init, nil
}

// foreignKernelError reports a container whose init is not in this
// host's /proc.
type foreignKernelError struct{ pid int }

func (e *foreignKernelError) Error() string {
	return fmt.Sprintf("the container's init (pid %d as the engine reports it) is not in this host's /proc: the engine does not run on this kernel", e.pid)
}

// sweep kills every process in b's container that left a command's tree
// (see the package documentation, "process tree"); it returns a note for
// Result.Violations when it could not, after killing the container.
//
// Such a process is a child of the container's init, other than init's
// own (its idle sleep, in init's session) and the supervisors of the
// runner's requests still under way: the kernel reparents a process whose
// parent exits to the PID namespace's init. A supervisor is told apart
// from the host, not by what it or the command says: it is in a live
// runner's session (a command's processes cannot be: a session id is
// inherited, or is the pid of the process that called setsid, and each
// command starts in a session of its own) and holds as descriptor 3 the
// control FIFO of a request the executor has sent and not yet seen end.
// So the supervisor of a request that is over goes, with whatever still
// runs below it (a command that forged its report on the control FIFO
// and stayed), and so does a supervisor started by a replayed request id
// (a command can write to the runner's stdin) once that request is over.
// Requests do not start during a sweep, and a sweep waits for those
// starting (a supervisor opens its FIFO before it reports). Commands run
// as execs of their own are children of the engine's shim, not of init.
// What is found is killed with procgroup.KillTrees (stopped in rounds,
// pinned by pidfds, then killed), descendants included.
func (x *Executor) sweep(ctx context.Context, b *box) string {
	if !x.sweeps || x.noSweep.Load() {
		return ""
	}
	in, err := x.initOf(ctx, b)
	var foreign *foreignKernelError
	switch {
	case errors.As(err, &foreign):
		// Not a command's doing: the engine runs elsewhere (a virtual
		// machine behind a local socket). Declared from now on.
		if x.noSweep.CompareAndSwap(false, true) {
			x.log.Warn("docker: processes that leave a command's tree cannot be killed", "err", err)
		}
		return "processes that leave a command's tree cannot be killed: " + err.Error()
	case err != nil:
		return "" // the container is gone: so is every process in it
	}
	// No request starts while the sweep runs (its supervisor would have
	// no control FIFO open yet), and the sweep waits for those starting.
	b.smu.Lock()
	defer b.smu.Unlock()
	for b.starting > 0 {
		b.idle.Wait()
	}
	runners := x.runnerSessions(b, in)
	stray := func(p procstat.Stat) bool {
		if p.PPID != in.pid || p.SID == in.pid || (p.State == 'Z' && p.Threads <= 1) {
			return false
		}
		return !runners[p.SID] || !b.inflight[controlOf(p.PID)]
	}
	if !slices.ContainsFunc(childrenOf(in.pid), stray) {
		return ""
	}
	n, err := procgroup.KillTrees(stray)
	x.log.Debug("docker: killed processes that left a command's tree", "container", shortID(b.id), "count", n, "err", err)
	if err != nil {
		return x.breakBox(b, "killing processes that left a command's tree failed: "+err.Error())
	}
	return ""
}

// controlOf returns the file a runner's supervisor holds as descriptor
// 3 (the control FIFO of its request), as the host sees it.
func controlOf(pid int) devIno {
	var st unix.Stat_t
	if unix.Stat("/proc/"+strconv.Itoa(pid)+"/fd/3", &st) != nil {
		return devIno{}
	}
	return devIno{uint64(st.Dev), st.Ino}
}

// runnerSessions returns the sessions of the live command runners of b
// (a runner is an exec: a session leader whose parent is the engine's
// shim, init's parent).
func (x *Executor) runnerSessions(b *box, in initProc) map[int]bool {
	live := map[int]bool{}
	x.mu.Lock()
	runners := slices.Clone(b.runnerPids)
	x.mu.Unlock()
	for _, r := range runners {
		if st, ok := procstat.Read(r); ok && st.SID == r && st.PPID == in.shim && in.shim > 1 {
			live[r] = true
		}
	}
	return live
}

// childrenOf returns the processes whose parent is pid: from its
// threads' children files where the kernel has them
// (CONFIG_PROC_CHILDREN), else from a walk of /proc.
func childrenOf(pid int) []procstat.Stat {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	var pids []int
	ok := err == nil
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			if t.Name() == strconv.Itoa(pid) {
				ok = false
				break
			}
			continue
		}
		for f := range strings.FieldsSeq(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	var out []procstat.Stat
	if !ok {
		for _, st := range procstat.All() {
			if st.PPID == pid {
				out = append(out, st)
			}
		}
		return out
	}
	for _, c := range pids {
		if st, ok := procstat.Read(c); ok && st.PPID == pid {
			out = append(out, st)
		}
	}
	return out
}

// runnerPid returns the host pid of b's runner, which said its pid in
// the container is inner: the exec (a child of the engine's shim, the
// parent of the container's init, and a session leader) whose innermost
// NSpid is inner. (The engine's exec inspection may not know the pid yet
// when the runner already runs.)
func (x *Executor) runnerPid(ctx context.Context, b *box, inner int) (int, error) {
	in, err := x.initOf(ctx, b)
	if err != nil {
		return 0, err
	}
	if in.shim <= 1 {
		return 0, fmt.Errorf("the container's init (pid %d) has no shim", in.pid)
	}
	for _, c := range childrenOf(in.shim) {
		if c.SID != c.PID || c.PID == in.pid {
			continue
		}
		if nspid(c.PID) == inner {
			return c.PID, nil
		}
	}
	return 0, fmt.Errorf("no exec of the container has pid %d in it", inner)
}

// nspid returns the pid of process pid in its innermost PID namespace
// (the last field of NSpid in /proc/PID/status, Linux 4.1), or 0.
func nspid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}
