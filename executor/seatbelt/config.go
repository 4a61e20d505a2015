package seatbelt

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Backend is the executor's name in Capabilities and errors.
const Backend = "seatbelt"

// Program is the only sandbox-exec the executor runs. It is never looked
// up on PATH: a PATH the user (or an agent) controls could put a program
// that sandboxes nothing in its place. /usr/bin lies on macOS's sealed,
// read-only system volume; whoever can replace it is already root.
const Program = "/usr/bin/sandbox-exec"

// Config configures an Executor. The zero value is strict and guards
// protected paths.
type Config struct {
	// BestEffort runs commands even when the rendered profile cannot
	// enforce the policy at least as strictly as it is written; Describe
	// then lists what is not enforced. Without it, Run fails with
	// *executor.UnenforceableError. Best effort never makes a missing or
	// unusable sandbox-exec usable: New still fails with
	// *executor.UnavailableError.
	BestEffort bool
	// WaitDelay bounds how long output is still read after the command
	// exited and its process group was killed; 0 means one second.
	WaitDelay time.Duration
	// Logger receives debug records and warnings; nil means slog.Default().
	Logger *slog.Logger
}

// ErrInvalidConfig is wrapped by *ConfigError.
var ErrInvalidConfig = errors.New("invalid seatbelt config")

// ConfigError reports an unusable Config field. It unwraps to
// ErrInvalidConfig.
type ConfigError struct {
	Field, Value, Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%v: %s %q: %s", ErrInvalidConfig, e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.WaitDelay < 0 {
		return &ConfigError{Field: "WaitDelay", Value: c.WaitDelay.String(), Reason: "negative"}
	}
	return nil
}

// Causes wrapped by the *executor.UnavailableError of New (its Err), so
// that errors.Is tells why the backend cannot be used here.
var (
	// ErrNotInstalled: there is no executable /usr/bin/sandbox-exec.
	ErrNotInstalled = errors.New("sandbox-exec is not installed")
	// ErrCannotApply: sandbox-exec cannot apply even a profile that
	// allows everything — typically because the program calling New
	// already runs inside a Seatbelt sandbox, and Seatbelt sandboxes do
	// not nest ("sandbox_apply: Operation not permitted").
	ErrCannotApply = errors.New("sandbox-exec cannot apply a profile here")
	// ErrTrial: sandbox-exec applies profiles, but /bin/sh cannot start
	// under the profile cordon renders for a coding-mode workspace on
	// this macOS release (the profile's base misses something the
	// system's shell or dynamic loader needs).
	ErrTrial = errors.New("a shell cannot start under cordon's Seatbelt profile here")
)

// ErrSetup is wrapped by *SetupError.
var ErrSetup = errors.New("sandbox-exec could not set up the sandbox")

// SetupError reports a command that never ran because sandbox-exec
// failed to compile or apply its profile (or to execute /bin/sh under
// it). Run tells it apart from a command that failed on its own by
// running /bin/sh -c : under the same profile, parameters, directory and
// environment once more. It unwraps to ErrSetup.
type SetupError struct {
	// Message is what sandbox-exec printed ("sandbox-exec: ...").
	Message string
	// ExitCode is sandbox-exec's exit status.
	ExitCode int
}

func (e *SetupError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("%v (exit %d): %s", ErrSetup, e.ExitCode, msg)
}

// Unwrap returns ErrSetup.
func (e *SetupError) Unwrap() error { return ErrSetup }
