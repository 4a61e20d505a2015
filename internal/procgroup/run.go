package procgroup

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/launcher"
	"github.com/cordon-sandbox/cordon/internal/outbuf"
)

// Run runs s to completion and returns its result. It returns an error only
// when the command could not be started (*SpecError, *StartError) or ctx
// was already done; a non-zero exit, a signal, a timeout or ctx ending
// while the command runs are reported in the Result.
func Run(ctx context.Context, s *Spec) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx) // a terminal's hangup ends the command
	defer cancel()
	r, err := s.resolve()
	if err != nil {
		return nil, err
	}
	var st *streams
	if s.Stdio != nil && s.Stdio.Terminal != nil {
		st, err = terminal(s.Stdio.Terminal)
	} else {
		st, err = pipes(s.Stdio)
	}
	if err != nil {
		return nil, &StartError{Path: s.Path, Dir: s.Dir, Err: err}
	}
	began := time.Now()
	proc, err := start(s, r, st)
	st.closeChild()
	if err != nil {
		st.closeAll()
		return nil, err
	}

	stdout := outbuf.NewHeadTail(r.limit)
	stderr := outbuf.NewHeadTail(r.limit)
	var ws []io.Writer
	var fs []*os.File
	for i, w := range []io.Writer{stdout, stderr} {
		if st.parent[i] == nil {
			continue
		}
		if s.Stdio != nil {
			w = tee{w, []io.Writer{s.Stdio.Stdout, s.Stdio.Stderr}[i]}
		}
		ws, fs = append(ws, w), append(fs, st.parent[i])
	}
	drained := readAll(ws, fs)
	ended := make(chan struct{})
	if s.Stdio != nil {
		input := feedInput(st, s.Stdio.Stdin)
		go forwardSignals(proc.Pid, s.Stdio.Signals, ended)
		if st.ctty && s.Stdio.Stdin != nil {
			go hangup(proc.Pid, input, ended, cancel)
		}
	}

	timedOut, state := supervise(ctx, proc, s.Timeout, nil)
	close(ended)
	r.release()
	if s.Exited != nil {
		s.Exited()
	}
	awaitOutput(drained, r.waitDelay, fs...)
	if st.feed != nil {
		st.feed.Close()
	}

	res := result(proc.Pid, state, timedOut)
	res.Stdout = stdout.Bytes()
	res.Stderr = stderr.Bytes()
	res.Truncated = stdout.Truncated() || stderr.Truncated()
	res.Duration = time.Since(began)
	return res, nil
}

// start forks the command on the launcher with the streams' descriptors
// (stdin /dev/null unless given) and the spec's extra files.
func start(s *Spec, r *resolved, st *streams) (*os.Process, error) {
	sys, err := sysProcAttr()
	if err != nil {
		return nil, &StartError{Path: s.Path, Dir: s.Dir, Err: err}
	}
	if st.ctty {
		// Descriptor 0, the terminal, becomes the new session's
		// controlling terminal.
		setCtty(sys)
	}
	stdin := r.launcher.DevNull()
	if st.stdin != nil {
		stdin = st.stdin
	}
	files := append([]*os.File{stdin, st.stdout, st.stderr}, s.ExtraFiles...)
	attr := &os.ProcAttr{Dir: s.Dir, Env: r.env, Files: files, Sys: sys}
	startProcess := r.launcher.StartProcess
	if r.startProc != nil {
		startProcess = r.startProc
	}
	var proc *os.Process
	if r.netns != nil {
		proc, err = startInNetNS(r, startProcess, attr)
	} else {
		proc, err = startProcess(r.path, r.args, attr)
	}
	if err != nil {
		return nil, &StartError{Path: s.Path, Dir: s.Dir, Err: err}
	}
	if s.Started != nil {
		s.Started(proc.Pid)
	}
	return proc, nil
}

