// Package wire is the protocol between the kubernetes executor and
// cordon-pod, its helper inside the session pod. The executor holds one
// exec of "cordon-pod serve" for the session and speaks JSON lines over
// its standard input and output. The helper first answers one Message
// with Ready set. The executor then sends Calls: a Request starts a
// command under a caller-chosen ID, Kill kills that command's process
// tree. The helper answers with Messages carrying the ID: Started once
// the command runs, Output while a background command runs, then
// exactly one Final. The end of the input (the executor closed it, or
// the connection dropped because the caller died) kills every command,
// lets their ends (and the guard) run, and ends the session. Anything
// else (the exec ending, a line that does not decode) is a failure of
// the helper, never of a command.
package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// Version is the protocol version, sent in Ready: the executor refuses a
// helper of another version, so an image built from other sources fails
// loudly.
const Version = 2

// MaxLine bounds one line either way (a Final carries at most twice a
// command's output limit, base64-encoded).
const MaxLine = 256 << 20

// Call is one line from the executor: at most one of Request and Kill;
// a Call with neither keeps an idle stream alive and is ignored.
type Call struct {
	ID      uint64   `json:"id"`
	Request *Request `json:"request,omitempty"`
	// Kill kills command ID's process tree.
	Kill bool `json:"kill,omitempty"`
}

// Ready is the helper's first line.
type Ready struct {
	Version int `json:"version"`
}

// Policy is the part of policy.Policy the OS sandbox reads: commands are
// judged by the caller's gate, so command rules do not cross.
type Policy struct {
	Write        policy.Decision      `json:"write"`
	ReadOutside  policy.Decision      `json:"read_outside"`
	WriteOutside policy.Decision      `json:"write_outside"`
	PathRules    []policy.PathRule    `json:"path_rules,omitempty"`
	DeniedPaths  []string             `json:"denied_paths,omitempty"`
	AllowShell   bool                 `json:"allow_shell"`
	ShellDefault policy.Decision      `json:"shell_default"`
	Network      policy.Network       `json:"network"`
	System       []string             `json:"system"`
	Protect      Protect              `json:"protect"`
	Secrets      []string             `json:"secrets"`
	Origins      []policy.Origin      `json:"origins,omitempty"`
	Commands     []policy.CommandRule `json:"command_rules,omitempty"`
}

// Protect mirrors policy.Protect.
type Protect struct {
	Disabled bool     `json:"disabled,omitempty"`
	Extra    []string `json:"extra,omitempty"`
}

// PolicyOf converts p. System and Secrets are sent resolved (nil means
// the defaults on either side, but the defaults are the caller's).
func PolicyOf(p *policy.Policy) Policy {
	return Policy{
		Write: p.Write, ReadOutside: p.ReadOutside, WriteOutside: p.WriteOutside,
		PathRules: p.PathRules, DeniedPaths: p.DeniedPaths,
		AllowShell: p.AllowShell, ShellDefault: p.ShellDefault,
		Network: p.Network, System: p.SystemPaths(),
		Protect: Protect{Disabled: p.Protect.Disabled, Extra: p.Protect.Extra},
		Secrets: p.SecretPaths(), Origins: p.Origins, Commands: p.CommandRules,
	}
}

// Build returns the policy.
func (w Policy) Build() *policy.Policy {
	return &policy.Policy{
		Write: w.Write, ReadOutside: w.ReadOutside, WriteOutside: w.WriteOutside,
		PathRules: w.PathRules, DeniedPaths: w.DeniedPaths,
		AllowShell: w.AllowShell, ShellDefault: w.ShellDefault,
		Network: w.Network, System: nonNil(w.System),
		Protect: policy.Protect{Disabled: w.Protect.Disabled, Extra: w.Protect.Extra},
		Secrets: nonNil(w.Secrets), Origins: w.Origins, CommandRules: w.Commands,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Request is one command.
type Request struct {
	Command     string         `json:"command"`
	Dir         string         `json:"dir"`
	Env         []string       `json:"env"`
	Timeout     time.Duration  `json:"timeout,omitempty"`
	Policy      Policy         `json:"policy"`
	Root        string         `json:"root"`
	Home        string         `json:"home,omitempty"`
	Grants      []policy.Grant `json:"grants,omitempty"`
	OutputLimit int            `json:"output_limit,omitempty"`
	// Background streams merged output as Output messages (Start).
	Background bool `json:"background,omitempty"`
}

// Message is one line from the helper: Ready alone, or ID and exactly
// one of the other fields.
type Message struct {
	ID    uint64 `json:"id,omitempty"`
	Ready *Ready `json:"ready,omitempty"`
	// Started is sent once the command runs.
	Started *Started `json:"started,omitempty"`
	// Output is merged output of a background command (base64 in JSON).
	Output []byte `json:"output,omitempty"`
	// Dropped reports that output before Output was dropped.
	Dropped bool `json:"dropped,omitempty"`
	// Final ends the answer.
	Final *Final `json:"final,omitempty"`
}

// Started reports that the command runs (it carries nothing yet).
type Started struct{}

// Final is the command's result, or the error that kept it from running.
type Final struct {
	Result *executor.Result `json:"result,omitempty"`
	Error  *Error           `json:"error,omitempty"`
}

// Error is a typed error from the helper.
type Error struct {
	// Kind is "unenforceable", "invalid" or "failed".
	Kind    string         `json:"kind"`
	Message string         `json:"message"`
	Gaps    []executor.Gap `json:"gaps,omitempty"`
}

// Error kinds.
const (
	KindUnenforceable = "unenforceable"
	KindInvalid       = "invalid"
	KindFailed        = "failed"
)

// ReadLine reads one line, newline included, refusing one longer than
// MaxLine; a last line without a newline ends in io.EOF.
func ReadLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			return nil, fmt.Errorf("a line longer than %d bytes", MaxLine)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && len(line) > 0 && errors.Is(err, io.EOF) {
			return line, io.ErrUnexpectedEOF
		}
		return line, err
	}
}
