// Package launcher runs every fork of a sandboxed command on a dedicated,
// locked OS thread, so the child inherits per-thread kernel state that the
// rest of the host process never gets.
//
// # The launcher thread
//
// New starts a goroutine that calls runtime.LockOSThread and never unlocks.
// On that OS thread it runs a setup function once — NoNewPrivs sets
// PR_SET_NO_NEW_PRIVS — and then serves Start and StartProcess requests. syscall.forkExec clones the child
// from the calling thread (syscall/exec_linux.go, forkAndExecInChild1:
// rawVforkSyscall(SYS_CLONE, CLONE_VFORK|CLONE_VM|...) on the current
// thread), and no_new_privs is an attribute of the calling task that a
// clone copies, so every child inherits the thread's state at the cost of
// a bare fork+exec.
//
// Never put on a launcher thread a restriction meant to confine the
// commands against the host (a Landlock domain, say): the children share
// the thread's domain, and Landlock lets a task ptrace and signal tasks of
// its own domain, so a command could reach the thread, and through it the
// whole host process, by its TID. The landlock executor restricts each
// command between fork and exec instead.
//
// # Why the state stays on that thread
//
// The Go runtime (Go 1.26, runtime/proc.go) guarantees both directions:
//
//   - No other goroutine runs on it. A locked M only ever executes its
//     locked goroutine: schedule() starts with "if mp.lockedg != 0 {
//     stoplockedm(); execute(mp.lockedg.ptr(), false) }", and a runnable
//     goroutine locked elsewhere is handed to its own M (startlockedm).
//     LockOSThread's doc: "no other goroutine will execute in it".
//   - No new thread is cloned from it. newm() checks "gp.m.lockedExt != 0"
//     ("We're on a locked M ... We don't want to clone that into another
//     thread. Instead, ask a known-good thread to create the thread for
//     us") and queues the M for templateThread, which LockOSThread starts
//     beforehand (startTemplateThread) while the thread is still clean. So
//     goroutines started from the launcher (os/exec's copying goroutines)
//     and Ms created while it runs come from the template thread.
//
// Close makes the goroutine return while still locked; gdestroy then sends
// the M back to mstart, which exits the OS thread instead of returning it to
// the pool ("The goroutine may have locked this thread because it put it in
// an unusual kernel state. Kill it rather than returning it to the thread
// pool."). The main thread is the exception (mexit wedges m0 instead of
// exiting it), so on Linux New never uses the main thread: a goroutine that
// finds itself locked to it keeps it busy until a sibling has locked
// another thread, then unlocks it untouched.
//
// TestNoNewPrivsStaysOnLauncher checks all of this from outside: children of
// a NoNewPrivs launcher show "NoNewPrivs: 1", every other thread of the test
// process (/proc/self/task/*/status), including threads created while the
// launcher runs, keeps 0, and the thread disappears after Close.
//
// # What runs on the thread
//
// Only the start itself: sweeping descriptors (below), os.StartProcess or
// exec.Cmd.Start, which create pipes and clone. Everything on the thread is
// subject to its restrictions, so nothing is opened there per command: the
// launcher opens /dev/null once, before setup, and hands it out for unset
// standard streams. A nil environment never falls back to the parent's.
//
// # Descriptor hygiene
//
// Go passes a descriptor to a child when it lacks FD_CLOEXEC, and os/exec
// does nothing about it. Before every start the launcher marks every
// descriptor >= 3 of the whole process close-on-exec
// (close_range(3, ~0, CLOSE_RANGE_CLOEXEC), falling back to fcntl over
// /proc/self/fd, or /dev/fd elsewhere). This is safe for the host program:
// everything Go's os, net and syscall packages open already carries
// O_CLOEXEC, so for them the sweep changes nothing; the flag only matters at
// exec, so the host's own use of its descriptors is unaffected; and
// descriptors passed deliberately (os.ProcAttr.Files, exec.Cmd.ExtraFiles)
// still reach their child: the child dup2s each onto its target number,
// which yields a descriptor without the flag (and clears the flag with
// fcntl when the number already matches). What changes is that a descriptor the host left
// inheritable on purpose (a systemd socket-activation descriptor, a
// descriptor meant for a later syscall.Exec) stops being inherited
// implicitly by the host's own later execs: pass it explicitly instead.
//
// A descriptor created without O_CLOEXEC by another goroutine between the
// sweep and the clone (a window of microseconds) can still leak; Go itself
// never creates such descriptors on Linux, so only raw syscalls can.
package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// ErrClosed is returned by Start and StartProcess after Close.
var ErrClosed = errors.New("launcher closed")

// SetupError reports a setup function that failed; the launcher thread was
// terminated without serving anything.
type SetupError struct {
	Err error
}

func (e *SetupError) Error() string { return "launcher thread setup: " + e.Err.Error() }

// Unwrap returns Err.
func (e *SetupError) Unwrap() error { return e.Err }

// Launcher is a locked OS thread that forks commands. Use New; a Launcher is
// safe for concurrent use, and requests are served one at a time.
type Launcher struct {
	reqs    chan func()
	quit    chan struct{}
	done    chan struct{}
	devNull *os.File
	tid     int
	once    sync.Once
}

