package procgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/launcher"
	"github.com/cordon-sandbox/cordon/internal/netns"
)

// DefaultOutputLimit is the output limit when Spec.OutputLimit is 0: bytes
// kept per stream by Run, and the ring size of Start.
const DefaultOutputLimit = 30000

// DefaultWaitDelay is how long output pipes are still read after the
// command's leader exited, when Spec.WaitDelay is 0.
const DefaultWaitDelay = time.Second

// Spec is one command to run.
type Spec struct {
	// Path is the program: absolute, relative to Dir if it contains a
	// slash, else looked up in the PATH of Env (never the parent's PATH).
	Path string
	// Args is the complete argv, Args[0] included; empty means [Path].
	Args []string
	// Env is the complete environment; nil is empty.
	Env []string
	// Dir is the working directory; "" is the host process's.
	Dir string
	// Timeout kills the whole tree and sets TimedOut; 0 means none.
	Timeout time.Duration
	// OutputLimit is the bytes kept per stream by Run (head and tail) and
	// the ring size of Start; 0 means DefaultOutputLimit, < 0 keeps nothing.
	OutputLimit int
	// WaitDelay bounds how long Run and Start keep reading output after the
	// leader exited and its group was killed; 0 means DefaultWaitDelay.
	WaitDelay time.Duration
	// Launcher is the thread to fork from; nil means launcher.Default().
	Launcher *launcher.Launcher
	// ExtraFiles become descriptors 3, 4, ... of the child, in order; the
	// caller keeps ownership.
	ExtraFiles []*os.File
	// StartProcess, when set, starts the child instead of the launcher
	// (os.StartProcess's contract: Dir, Env and Files of attr, and
	// attr.Sys.Setsid, which is always set). A sandbox that must change
	// the child between fork and exec supplies its own.
	StartProcess func(name string, argv []string, attr *os.ProcAttr) (*os.Process, error)
	// NetNS, when set, is the network namespace the child starts in: it is
	// started (by StartProcess or the launcher's own start) from a
	// one-shot launcher thread that entered the namespace and ends with
	// the start.
	NetNS *netns.Namespace
	// Started, when set, is called with the leader's process id as soon
	// as it has started, before Run or Start waits for it (a caller that
	// tracks its children registers it there).
	Started func(pid int)
	// Stdio, when set, connects Run's command to the caller's streams
	// (see Stdio); Start ignores it.
	Stdio *Stdio
	// Exited, when set, is called once the leader has exited and its
	// process group was killed, before the output still in the pipes is
	// awaited: a caller that kills what else is left of the command there
	// (a process that left the tree holds the pipes open) spares that
	// wait.
	Exited func()
}

// Result is the outcome of a command.
type Result struct {
	// Pid was the command's process id (and process group and session id).
	Pid int
	// ExitCode is -1 when the command was killed by a signal or timed out.
	ExitCode int
	// Signal is the name of the signal that ended the command, if any
	// ("killed" for SIGKILL, as syscall.Signal.String gives it).
	Signal string
	// Stdout and Stderr are the kept output; for Start, Stdout holds the
	// merged output not yet read and Stderr is empty.
	Stdout, Stderr []byte
	// TimedOut is set when the timeout or the context ended the command.
	TimedOut bool
	// Truncated is set when output was dropped.
	Truncated bool
	// Duration runs from just before the start until the output was drained.
	Duration time.Duration
}

// ErrInvalidSpec is wrapped by errors for a Spec that cannot describe a command.
var ErrInvalidSpec = errors.New("invalid command spec")

// SpecError reports an unusable Spec field. It unwraps to ErrInvalidSpec.
type SpecError struct {
	Field, Value, Reason string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("command spec: %s %q: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidSpec.
func (e *SpecError) Unwrap() error { return ErrInvalidSpec }

// StartError reports a command that could not be started: the program is
// missing or not executable, Dir cannot be entered, or the launcher is
// closed. It unwraps to the cause (an *os.PathError for fork/exec failures,
// so errors.Is(err, fs.ErrNotExist) works).
type StartError struct {
	Path, Dir string
	Err       error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("starting %q in %q: %v", e.Path, e.Dir, e.Err)
}

// Unwrap returns Err.
func (e *StartError) Unwrap() error { return e.Err }

// resolved is a validated Spec with defaults applied.
type resolved struct {
	path      string
	args      []string
	env       []string
	limit     int
	waitDelay time.Duration
	launcher  *launcher.Launcher
	netns     *netns.Namespace
	// held is the launcher thread a child in netns was started from,
	// kept until the child is reaped.
	held      *launcher.Launcher
	startProc func(name string, argv []string, attr *os.ProcAttr) (*os.Process, error)
}

func (s *Spec) resolve() (*resolved, error) {
	if s == nil {
		return nil, &SpecError{Field: "Spec", Value: "<nil>", Reason: "no spec"}
	}
	if s.Path == "" {
		return nil, &SpecError{Field: "Path", Value: "", Reason: "empty program path"}
	}
	if s.Timeout < 0 {
		return nil, &SpecError{Field: "Timeout", Value: s.Timeout.String(), Reason: "negative"}
	}
	r := &resolved{
		path:      s.Path,
		args:      s.Args,
		env:       s.Env,
		limit:     s.OutputLimit,
		waitDelay: s.WaitDelay,
		launcher:  s.Launcher,
		startProc: s.StartProcess,
		netns:     s.NetNS,
	}
	if r.env == nil {
		r.env = []string{}
	}
	if len(r.args) == 0 {
		r.args = []string{s.Path}
	}
	if r.limit == 0 {
		r.limit = DefaultOutputLimit
	}
	if r.waitDelay <= 0 {
		r.waitDelay = DefaultWaitDelay
	}
	if !strings.Contains(r.path, "/") {
		p, err := lookPath(r.path, r.env)
		if err != nil {
			return nil, &StartError{Path: s.Path, Dir: s.Dir, Err: err}
		}
		r.path = p
	}
	if r.launcher == nil {
		l, err := launcher.Default()
		if err != nil {
			return nil, &StartError{Path: s.Path, Dir: s.Dir, Err: err}
		}
		r.launcher = l
	}
	return r, nil
}

// lookPath finds file in the PATH of env. Empty PATH elements (the current
// directory) are skipped.
func lookPath(file string, env []string) (string, error) {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v // the last one wins, as in a shell
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &fs.PathError{Op: "lookup in the command's PATH", Path: file, Err: fs.ErrNotExist}
}
