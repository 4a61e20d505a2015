//go:build linux

package docker

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/pkg/stdcopy"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor"
)

// runnerSupported is true: the command runner works with a local engine.
const runnerSupported = true

// runnerMount is where the control directory appears in the container.
const runnerMount = "/.cordon-run"

// runnerScript is the session's command runner, one exec per container:
// for each request id read from its stdin it starts, double-forked (so
// the runner never collects zombies), a supervisor that opens the
// request's three FIFOs (ctl, out, err), runs the request's script in a
// session of its own with setsid, reports "pid N" and "exit STATUS" on
// ctl, and kills what is left of the command's process group. It runs
// each id once: commands run as the runner's user and can write to its
// stdin (/proc/PID/fd/0), so an id may be replayed; what a replay still
// starts (an id of a request not yet sent) is the host's own script, and
// the sweep (sweep_linux.go) trusts neither the reports on ctl nor the
// number of supervisors. The control directory is mounted read-only:
// commands cannot plant or replace anything in it.
const runnerScript = `d=$1
command -v setsid >/dev/null 2>&1 || { echo 'no setsid' >"$d/$2"; exit 1; }
echo "ready $$" >"$d/$2"
seen=
while IFS= read -r id; do
	case $id in ''|*[!0-9a-f]*) continue ;; esac
	case "$seen " in *" $id "*) continue ;; esac
	seen="$seen $id"
	( ( exec 3>"$d/$id.ctl" 4>"$d/$id.out" 5>"$d/$id.err" </dev/null
	    setsid /bin/sh "$d/$id.sh" >&4 2>&5 4>&- 5>&- &
	    p=$!
	    exec 4>&- 5>&-
	    echo "pid $p" >&3
	    wait "$p"
	    echo "exit $?" >&3
	    kill -s KILL -- "-$p" 2>/dev/null
	  ) & )
done`

// runner is a box's command runner (see runnerScript): the fast path,
// a few forks per command instead of an engine exec (which costs a
// runtime exec, tens of milliseconds).
type runner struct {
	dir    string // the control directory on the host
	hj     types.HijackedResponse
	wmu    sync.Mutex
	dead   chan struct{} // closed when the runner's stream ends
	execID string
}

// controlDir makes the host directory a box's runner works in.
func controlDir() (string, error) {
	d, err := os.MkdirTemp("", controlPrefix)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	return d, nil
}

// controlMount is the read-only bind of a box's control directory.
func controlMount(dir string) mount.Mount {
	return mount.Mount{Type: mount.TypeBind, Source: dir, Target: runnerMount, ReadOnly: true,
		BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate, NonRecursive: true}}
}

// fifo is the host's end of one FIFO of the control directory: a read end
// and, until the container side has opened it, a write end of the host's
// own, so that a read before then waits instead of seeing end of file.
type fifo struct {
	r, hold *os.File
}

func newFIFO(path string) (*fifo, error) {
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return nil, &os.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &fifo{r: r, hold: w}, nil
}

// release drops the host's write end: the read end now sees end of file
// once the container's writers are gone.
func (f *fifo) release() {
	if f.hold != nil {
		f.hold.Close()
		f.hold = nil
	}
}

func (f *fifo) close() {
	f.release()
	f.r.Close()
}

// startRunner starts b's runner and waits for it to report ready. It
// returns nil (the box then runs every command as an exec of its own)
// when the runner cannot work here.
func (x *Executor) startRunner(ctx context.Context, b *box) *runner {
	b.starts++
	hello := filepath.Join(b.ctlDir, "hello"+strconv.Itoa(b.starts))
	f, err := newFIFO(hello)
	if err != nil {
		x.log.Debug("docker: no command runner", "err", err)
		return nil
	}
	defer f.close()
	id, err := x.cli.ContainerExecCreate(ctx, b.id, container.ExecOptions{
		User: x.user, AttachStdin: true, AttachStdout: true, AttachStderr: true, WorkingDir: "/",
		Cmd: []string{executor.Shell, "-c", runnerScript, "cordon-runner", runnerMount, filepath.Base(hello)},
	})
	if err != nil {
		x.log.Debug("docker: no command runner", "err", err)
		return nil
	}
	hj, err := x.cli.ContainerExecAttach(ctx, id.ID, container.ExecAttachOptions{})
	if err != nil {
		x.log.Debug("docker: no command runner", "err", err)
		return nil
	}
	r := &runner{dir: b.ctlDir, hj: hj, dead: make(chan struct{}), execID: id.ID}
	var msg limitBuffer
	go func() {
		defer close(r.dead)
		_, _ = stdcopy.StdCopy(&msg, &msg, hj.Reader)
		x.log.Debug("docker: the command runner ended", "container", shortID(b.id), "output", msg.String())
	}()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(io.LimitReader(f.r, 256)).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		f := strings.Fields(s)
		if len(f) != 2 || f[0] != "ready" {
			x.log.Debug("docker: no command runner", "said", s)
			break
		}
		if !x.sweeps {
			return r
		}
		// The sweep keeps the runner's session (its supervisors) alive:
		// without its pid every supervisor would be taken for a
		// process that left a command's tree.
		inner, _ := strconv.Atoi(f[1])
		pid, err := x.runnerPid(ctx, b, inner)
		if err == nil {
			x.mu.Lock()
			b.runnerPids = append(b.runnerPids, pid)
			x.mu.Unlock()
			return r
		}
		x.log.Debug("docker: no command runner: its pid is unknown", "err", err)
	case <-r.dead:
		x.log.Debug("docker: no command runner: it ended", "output", msg.String())
	case <-time.After(5 * time.Second):
		x.log.Debug("docker: no command runner: it did not report ready")
	}
	f.release() // unblocks the reader
	hj.Close()
	return nil
}