// startInNetNS starts the child from a launcher thread of its own inside
// r.netns: the launcher's own start runs there, and a custom starter is
// run on that thread. The thread is kept until the child has been reaped
// (r.release): a parent-death signal (bwrap's --die-with-parent,
// PR_SET_PDEATHSIG) fires when the thread that forked the child exits,
// not the process.
func startInNetNS(r *resolved, startProcess func(string, []string, *os.ProcAttr) (*os.Process, error), attr *os.ProcAttr) (*os.Process, error) {
	l, err := launcher.NewWithDefaultSetup(r.netns.EnterThread)
	if err != nil {
		return nil, err
	}
	var proc *os.Process
	if r.startProc == nil {
		proc, err = l.StartProcess(r.path, r.args, attr)
	} else if rerr := l.Run(func() { proc, err = startProcess(r.path, r.args, attr) }); rerr != nil {
		err = rerr
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	r.held = l
	return proc, nil
}

// release ends the launcher thread kept for a child started in a network
// namespace, once the child has been reaped.
func (r *resolved) release() {
	if r.held != nil {
		r.held.Close()
		r.held = nil
	}
}

// supervise waits for the leader to exit. When ctx ends, the timeout fires
// or kill is closed first, it freezes and kills the whole tree. Either way it
// then kills what is left of the process group and reaps the leader.
// timedOut is set for ctx and timeout, not for kill.
func supervise(ctx context.Context, proc *os.Process, timeout time.Duration, kill <-chan struct{}) (timedOut bool, state *os.ProcessState) {
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		state, _ = waitExited(proc)
	}()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	killed := false
	select {
	case <-exited:
	case <-ctx.Done():
		killed, timedOut = true, true
	case <-expired:
		killed, timedOut = true, true
	case <-kill:
		killed = true
	}
	if killed {
		select {
		case <-exited: // it exited by itself meanwhile
			killed, timedOut = false, false
		default:
			killTree(proc.Pid)
			<-exited
		}
	}
	// The leader has exited but is not reaped yet (where waitExited can
	// wait without reaping), so its pid still names only this group.
	killGroup(proc.Pid)
	if state == nil {
		state, _ = proc.Wait()
	}
	return timedOut, state
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readAll copies each file into its writer until EOF or until the file is
// closed, and closes the returned channel when all copies are done.
func readAll(ws []io.Writer, fs []*os.File) <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range fs {
		wg.Go(func() {
			buf := copyBufs.Get().(*[]byte)
			defer copyBufs.Put(buf)
			for {
				n, err := fs[i].Read(*buf)
				if n > 0 {
					_, _ = ws[i].Write((*buf)[:n])
				}
				if err != nil {
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	return done
}

// tee writes to the kept buffer, then to the caller's stream (when any),
// whose errors do not stop the copy: a caller that stopped reading still
// gets a Result.
type tee struct {
	kept   io.Writer
	stream io.Writer
}

func (t tee) Write(p []byte) (int, error) {
	n, err := t.kept.Write(p)
	if t.stream != nil {
		_, _ = t.stream.Write(p)
	}
	return n, err
}

// forwardSignals delivers each signal to the process group pgid until
// ended is closed.
func forwardSignals(pgid int, sigs <-chan os.Signal, ended <-chan struct{}) {
	if sigs == nil {
		return
	}
	for {
		select {
		case <-ended:
			return
		case sig := <-sigs:
			if ss, ok := sig.(syscall.Signal); ok {
				signalGroup(pgid, ss)
			}
		}
	}
}

// awaitOutput waits up to delay for the readers to reach EOF, then closes
// the read ends (which ends the readers) and waits for them.
func awaitOutput(drained <-chan struct{}, delay time.Duration, fs ...*os.File) {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
	}
	for _, f := range fs {
		f.Close()
	}
	<-drained
}

// result interprets the leader's exit status.
func result(pid int, state *os.ProcessState, timedOut bool) *Result {
	res := &Result{Pid: pid, ExitCode: -1, TimedOut: timedOut}
	if state == nil {
		return res
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
	} else if !timedOut {
		res.ExitCode = state.ExitCode()
	}
	return res
}

// errUnsupported is wrapped by the stubs of platforms without process groups.
var errUnsupported = errors.ErrUnsupported
