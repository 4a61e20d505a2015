package bwrap

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"
)

// Backend is the executor's name in Capabilities and errors.
const Backend = "bwrap"

// MaxArgs is the most arguments bwrap accepts in all, those read through
// --args included (bubblewrap's MAX_ARGS). A profile that needs more
// (thousands of masks) is refused with *executor.UnenforceableError.
const MaxArgs = 9000

// Config configures an Executor. The zero value is strict, finds bwrap on
// PATH and disables user namespaces inside the sandbox.
type Config struct {
	// Path is the bwrap program: an absolute path, or a name looked up in
	// the host's PATH when New runs. "" means "bwrap".
	Path string
	// BestEffort runs commands even when the derived profile cannot be
	// enforced at least as strictly as the policy; Describe then lists
	// what was not enforced. Without it, Run fails with
	// *executor.UnenforceableError. Best effort never makes an unusable
	// bwrap usable: New still fails with *executor.UnavailableError.
	BestEffort bool
	// ExtraBinds are host paths made visible to every command, read-only
	// or read-write, in addition to what the policy grants. They are
	// approved for every command the way a user approves an ask
	// (policy.Grant): they open paths the policy asks about, never paths
	// it denies, and the policy's masks apply inside them. A bind the
	// policy does not permit is left out (see the package documentation).
	ExtraBinds []Bind
	// NestedUserNamespaces lets commands create user namespaces of their
	// own (nested sandboxes, rootless containers). The default passes
	// --disable-userns where bwrap supports it, which keeps the kernel's
	// user-namespace code, a frequent source of privilege escalations,
	// out of the command's reach.
	NestedUserNamespaces bool
	// WaitDelay bounds how long output is still read after the command
	// exited and its process group was killed; 0 means one second.
	WaitDelay time.Duration
	// Logger receives debug records and warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Bind is one extra host path of Config.ExtraBinds, mounted at the same
// path inside the sandbox.
type Bind struct {
	// Path is absolute.
	Path string
	// Write makes the bind read-write; otherwise it is read-only.
	Write bool
}

// ErrInvalidConfig is wrapped by the errors of Config.Validate.
var ErrInvalidConfig = errors.New("invalid bwrap config")

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
	if strings.ContainsRune(c.Path, 0) {
		return &ConfigError{Field: "Path", Value: c.Path, Reason: "contains a NUL byte"}
	}
	if c.WaitDelay < 0 {
		return &ConfigError{Field: "WaitDelay", Value: c.WaitDelay.String(), Reason: "negative"}
	}
	for i, b := range c.ExtraBinds {
		field := fmt.Sprintf("ExtraBinds[%d].Path", i)
		switch {
		case strings.ContainsRune(b.Path, 0):
			return &ConfigError{Field: field, Value: b.Path, Reason: "contains a NUL byte"}
		case !filepath.IsAbs(b.Path):
			return &ConfigError{Field: field, Value: b.Path, Reason: "not absolute"}
		}
	}
	return nil
}

// Causes wrapped by the *executor.UnavailableError of New (its Err), so
// errors.Is tells why bwrap cannot be used.
var (
	// ErrNotInstalled: no bwrap program at Config.Path or on PATH.
	ErrNotInstalled = errors.New("bubblewrap is not installed")
	// ErrVersion: bwrap lacks options every command needs, or its
	// --version failed.
	ErrVersion = errors.New("bwrap is too old or broken")
	// ErrUserNamespaces: bwrap cannot create user namespaces here.
	ErrUserNamespaces = errors.New("bwrap cannot create user namespaces")
	// ErrProc: bwrap cannot mount a fresh /proc here.
	ErrProc = errors.New("bwrap cannot mount /proc")
	// ErrTrial: the trial sandbox failed for another reason.
	ErrTrial = errors.New("bwrap's trial sandbox failed")
)

// ErrSetup is wrapped by *SetupError.
var ErrSetup = errors.New("bwrap could not set up the sandbox")

// SetupError reports a sandbox that bwrap failed to set up, so the
// command never ran: a mount failed (a path vanished between derivation
// and start, say), or /bin/sh could not be executed inside. It unwraps to
// ErrSetup.
type SetupError struct {
	// Message is what bwrap printed ("bwrap: Can't ...").
	Message string
	// ExitCode is bwrap's exit status.
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

// TempDir returns "/tmp": every command gets a private, empty /tmp, so a
// TMPDIR inherited from the host would name a directory that does not
// exist in the sandbox. It implements executor.TempDirer.
func (x *Executor) TempDir() string { return "/tmp" }
