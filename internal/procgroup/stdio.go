package procgroup

import (
	"io"
	"os"
	"syscall"
	"time"
)

// Stdio connects a command run by Run to its caller's streams, for a
// program that wraps another (sandbox-probe run -- agent): its input, its
// output as it is produced, a terminal, signals. Start ignores it.
type Stdio struct {
	// Stdin is copied to the command's standard input until it ends (its
	// EOF closes the command's input); nil means /dev/null. The copy reads
	// Stdin from its own goroutine, which may stay blocked in a read after
	// the command ended (the caller's terminal, say) until the next input
	// or EOF.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output as it is produced,
	// besides the head and tail the Result keeps. Nil drops it.
	Stdout, Stderr io.Writer
	// Terminal, when set, runs the command on a new pseudo-terminal of its
	// own: the terminal's other end is a descriptor of this process, the
	// command's standard input, output and error are the terminal (its
	// output arrives on Stdout; Stderr gets nothing) and it is the
	// controlling terminal of the command's session, so ^C read from
	// Stdin interrupts it. The end of Stdin is a hangup: the command's
	// group gets SIGHUP and, HangupGrace later, the command is ended. The caller's own terminal is never passed to
	// the command, so no ioctl of the command (TIOCSTI, TIOCLINUX) can
	// reach it.
	Terminal *Terminal
	// Signals are delivered to the command's process group as they
	// arrive (a wrapper forwards its SIGINT, SIGTERM, SIGHUP). The
	// command inherits the signals this process ignores: a program
	// started in the background of a shell without job control ignores
	// SIGINT, and so would its command, which then cannot even trap it;
	// a wrapper that handles the signal (signal.Notify, as sandbox-probe
	// run does) gives its commands the default.
	Signals <-chan os.Signal
}

// Terminal is the pseudo-terminal of a command run with Stdio.Terminal.
type Terminal struct {
	// Rows and Cols are its initial size; 0 leaves the default.
	Rows, Cols uint16
	// Resize delivers new sizes (a wrapper's SIGWINCH); nil: none.
	Resize <-chan WindowSize
}

// WindowSize is a terminal's size in characters.
type WindowSize struct{ Rows, Cols uint16 }

// streams are the descriptors a command with Stdio starts with, and what
// Run must do with them after the start.
type streams struct {
	stdin          *os.File // the command's descriptor 0, or nil for /dev/null
	stdout, stderr *os.File // the command's descriptors 1 and 2
	ctty           bool     // make descriptor 0 the controlling terminal
	// parent holds the ends this process reads (index 0: stdout or the
	// terminal; 1: stderr, nil with a terminal) after the start.
	parent [2]*os.File
	// child lists the command's ends, closed here after the start.
	child []*os.File
	// feed writes the caller's input to the command: a pipe's write end
	// or the terminal.
	feed io.WriteCloser
}

// closeChild closes the command's ends in this process.
func (st *streams) closeChild() {
	for _, f := range st.child {
		f.Close()
	}
	st.child = nil
}

// closeAll closes every descriptor (a failed start).
func (st *streams) closeAll() {
	st.closeChild()
	for _, f := range st.parent {
		if f != nil {
			f.Close()
		}
	}
	if st.feed != nil {
		st.feed.Close()
	}
}

// pipes returns the streams of a command without a terminal: a pipe per
// output stream and, with input, one for stdin.
func pipes(io *Stdio) (*streams, error) {
	st := &streams{}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	st.parent[0], st.stdout = outR, outW
	st.child = append(st.child, outW)
	errR, errW, err := os.Pipe()
	if err != nil {
		st.closeAll()
		return nil, err
	}
	st.parent[1], st.stderr = errR, errW
	st.child = append(st.child, errW)
	if io != nil && io.Stdin != nil {
		inR, inW, err := os.Pipe()
		if err != nil {
			st.closeAll()
			return nil, err
		}
		st.stdin, st.feed = inR, inW
		st.child = append(st.child, inR)
	}
	return st, nil
}

// feedInput copies the caller's input to the command and closes its end
// at EOF (or when the command is gone). The returned channel is closed
// when the input ended (never, without input).
func feedInput(st *streams, in io.Reader) <-chan struct{} {
	done := make(chan struct{})
	if in == nil || st.feed == nil {
		return done
	}
	go func() {
		defer close(done)
		_, _ = io.Copy(st.feed, in)
		st.feed.Close()
	}()
	return done
}

// HangupGrace is how long a command on a terminal has, after its input
// ended (the caller's terminal hung up) and it was sent SIGHUP, before
// its whole tree is killed.
const HangupGrace = 5 * time.Second

// hangup watches a terminal's input: when it ends before the command
// (the caller's terminal went away: a read of a hung-up terminal returns
// end of file), the command's group gets SIGHUP, as from a terminal that
// hangs up, and after HangupGrace the command is ended (kill), so that a
// command that ignores SIGHUP does not outlive its terminal.
func hangup(pgid int, input <-chan struct{}, ended <-chan struct{}, kill func()) {
	select {
	case <-ended:
		return
	case <-input:
	}
	signalGroup(pgid, syscall.SIGHUP)
	t := time.NewTimer(HangupGrace)
	defer t.Stop()
	select {
	case <-ended:
	case <-t.C:
		kill()
	}
}
