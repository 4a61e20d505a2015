package procgroup

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/internal/outbuf"
)

// Process is a command started in the background by Start. Its stdout and
// stderr are merged into one ring buffer of Spec.OutputLimit bytes.
type Process struct {
	pid    int
	out    *outbuf.Ring
	kill   chan struct{}
	once   sync.Once
	done   chan struct{}
	result *Result // set before done is closed
}

// Start starts s in the background and returns at once. ctx only governs
// the start: the process runs until it exits, Spec.Timeout expires or Kill
// is called.
func Start(ctx context.Context, s *Spec) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := s.resolve()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, &StartError{Path: s.Path, Dir: s.Dir, Err: err}
	}
	began := time.Now()
	proc, err := start(s, r, &streams{stdout: outW, stderr: outW})
	outW.Close()
	if err != nil {
		outR.Close()
		return nil, err
	}
	p := &Process{
		pid:  proc.Pid,
		out:  outbuf.NewRing(r.limit),
		kill: make(chan struct{}),
		done: make(chan struct{}),
	}
	drained := readAll([]io.Writer{p.out}, []*os.File{outR})
	go func() {
		timedOut, state := supervise(context.Background(), proc, s.Timeout, p.kill)
		r.release()
		if s.Exited != nil {
			s.Exited()
		}
		awaitOutput(drained, r.waitDelay, outR)
		res := result(proc.Pid, state, timedOut)
		res.Duration = time.Since(began)
		p.result = res
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process id of the command's leader (also its process
// group and session id).
func (p *Process) Pid() int { return p.pid }

// ReadOutput returns the merged output produced since the previous call and
// whether older unread output was dropped because the ring was full.
func (p *Process) ReadOutput() (out []byte, dropped bool) {
	return p.out.ReadNew()
}

// Done is closed when the process has exited, been reaped and its output
// drained.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for Done and returns the result; Stdout holds the output not
// yet consumed by ReadOutput (Wait consumes nothing), Truncated whether
// unread output was dropped.
func (p *Process) Wait() *Result {
	<-p.done
	res := *p.result
	res.Stdout, res.Truncated = p.out.Unread()
	return &res
}

// Kill freezes and kills the whole tree and waits until the leader is
// reaped and the output drained. Killing an exited process does nothing.
func (p *Process) Kill() error {
	p.once.Do(func() { close(p.kill) })
	<-p.done
	return nil
}
