// Package wire is the protocol between the kubernetes executor and
// cordon-pod, its helper inside the session pod. Each command is one exec
// of "cordon-pod run": the executor writes one JSON Request line on the
// exec's standard input and keeps it open; a later line "kill" (or the
// end of the input, when the connection drops) kills the command's
// process tree. cordon-pod answers on its standard output with JSON
// lines: Output messages while a background command runs, then exactly
// one Final message, and exits 0. Anything else (a non-zero exit, no
// Final line) is a failure of the helper, never of the command.
package wire

import (
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// Version is the protocol version; the helper refuses a request of
// another version, so an image built from other sources fails loudly.
const Version = 1

// KillLine is the line that kills the running command.
const KillLine = "kill"

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
	Version     int            `json:"version"`
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
	// BestEffort runs the in-pod Landlock layer in best effort.
	BestEffort bool `json:"best_effort,omitempty"`
}

// Message is one line of the helper's answer: exactly one field is set.
type Message struct {
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