// maxRunnerStarts bounds how often a box's runner is started (a command
// may kill it: commands of a session can signal each other); after that
// the box runs commands as execs of their own.
const maxRunnerStarts = 4

// runnerOf returns b's runner, starting a new one when the last one has
// ended and the box has starts left.
func (x *Executor) runnerOf(ctx context.Context, b *box) (*runner, error) {
	b.rmu.Lock()
	defer b.rmu.Unlock()
	x.mu.Lock()
	r := b.run
	x.mu.Unlock()
	if r.alive() {
		return r, nil
	}
	if b.ctlDir == "" || b.starts >= maxRunnerStarts {
		return nil, nil
	}
	if r != nil {
		r.close()
	}
	r = x.startRunner(ctx, b)
	x.mu.Lock()
	b.run = r
	x.mu.Unlock()
	return r, nil
}

// alive reports whether r (nil: no runner) still runs.
func (r *runner) alive() bool {
	if r == nil {
		return false
	}
	select {
	case <-r.dead:
		return false
	default:
		return true
	}
}

func (r *runner) send(id string) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	select {
	case <-r.dead:
		return errors.New("the command runner has ended")
	default:
	}
	_ = r.hj.Conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := io.WriteString(r.hj.Conn, id+"\n")
	return err
}

func (r *runner) close() {
	if r != nil {
		r.hj.Close()
	}
}

// runnerScriptFor returns the script a runner runs for one command: it
// sets the environment to exactly env, changes to dir (reporting
// "nodir" on the control FIFO if it cannot), and execs /bin/sh -c
// command. ok is false when a variable name is not a shell identifier:
// such commands run as an exec of their own.
func runnerScriptFor(env []string, dir, command string, unset []string) (script string, ok bool) {
	var b strings.Builder
	if len(unset) > 0 {
		b.WriteString("unset " + strings.Join(unset, " ") + "\n")
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !shellName.MatchString(k) {
			return "", false
		}
		q, ok := executor.ShellQuote(v)
		if !ok {
			return "", false
		}
		b.WriteString("export " + k + "=" + q + "\n")
	}
	qd, ok1 := executor.ShellQuote(dir)
	qc, ok2 := executor.ShellQuote(command)
	if !ok1 || !ok2 {
		return "", false
	}
	b.WriteString("cd -- " + qd + " || { echo nodir >&3; exit 126; }\n")
	b.WriteString("exec 3>&-\n")
	b.WriteString("exec " + executor.Shell + " -c " + qc + "\n")
	return b.String(), true
}

// runnerStartWait bounds how long a request may wait for the runner to
// start it.
const runnerStartWait = 10 * time.Second

// errNoFastPath makes the caller run the command as an exec of its own.
var errNoFastPath = errors.New("no fast path for this command")

