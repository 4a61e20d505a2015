package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal's master and slave ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	mfd := int(master.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	require.NoError(t, err)
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// TestProgressOnTerminal: with stderr on a terminal, probe shows which
// backend and case runs on one self-replacing line and clears it; with
// stderr not a terminal (the twin), it shows nothing.
func TestProgressOnTerminal(t *testing.T) {
	master, slave := openPTY(t)
	var seen bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&seen, master) // ends when the slave is closed
	}()
	var stdout bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := newApp(strings.NewReader(""), &stdout, slave).execute(ctx, []string{"probe", "--backend", "local", "--case", "exit-0", "--case", "exit-7"})
	require.Equal(t, 0, code, "stdout: %s", stdout.String())
	slave.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	out := seen.String()
	assert.Contains(t, out, "\r\x1b[K[local 1/2] exit-0")
	assert.Contains(t, out, "\r\x1b[K[local 2/2] exit-7")
	assert.True(t, strings.HasSuffix(out, "\r\x1b[K"), "the progress line is cleared at the end: %q", out)
	assert.NotContains(t, stdout.String(), "[local", "progress never goes to stdout")

	// The twin: stderr not a terminal.
	var stderr bytes.Buffer
	stdout.Reset()
	code = newApp(strings.NewReader(""), &stdout, &stderr).execute(ctx, []string{"probe", "--backend", "local", "--case", "exit-0"})
	require.Equal(t, 0, code)
	assert.NotContains(t, stderr.String(), "[local", "no progress off a terminal")
}
