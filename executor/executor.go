package executor

import (
	"github.com/cordon-sandbox/cordon/internal/procgroup"

	"maps"
	"slices"

	"context"
	"time"

	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
)

// Request is one command to run. The workspace has already judged it: an
// executor decides how to run a command, never whether.
type Request struct {
	// Command is run as /bin/sh -c Command.
	Command string
	// Dir is the absolute, resolved working directory, already judged.
	Dir string
	// Env is the complete environment; the parent's is never inherited.
	Env []string
	// Timeout kills the command's whole process group; 0 means none.
	Timeout time.Duration
	// Policy is the ACL the OS sandbox is derived from.
	Policy *policy.Policy
	// Root is the resolved workspace root.
	Root string
	// Home is the user's home directory ("" when unknown).
	Home string
	// Checker, when set, is Policy compiled for Root and Home
	// (policy.NewChecker): a sandboxing executor derives from it and
	// compiles nothing per command. It must be the compilation of this
	// request's fields: Policy is Checker.Policy() and Root and Home are
	// its Root and Home (see Compile). Nil: the executor compiles Policy
	// for every command.
	Checker *policy.Checker
	// Grants are the paths approved for this one command.
	Grants []policy.Grant
	// OutputLimit is the number of bytes kept per stream (head and tail,
	// with an omission marker); 0 means DefaultOutputLimit.
	OutputLimit int
	// AskNetwork answers the network allow-list's asks (network.unknown:
	// ask) for hosts this command connects to; each answer holds per
	// host:port for this command only (never for another command). Nil
	// refuses them.
	AskNetwork func(ctx context.Context, host string, port uint16) bool
	// Stdio, when set, connects a Run to the caller's streams, for a
	// program that wraps another (sandbox-probe run -- agent): standard
	// input, output streamed as it is produced (the Result keeps its head
	// and tail too), a pseudo-terminal of the command's own, signals
	// forwarded to its process group. Nil: stdin is /dev/null and output
	// is only kept. Start ignores it. Executors that cannot connect
	// streams (docker, kubernetes, seatbelt for now) refuse it with a
	// *RequestError naming the field, never ignore it.
	Stdio *Stdio
}

// Stdio connects a command to its caller's streams (see
// Request.Stdio): its fields' documentation says exactly what each does.
type Stdio = procgroup.Stdio

// Terminal is the pseudo-terminal of a command run with Stdio.Terminal.
type Terminal = procgroup.Terminal

// WindowSize is a terminal's size in characters.
type WindowSize = procgroup.WindowSize

// RefuseStdio returns the *RequestError of an executor that cannot
// connect a caller's streams, or nil when req asks for none.
func RefuseStdio(req *Request, backend string) error {
	if req == nil || req.Stdio == nil {
		return nil
	}
	return &RequestError{Field: "Stdio", Value: "<streams>", Reason: "the " + backend + " executor does not connect a caller's streams (input, a terminal, streamed output) yet; use landlock, bwrap or local"}
}

// DefaultOutputLimit is the per-stream output limit when Request.OutputLimit is 0.
const DefaultOutputLimit = procgroup.DefaultOutputLimit

// Result is the outcome of a command that ran. A non-zero exit is a Result,
// not an error.
type Result struct {
	// ExitCode is -1 when the command was killed by a signal or timed out.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that killed the command ("killed", ...), if any.
	Signal string `json:"signal,omitempty"`
	Stdout []byte `json:"stdout"`
	Stderr []byte `json:"stderr"`
	// TimedOut is set when the timeout or the context ended the command.
	TimedOut bool `json:"timed_out"`
	// Truncated is set when output beyond OutputLimit was dropped.
	Truncated bool          `json:"truncated"`
	Duration  time.Duration `json:"duration"`
	// Violations lists the protected paths the command created or changed
	// and how the executor repaired them (removed, restored), for
	// executors that guard protected paths after the fact.
	Violations []string `json:"violations,omitempty"`
	// Network lists the network allow-list proxy's decisions for the
	// connections the command asked for (policy.NetworkAllowList only).
	Network []netproxy.Event `json:"network,omitempty"`
}

// Executor runs commands.
type Executor interface {
	// Run runs req to completion. It returns an error only when the command
	// could not be run as asked: *UnavailableError, *UnenforceableError, or
	// the context ending before the command started.
	Run(ctx context.Context, req *Request) (*Result, error)
}

