package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// TestRunWrapsOnTerminal runs `sandbox-probe run` the way a user wraps an
// agent, on a real terminal (a pseudo-terminal this test holds): the
// command gets a terminal of its own (not the caller's: another device),
// of the caller's size; what is typed reaches it; its output streams;
// ^C typed is the command's own interrupt; the exit status is the
// command's; and the caller's terminal gets its mode back.
func TestRunWrapsOnTerminal(t *testing.T) {
	bin, err := exec.LookPath("sandbox-probe")
	require.NoError(t, err, "the test binary registered as sandbox-probe")
	backends := []string{"local", "landlock", "bwrap"}
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			switch b {
			case "landlock":
				x, err := landlock.New(landlock.Config{})
				if err != nil {
					testenv.SkipUnavailable(t, testenv.Landlock, err)
				}
				x.Close()
			case "bwrap":
				x, err := bwrap.New(bwrap.Config{})
				if err != nil {
					testenv.SkipUnavailable(t, testenv.Bwrap, err)
				}
				x.Close()
			}
			root := t.TempDir()
			master, slave, err := pty.Open()
			require.NoError(t, err)
			defer master.Close()
			require.NoError(t, pty.Setsize(master, &pty.Winsize{Rows: 40, Cols: 120}))
			cmd := exec.Command(bin, "run", "--backend", b, "--root", root, "--no-default-policies", "--no-toolchain-caches", "--yes", "--",
				"sh", "-c", `echo "dev=$(stat -L -c %t:%T /proc/self/fd/0)"; stty size; echo ready; read x; echo "got:$x"; trap 'echo caught-int; exit 9' INT; echo waiting; while :; do sleep 0.1; done`)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			require.NoError(t, cmd.Start())
			before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
			require.NoError(t, err)

			lines := make(chan string, 64)
			go func() {
				sc := bufio.NewScanner(master)
				for sc.Scan() {
					lines <- strings.TrimRight(sc.Text(), "\r")
				}
				close(lines)
			}()
			var seen []string
			await := func(pred func(string) bool, what string) string {
				t.Helper()
				timeout := time.After(30 * time.Second)
				for {
					select {
					case l, ok := <-lines:
						if !ok {
							t.Fatalf("output ended before %s: %q", what, seen)
						}
						seen = append(seen, l)
						if pred(l) {
							return l
						}
					case <-timeout:
						t.Fatalf("no %s in 30 s: %q", what, seen)
					}
				}
			}
			dev := await(func(l string) bool { return strings.HasPrefix(l, "dev=") }, "the command's terminal")
			var st unix.Stat_t
			require.NoError(t, unix.Fstat(int(slave.Fd()), &st))
			caller := fmt.Sprintf("dev=%x:%x", unix.Major(st.Rdev), unix.Minor(st.Rdev))
			assert.Regexp(t, `^dev=88:[0-9a-f]+$`, dev, "the command's input is a terminal (a pseudo-terminal, major 136)")
			assert.NotEqual(t, caller, dev, "the command's terminal is its own, not the caller's")
			await(func(l string) bool { return l == "40 120" }, "the caller's size")
			await(func(l string) bool { return l == "ready" }, "ready")
			_, err = master.Write([]byte("typed-line\r"))
			require.NoError(t, err)
			await(func(l string) bool { return strings.Contains(l, "got:typed-line") }, "the typed line")
			await(func(l string) bool { return strings.Contains(l, "waiting") }, "waiting")
			_, err = master.Write([]byte{3}) // ^C on the caller's (raw) terminal
			require.NoError(t, err)

			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err = <-waited:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("^C did not end the command: %q", seen)
			}
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			if b == "bwrap" {
				assert.Equal(t, 128+int(syscall.SIGINT), ee.ExitCode(), "bwrap ends with the interrupt: %q", seen)
			} else {
				assert.Equal(t, 9, ee.ExitCode(), "the command's own trap ran and its status is run's: %q", seen)
			}
			after, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
			require.NoError(t, err)
			assert.Equal(t, before.Lflag&unix.ICANON, after.Lflag&unix.ICANON, "the caller's terminal is back in its mode")
			slave.Close()
		})
	}
}

// TestRunWrapsPipes: without a terminal, input is passed through, output
// streams, and a SIGTERM to run reaches the command, whose status run
// returns.
func TestRunWrapsPipes(t *testing.T) {
	bin, err := exec.LookPath("sandbox-probe")
	require.NoError(t, err)
	root := t.TempDir()
	cmd := exec.Command(bin, "run", "--backend", "local", "--root", root, "--no-default-policies", "--no-toolchain-caches", "--yes", "--",
		"sh", "-c", `read x; echo "got:$x"; trap 'echo caught-term; exit 11' TERM; echo waiting; while :; do sleep 0.1; done`)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	_, err = in.Write([]byte("piped\n"))
	require.NoError(t, err)
	sc := bufio.NewScanner(out)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if sc.Text() == "waiting" {
			break
		}
	}
	assert.Contains(t, seen, "got:piped", "input passed through, output streamed")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for sc.Scan() {
		seen = append(seen, sc.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 11, ee.ExitCode(), "SIGTERM was forwarded; the command's status is run's: %q", seen)
	assert.Contains(t, seen, "caught-term")
}

// TestRawInputRestoredFirst: when the command ends before run's input
// reader first reads (a command that exits at once), the terminal is
// restored and never made raw afterwards; twin: a read first makes it
// raw, and restore brings the mode back.
func TestRawInputRestoredFirst(t *testing.T) {
	master, slave, err := pty.Open()
	require.NoError(t, err)
	defer master.Close()
	defer slave.Close()
	canon := func() bool {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		require.NoError(t, err)
		return tio.Lflag&unix.ICANON != 0
	}
	require.True(t, canon())
	late := &rawInput{f: slave}
	late.restore()
	n, err := late.Read(make([]byte, 8))
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, io.EOF)
	assert.True(t, canon(), "a read after restore does not make the terminal raw")

	first := &rawInput{f: slave}
	_, err = master.Write([]byte("x"))
	require.NoError(t, err)
	_, err = first.Read(make([]byte, 8))
	require.NoError(t, err)
	assert.False(t, canon(), "twin: the first read makes it raw")
	first.restore()
	assert.True(t, canon(), "and restore brings the mode back")
}
