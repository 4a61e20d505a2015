package backendtest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
)

// lineWaiter reads a stream line by line and reports each line on a
// channel, so a check can wait for output that arrives while the command
// still runs.
func lineWaiter(r io.Reader) <-chan string {
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- strings.TrimRight(sc.Text(), "\r")
		}
	}()
	return ch
}

// await waits for a line containing want, failing after 20 s.
func await(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended before %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no %q in 20 s", want)
		}
	}
}

// ended waits up to limit for a Run started by CheckStdio to return, and
// returns its Result; else the test fails with why.
func ended(t *testing.T, res <-chan *executor.Result, errc <-chan error, limit time.Duration, why string) *executor.Result {
	t.Helper()
	select {
	case err := <-errc:
		require.NoError(t, err)
	case <-time.After(limit):
		t.Fatal(why)
	}
	return <-res
}

// CheckStdio runs the wrapper's streams through x (executor.Request.Stdio):
//   - pipes: output is streamed while the command runs (it waits for input
//     that the check writes only after seeing the first line), input is
//     passed through, stderr is separate, the exit status is kept, and
//     the Result keeps the output too;
//   - a terminal: the command's descriptors are a terminal of the given
//     size, and ^C written to it interrupts the command;
//   - a signal sent on Stdio.Signals ends the command.
//
// req returns a well-formed request running the command it is given.
// handlesInterrupt says whether the command receives ^C's SIGINT itself
// (landlock, local); false where the sandbox ends with it (bwrap: the
// interrupt reaches bubblewrap's own process, in the same process group,
// which dies and takes the sandbox with it).
func CheckStdio(t *testing.T, x executor.Executor, handlesInterrupt bool, req func(cmd string) *executor.Request) {
	t.Helper()
	run := func(r *executor.Request) (<-chan *executor.Result, <-chan error) {
		res, errc := make(chan *executor.Result, 1), make(chan error, 1)
		go func() {
			out, err := x.Run(t.Context(), r)
			res <- out
			errc <- err
		}()
		return res, errc
	}

	t.Run("pipes", func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		errR, errW := io.Pipe()
		r := req(`echo first; read line; echo "got $line"; echo to-stderr >&2; exit 7`)
		r.Stdio = &executor.Stdio{Stdin: inR, Stdout: outW, Stderr: errW}
		res, errc := run(r)
		out, errLines := lineWaiter(outR), lineWaiter(errR)
		await(t, out, "first") // streamed: the command is still waiting
		_, err := io.WriteString(inW, "typed\n")
		require.NoError(t, err)
		await(t, out, "got typed")
		await(t, errLines, "to-stderr")
		require.NoError(t, <-errc)
		got := <-res
		inW.Close()
		outW.Close()
		errW.Close()
		assert.Equal(t, 7, got.ExitCode, "the exit status is the command's")
		assert.Equal(t, "first\ngot typed\n", string(got.Stdout), "the Result keeps the output too")
	})

	t.Run("stdin eof", func(t *testing.T) {
		var out strings.Builder
		r := req(`wc -c`)
		r.Stdio = &executor.Stdio{Stdin: strings.NewReader(strings.Repeat("x", 100000)), Stdout: &out}
		res, err := x.Run(t.Context(), r)
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode)
		assert.Equal(t, "100000", strings.TrimSpace(out.String()), "all of stdin arrived, and its end")
	})

	t.Run("terminal", func(t *testing.T) {
		// A program started in the background of a shell without job
		// control (a CI script's `cmd &`) inherits SIGINT ignored, and so
		// would the command: a shell cannot trap a signal ignored when it
		// starts. The wrapper (sandbox-probe run) handles SIGINT itself,
		// which gives its children the default disposition; so does this
		// check while it runs.
		sigint := make(chan os.Signal, 1)
		signal.Notify(sigint, os.Interrupt)
		defer signal.Stop(sigint)
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		r := req(`test -t 0 && test -t 1 && test -t 2 && echo all-tty; stty size; trap 'echo interrupted; exit 5' INT; echo ready; while :; do sleep 0.1; done`)
		r.Stdio = &executor.Stdio{Stdin: inR, Stdout: outW, Terminal: &executor.Terminal{Rows: 33, Cols: 101}}
		res, errc := run(r)
		out := lineWaiter(outR)
		await(t, out, "all-tty")
		await(t, out, "33 101")
		await(t, out, "ready")
		_, err := inW.Write([]byte{3}) // ^C, typed on the command's terminal
		require.NoError(t, err)
		got := ended(t, res, errc, 20*time.Second, "^C did not interrupt the command")
		inW.Close()
		outW.Close()
		if handlesInterrupt {
			assert.Equal(t, 5, got.ExitCode, "the command's own trap ran: %q", got.Stdout)
			assert.Contains(t, string(got.Stdout), "interrupted")
		} else {
			assert.Equal(t, "interrupt", got.Signal, "^C ended the sandbox: %q", got.Stdout)
		}
	})

	t.Run("terminal held by a survivor", func(t *testing.T) {
		// A process that left the command's tree (setsid) keeps the
		// terminal open: Run still returns once the command ended.
		inR, inW := io.Pipe()
		defer inW.Close()
		var out strings.Builder
		r := req(`setsid sleep 27.182818 & sleep 0.3; echo started`)
		r.Stdio = &executor.Stdio{Stdin: inR, Stdout: &out, Terminal: &executor.Terminal{}}
		res, errc := run(r)
		got := ended(t, res, errc, 20*time.Second, "Run waits for a process outside the command that holds its terminal")
		assert.Equal(t, 0, got.ExitCode)
		assert.Contains(t, out.String(), "started")
		_ = exec.Command("pkill", "-f", "sleep 27.182818").Run() // where the executor leaves survivors (local)
	})

	t.Run("terminal hangup", func(t *testing.T) {
		// The caller's terminal goes away (its input ends): the command
		// gets SIGHUP; one that ignores it is ended after the grace.
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		r := req(`trap '' HUP; echo ready; while :; do sleep 0.1; done`)
		r.Stdio = &executor.Stdio{Stdin: inR, Stdout: outW, Terminal: &executor.Terminal{}}
		res, errc := run(r)
		await(t, lineWaiter(outR), "ready")
		inW.Close()
		got := ended(t, res, errc, procgroup.HangupGrace+20*time.Second, "a command that ignores SIGHUP outlived its terminal")
		outW.Close()
		assert.True(t, got.TimedOut || got.Signal != "", "ended: %+v", got)
	})

	t.Run("signal", func(t *testing.T) {
		outR, outW := io.Pipe()
		sigs := make(chan os.Signal, 1)
		r := req(`echo ready; while :; do sleep 0.1; done`)
		r.Stdio = &executor.Stdio{Stdout: outW, Signals: sigs}
		res, errc := run(r)
		await(t, lineWaiter(outR), "ready")
		sigs <- syscall.SIGTERM
		got := ended(t, res, errc, 20*time.Second, "SIGTERM did not reach the command")
		outW.Close()
		assert.Equal(t, -1, got.ExitCode)
		assert.NotEmpty(t, got.Signal)
	})
}