// Starter is implemented by executors that run background processes under
// the same sandbox as Run.
type Starter interface {
	// Start starts req in the background; Request.Timeout is ignored. The
	// process's stdout and stderr are merged.
	Start(ctx context.Context, req *Request) (Process, error)
}

// Process is a background command started by a Starter.
type Process interface {
	// ReadOutput returns the merged output produced since the last call, and
	// whether older unread output was dropped because the buffer was full.
	ReadOutput() (out []byte, dropped bool)
	// Done is closed when the process has exited and been reaped.
	Done() <-chan struct{}
	// Wait waits for the process to exit and returns its result; Stdout
	// holds output not yet consumed by ReadOutput.
	Wait() *Result
	// Kill kills the process's whole group (or container exec) and waits
	// for it to be reaped.
	Kill() error
}

// Describer is implemented by executors that can say what they enforce on
// this host.
type Describer interface {
	Describe(ctx context.Context) Capabilities
}

// Control is one kind of isolation an executor may or may not enforce
// (policy.Control: the vocabulary is defined once, in package policy).
// Conformance cases name the controls they check; a case whose control is
// declared as a Gap is reported as a gap instead of a failure.
type Control = policy.Control

// The controls (see the policy package for what each means).
const (
	ControlFSRead        = policy.ControlFSRead
	ControlFSWrite       = policy.ControlFSWrite
	ControlFSNewFiles    = policy.ControlFSNewFiles
	ControlFSMetadata    = policy.ControlFSMetadata
	ControlProtect       = policy.ControlProtect
	ControlNetTCP        = policy.ControlNetTCP
	ControlNetUDP        = policy.ControlNetUDP
	ControlNetUnix       = policy.ControlNetUnix
	ControlNetAbstract   = policy.ControlNetAbstract
	ControlSignal        = policy.ControlSignal
	ControlProcessTree   = policy.ControlProcessTree
	ControlProcInfo      = policy.ControlProcInfo
	ControlHostProcess   = policy.ControlHostProcess
	ControlKernelObjects = policy.ControlKernelObjects
	ControlNetAllowList  = policy.ControlNetAllowList
)

// Controls returns every control, in the order backends report them.
func Controls() []Control { return policy.Controls() }

// Gap is a control an executor cannot enforce on this host, and why.
type Gap struct {
	Control Control `json:"control"`
	Reason  string  `json:"reason"`
	// Concurrent reports a gap only a process running alongside the
	// command can reach (another command or a background process of the
	// same workspace racing its start), never the command alone: while
	// nothing else of the workspace runs, the control holds.
	Concurrent bool `json:"concurrent,omitempty"`
}

// Capabilities describes what an executor enforces on this host.
type Capabilities struct {
	// Backend is the executor's name: "local", "bwrap", "landlock", ...
	Backend string `json:"backend"`
	// Sandboxed is false for executors that enforce no isolation at all.
	Sandboxed bool `json:"sandboxed"`
	// Enforced lists the controls the executor enforces here.
	Enforced []Control `json:"enforced"`
	// Gaps lists the controls it cannot enforce here, with the reason.
	Gaps []Gap `json:"gaps"`
	// BestEffort is set when the executor runs despite gaps.
	BestEffort bool `json:"best_effort"`
	// Info holds facts such as versions and ABI levels.
	Info map[string]string `json:"info,omitempty"`
}

// Gap returns the declared gap for c, if any.
// Clone returns a copy of c that shares no slice or map with it.
func (c Capabilities) Clone() Capabilities {
	c.Enforced = slices.Clone(c.Enforced)
	c.Gaps = slices.Clone(c.Gaps)
	c.Info = maps.Clone(c.Info)
	return c
}

func (c Capabilities) Gap(ctl Control) (Gap, bool) {
	for _, g := range c.Gaps {
		if g.Control == ctl {
			return g, true
		}
	}
	return Gap{}, false
}

// TempDirer is implemented by executors whose commands must use a
// particular temporary directory: the landlock backend's private directory
// (the host's /tmp is not granted), the private /tmp of bwrap and docker.
// The workspace sets TMPDIR to it unless the user set TMPDIR explicitly.
type TempDirer interface {
	TempDir() string
}

// Assessor is implemented by executors that can assess one request
// without running it: the gaps the sandbox they would start for it has
// (every looser element of its derived profile not mitigated, inherent
// ones included), which Describe reports only for a sample policy. The
// workspace's sandbox auto-allow assesses the session's own policy with
// it.
type Assessor interface {
	Assess(ctx context.Context, req *Request) ([]Gap, error)
}