// fastExec runs req's command through b's runner; it returns
// errNoFastPath (before anything ran) when the command must go through
// exec instead. Arguments are as for exec.
func (x *Executor) fastExec(ctx context.Context, b *box, req *executor.Request, dir string, stdout, stderr io.Writer,
	timeout time.Duration, cancel, kill <-chan struct{}, attached chan<- error) (*execOut, error) {
	r, err := x.runnerOf(ctx, b)
	if err != nil || r == nil {
		return nil, errNoFastPath
	}
	env := req.Env
	script, ok := runnerScriptFor(env, dir, x.command(req), unsetNames(env, x.imageEnv))
	if !ok {
		return nil, errNoFastPath
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	id := hex.EncodeToString(raw)
	base := filepath.Join(r.dir, id)
	var fifos []*fifo
	paths := []string{base + ".sh"}
	defer func() {
		for _, f := range fifos {
			f.close()
		}
		for _, p := range paths {
			_ = os.Remove(p)
		}
	}()
	for _, ext := range []string{".ctl", ".out", ".err"} {
		f, err := newFIFO(base + ext)
		if err != nil {
			return nil, errNoFastPath
		}
		fifos = append(fifos, f)
		paths = append(paths, base+ext)
	}
	if err := writeNew(base+".sh", script); err != nil {
		return nil, errNoFastPath
	}
	ctl, outF, errF := fifos[0], fifos[1], fifos[2]
	started, over, err := b.request(base + ".ctl")
	if err != nil {
		return nil, errNoFastPath
	}
	defer over()
	defer started()

	began := time.Now()
	if err := r.send(id); err != nil {
		x.log.Debug("docker: the command runner is gone; this command runs as an exec", "container", shortID(b.id), "err", err)
		r.close()
		return nil, errNoFastPath
	}
	if attached != nil {
		attached <- nil
	}
	out := &execOut{inspected: -1}
	var wg sync.WaitGroup
	copyTo := func(w io.Writer, f *fifo) {
		defer wg.Done()
		_, _ = io.Copy(w, f.r)
	}
	wg.Add(2)
	go copyTo(stdout, outF)
	go copyTo(stderr, errF)
	// The control reader records the first of each report (a command
	// could open the FIFO and write more) and closes pidSeen and
	// exitSeen when it does; the values are read after those close.
	var (
		pid, status       int
		pidSeen, exitSeen = make(chan struct{}), make(chan struct{})
		nodir             bool
		ctlDone           = make(chan struct{})
	)
	go func() {
		defer close(ctlDone)
		br := bufio.NewReader(io.LimitReader(ctl.r, 4096))
		for {
			line, err := br.ReadString('\n')
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "pid" && !closed(pidSeen):
				if n, err := strconv.Atoi(f[1]); err == nil {
					pid = n
					close(pidSeen)
				}
			case len(f) == 2 && f[0] == "exit" && !closed(exitSeen):
				if n, err := strconv.Atoi(f[1]); err == nil {
					status = n
					close(exitSeen)
				}
			case len(f) == 1 && f[0] == "nodir":
				nodir = true
			}
			if err != nil {
				return
			}
		}
	}()
	streams := make(chan struct{})
	go func() {
		wg.Wait()
		<-ctlDone
		close(streams)
	}()

	startTimer := time.NewTimer(runnerStartWait)
	defer startTimer.Stop()
	cut := x.watch(b, &watchdog{
		streams: streams,
		exited:  exitSeen,
		started: pidSeen,
		startBy: startTimer.C,
		onStarted: func() {
			started()
			ctl.release()
			outF.release()
			errF.release()
			out.started = true
		},
		onStartLost: func() {
			// The runner never took the request (it is gone, or cannot
			// fork): give up on it.
			started()
			out.notes = append(out.notes, "the session's command runner did not start the command")
			r.close()
			for _, f := range fifos {
				f.release()
			}
		},
		kill: func() error { return x.killPid(b, pid) },
		cut: func() {
			for _, f := range fifos {
				f.r.Close()
			}
		},
		close: func() {
			for _, f := range fifos {
				f.close()
			}
		},
	}, out, timeout, cancel, kill)
	// The control reader has returned (streams closed after it): its
	// reports are all in.
	if closed(exitSeen) {
		out.status, out.trailer = status, true
	}
	if closed(pidSeen) {
		out.started = true
	}
	out.duration = time.Since(began)
	if !out.started && out.ended == "" {
		return nil, &SetupError{Stage: "exec", Container: b.id, Message: "the session's command runner did not start the command"}
	}
	if !out.trailer && out.ended == "" && !nodir {
		// The supervisor died before it could report (a command killed
		// it: commands of one session can signal each other).
		out.status = -1
		out.notes = append(out.notes, "the command's exit status was not reported: its supervisor in the container was killed")
	}
	if nodir && out.ended == "" {
		out.started = false
		out.inspected = 126
		return out, nil
	}
	if cut && out.ended == "" {
		// Something that left the command's session keeps the output
		// open: kill the command's tree (its session leader is gone, but
		// the supervisor killed its group; what is left is found by the
		// kill script through its parent, group and session links).
		if err := x.killPid(b, pid); err != nil {
			out.notes = append(out.notes, x.breakBox(b, "killing the command's processes failed: "+err.Error()))
		}
	}
	return out, nil
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// request registers a request of b's runner whose control FIFO is ctl
// (see sweep): started is to be called once its supervisor has reported
// (or it never will), over once the request is over; both may be called
// more than once. It waits while a sweep runs.
func (b *box) request(ctl string) (started, over func(), err error) {
	var st unix.Stat_t
	if err := unix.Stat(ctl, &st); err != nil {
		return nil, nil, err
	}
	k := devIno{uint64(st.Dev), st.Ino}
	b.smu.Lock()
	b.inflight[k] = true
	b.starting++
	b.smu.Unlock()
	started = sync.OnceFunc(func() {
		b.smu.Lock()
		if b.starting--; b.starting == 0 {
			b.idle.Broadcast()
		}
		b.smu.Unlock()
	})
	over = sync.OnceFunc(func() {
		started()
		b.smu.Lock()
		delete(b.inflight, k)
		b.smu.Unlock()
	})
	return started, over, nil
}

// writeNew creates path (never following or replacing anything there)
// with the given content.
func writeNew(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	return errors.Join(err, f.Close())
}

// limitBuffer keeps the first 4 KiB written to it.
type limitBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *limitBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 4096 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