// New starts a launcher thread, runs setup on it (nil: none) and returns
// once setup has returned. If setup fails the thread is terminated and New
// returns a *SetupError.
func New(setup func() error) (*Launcher, error) {
	devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("launcher: opening %s: %w", os.DevNull, err)
	}
	l := &Launcher{
		reqs:    make(chan func()),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		devNull: devNull,
	}
	ready := make(chan error, 1)
	go l.run(setup, ready)
	if err := <-ready; err != nil {
		devNull.Close()
		return nil, err
	}
	return l, nil
}

func (l *Launcher) run(setup func() error, ready chan<- error) {
	runtime.LockOSThread() // never unlocked: returning ends the thread
	if onMainThread() {
		// The main thread cannot be terminated (mexit wedges it), so
		// keep it occupied until a sibling goroutine has locked another
		// thread, then give it back unchanged.
		placed := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(placed)
			l.serve(setup, ready)
		}()
		<-placed
		runtime.UnlockOSThread()
		return
	}
	l.serve(setup, ready)
}

func (l *Launcher) serve(setup func() error, ready chan<- error) {
	defer close(l.done)
	l.tid = threadID()
	if setup != nil {
		if err := setup(); err != nil {
			ready <- &SetupError{Err: err}
			return
		}
	}
	ready <- nil
	for {
		select {
		case fn := <-l.reqs:
			fn()
		case <-l.quit:
			return
		}
	}
}

// do runs fn on the launcher thread and waits for it.
func (l *Launcher) do(fn func()) error {
	finished := make(chan struct{})
	select {
	case l.reqs <- func() { fn(); close(finished) }:
	case <-l.done:
		return ErrClosed
	}
	<-finished
	return nil
}

// Run runs fn on the launcher thread and waits for it; fn must not unlock
// the thread. It is for starters that fork in their own way (cgo) but must
// fork from this thread.
func (l *Launcher) Run(fn func()) error { return l.do(fn) }

// NewWithDefaultSetup starts a launcher thread whose setup is Default's
// (NoNewPrivs where there is one) followed by setup.
func NewWithDefaultSetup(setup func() error) (*Launcher, error) {
	return New(func() error {
		if defaultSetup != nil {
			if err := defaultSetup(); err != nil {
				return err
			}
		}
		return setup()
	})
}

// TID returns the launcher thread's kernel thread id (0 where the platform
// has none).
func (l *Launcher) TID() int { return l.tid }

// DevNull returns the launcher's /dev/null, open read-write. Do not close it.
func (l *Launcher) DevNull() *os.File { return l.devNull }

// StartProcess is os.StartProcess run on the launcher thread after the
// descriptor sweep. A nil attr.Env means an empty environment, nil entries
// of attr.Files among the first three are /dev/null, and a nil attr.Sys is
// an empty SysProcAttr (so os.StartProcess does not stat attr.Dir on the
// launcher thread; a bad Dir fails in the child instead).
func (l *Launcher) StartProcess(name string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	a := *attr
	if a.Env == nil {
		a.Env = []string{}
	}
	if a.Sys == nil {
		a.Sys = &syscall.SysProcAttr{}
	}
	a.Files = append([]*os.File(nil), attr.Files...)
	for len(a.Files) < 3 {
		a.Files = append(a.Files, nil)
	}
	for i := range 3 {
		if a.Files[i] == nil {
			a.Files[i] = l.devNull
		}
	}
	var (
		p   *os.Process
		err error
	)
	if derr := l.do(func() {
		if err = markCloexec(); err != nil {
			return
		}
		p, err = os.StartProcess(name, argv, &a)
	}); derr != nil {
		return nil, derr
	}
	return p, err
}

// Start is cmd.Start run on the launcher thread after the descriptor sweep.
// A nil cmd.Env means an empty environment (never the parent's) and nil
// standard streams are the launcher's /dev/null.
func (l *Launcher) Start(cmd *exec.Cmd) error {
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	if cmd.Stdin == nil {
		cmd.Stdin = l.devNull
	}
	if cmd.Stdout == nil {
		cmd.Stdout = l.devNull
	}
	if cmd.Stderr == nil {
		cmd.Stderr = l.devNull
	}
	var err error
	if derr := l.do(func() {
		if err = markCloexec(); err != nil {
			return
		}
		err = cmd.Start()
	}); derr != nil {
		return derr
	}
	return err
}

// Close stops the launcher: its goroutine returns while locked, so the
// runtime terminates the OS thread. Requests already being served finish
// first. Close is idempotent. Processes started earlier keep running.
func (l *Launcher) Close() error {
	l.once.Do(func() {
		close(l.quit)
		<-l.done
		l.devNull.Close()
	})
	return nil
}

var (
	defaultOnce     sync.Once
	defaultLauncher *Launcher
	defaultErr      error
)

// Default returns the process-wide launcher whose setup is NoNewPrivs (on
// platforms without no_new_privs: no setup), creating it on first use. It
// is never closed.
func Default() (*Launcher, error) {
	defaultOnce.Do(func() {
		defaultLauncher, defaultErr = New(defaultSetup)
	})
	return defaultLauncher, defaultErr
}
