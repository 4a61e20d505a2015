//go:build linux

package gateoracle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// Shell is a shell the oracle runs commands under, as Argv... -c CMD.
type Shell struct {
	Name string
	Argv []string
}

// Shells are the shells every allowed command runs under: dash (Debian's
// /bin/sh), bash, bash in POSIX mode and busybox sh.
var Shells = []Shell{
	{Name: "dash", Argv: []string{"/bin/dash"}},
	{Name: "bash", Argv: []string{"/bin/bash"}},
	{Name: "bash-posix", Argv: []string{"/bin/bash", "--posix"}},
	{Name: "busybox", Argv: []string{busybox(), "sh"}},
}

// busybox returns the path of busybox, or "".
func busybox() string {
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Available reports why the oracle cannot run here, or "".
func Available() string {
	if os.Geteuid() != 0 {
		return "the execution oracle needs root (strace of bwrap)"
	}
	for _, p := range []string{"strace", "bwrap", "dash", "bash", "git"} {
		if _, err := exec.LookPath(p); err != nil {
			return p + " is not installed"
		}
	}
	if busybox() == "" {
		return "busybox is not installed"
	}
	return ""
}

// Trace is what one run of a command did.
type Trace struct {
	Shell   string
	Command string
	Events  []Event
	// Changed are the working copy's paths whose content, mode, inode or
	// existence changed, seen from outside after the run.
	Changed []string
	Output  string
	Err     error
	before  map[string]fileState
}

// runTimeout bounds one run.
const runTimeout = 20 * time.Second

// Run resets the fixture (unless the last run changed nothing in it) and
// runs cmd under sh inside a bubblewrap sandbox
// (read-only /, the working copy writable, no network; the host's PID
// namespace, so that the pids fork returns are the ones strace prints)
// traced by strace, with stdin /dev/null, HOME the fixture's home and the
// working directory its root.
func Run(ctx context.Context, f *Fixture, sh Shell, cmd string) (*Trace, error) {
	before := f.clean
	if before == nil {
		if err := f.Reset(); err != nil {
			return nil, err
		}
		var err error
		if before, err = f.Snapshot(); err != nil {
			return nil, err
		}
	}
	f.clean = nil
	logf, err := os.CreateTemp(f.Base, "strace-*.log")
	if err != nil {
		return nil, err
	}
	logName := logf.Name()
	logf.Close()
	defer os.Remove(logName)

	work := filepath.Dir(f.Root)
	args := []string{"-f", "-qq", "-y", "-xx", "-s", "65536", "-e", "trace=" + traceCalls, "-o", logName,
		"bwrap", "--ro-bind", "/", "/", "--bind", work, work, "--dev", "/dev", "--proc", "/proc",
		"--unshare-ipc", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv",
		"--setenv", "HOME", f.Home, "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
		"--setenv", "LANG", "C", "--setenv", "USER", "oracle", "--setenv", "GIT_CONFIG_NOSYSTEM", "1",
		"--chdir", f.Root, "--"}
	args = append(args, sh.Argv...)
	args = append(args, "-c", cmd)
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	var out bytes.Buffer
	var runErr error
	for attempt := 0; ; attempt++ {
		c := exec.CommandContext(ctx, "strace", args...)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
		out.Reset()
		c.Stdout, c.Stderr = &out, &out
		runErr = c.Run()
		// bwrap binds the host's / recursively and remounts each mount
		// below it read-only; a mount that goes away meanwhile (a
		// container's overlay, from tests running beside these) fails
		// its setup before the shell runs anything. Run it again.
		if runErr == nil || attempt == 4 || ctx.Err() != nil || !bytes.HasPrefix(out.Bytes(), []byte("bwrap: Can't bind mount /oldroot/")) {
			break
		}
	}
	tr := &Trace{Shell: sh.Name, Command: cmd, Err: runErr, before: before}
	if b := out.Bytes(); len(b) > 4096 {
		tr.Output = string(b[:4096]) + "..."
	} else {
		tr.Output = string(b)
	}
	if ctx.Err() != nil {
		tr.Err = fmt.Errorf("timed out after %v: %w", runTimeout, ctx.Err())
	}
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		return nil, fmt.Errorf("strace: %w: %s", runErr, tr.Output)
	}
	lf, err := os.Open(logName)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	if tr.Events, err = Parse(lf, sh.Argv[0], f.Root, f.Root, f.Home); err != nil {
		return nil, err
	}
	after, err := f.Snapshot()
	if err != nil {
		return nil, err
	}
	tr.Changed = diff(before, after)
	sort.Strings(tr.Changed)
	if len(tr.Changed) == 0 {
		f.clean = after // nothing to undo: the next run starts from here
	}
	return tr, nil
}
