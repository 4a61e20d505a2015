package docker

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/client"
)

// Backend is the executor's name in Capabilities and errors.
const Backend = "docker"

// Defaults for the zero values of Config.
const (
	// DefaultMemory is the container's memory limit in bytes (swap
	// included) when Config.Memory is 0.
	DefaultMemory = 4 << 30
	// DefaultPids is the container's process limit when Config.Pids is 0.
	DefaultPids = 1024
	// DefaultWaitDelay bounds how long output is still read after a
	// command's shell exited, when Config.WaitDelay is 0.
	DefaultWaitDelay = time.Second
	// DefaultFullNetwork is the network mode of containers whose policy
	// grants full network access, when Config.FullNetwork is "".
	DefaultFullNetwork = "host"
)

// HostImage is the local image host mode runs in: an empty root file
// system imported from an empty tar archive (ImageImport), so host mode
// never needs a registry. New creates it when it is missing.
const HostImage = "cordon-sandbox/host-empty:1"

// Config configures an Executor. The zero value runs in host mode (an
// empty image with the host's System paths bound read-only), as the
// calling user, with DefaultMemory and DefaultPids, strict.
type Config struct {
	// Image is a local image to run commands in (image mode); it is
	// never pulled. "" selects host mode: HostImage with the host's
	// System paths (policy.Policy.SystemPaths) bound read-only.
	Image string
	// User is the container user, "uid" or "uid:gid" (or a name the
	// image's /etc/passwd knows). "" means the calling process's uid:gid,
	// so files written in the workspace keep their owner.
	User string
	// Memory is the memory limit in bytes (swap included); 0 means
	// DefaultMemory, a negative value no limit.
	Memory int64
	// Pids is the limit on processes in the container; 0 means
	// DefaultPids, a negative value no limit.
	Pids int64
	// BestEffort runs commands even when the derived profile cannot be
	// enforced at least as strictly as the policy; Describe then lists
	// what was not enforced. Without it, Run fails with
	// *executor.UnenforceableError. Best effort never makes an
	// unreachable engine usable: New still fails with
	// *executor.UnavailableError.
	BestEffort bool
	// NestedUserNamespaces keeps the containers/common default seccomp
	// profile as it is, which lets commands create user namespaces
	// (unshare, clone with CLONE_NEWUSER). The default additionally
	// refuses them, as the bwrap backend's --disable-userns does: a user
	// namespace gives a command every capability inside it and exposes
	// kernel code that is a frequent source of privilege escalations.
	NestedUserNamespaces bool
	// FullNetwork is the Docker network mode of containers whose policy
	// grants full network access; "" means DefaultFullNetwork ("host",
	// the host's network namespace, as the other backends share it).
	// Network none always uses "none".
	FullNetwork string
	// ExecPerCommand runs every command as an engine exec of its own
	// instead of through the session container's command runner (see
	// the package documentation). Commands are then slower (a runtime
	// exec each); the runner is never used with a remote engine or a
	// User other than the caller's.
	ExecPerCommand bool
	// WaitDelay bounds how long output is still read after a command's
	// shell exited (a process that left the command's session may keep
	// the output open); 0 means DefaultWaitDelay.
	WaitDelay time.Duration
	// ClientOptions are applied after the defaults (client.FromEnv, the
	// Docker CLI's current context when DOCKER_HOST is unset, and
	// client.WithAPIVersionNegotiation), so they can name another engine.
	ClientOptions []client.Opt
	// Logger receives debug records and warnings; nil means slog.Default().
	Logger *slog.Logger
}

// controlPrefix names the host directories of command runners.
const controlPrefix = "cordon-docker-run-"

// ErrInvalidConfig is wrapped by the errors of Config.Validate.
var ErrInvalidConfig = errors.New("invalid docker config")

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
	checks := []func() error{
		func() error {
			if strings.ContainsAny(c.Image, "\x00 \t\n") {
				return &ConfigError{Field: "Image", Value: c.Image, Reason: "contains white space or a NUL byte"}
			}
			return nil
		},
		func() error {
			if c.User == "" {
				return nil
			}
			if strings.ContainsAny(c.User, "\x00 \t\n") || strings.Count(c.User, ":") > 1 ||
				strings.HasPrefix(c.User, ":") || strings.HasSuffix(c.User, ":") {
				return &ConfigError{Field: "User", Value: c.User, Reason: `want "uid", "uid:gid" or a user name`}
			}
			return nil
		},
		func() error {
			if c.WaitDelay < 0 {
				return &ConfigError{Field: "WaitDelay", Value: c.WaitDelay.String(), Reason: "negative"}
			}
			return nil
		},
		func() error {
			switch c.FullNetwork {
			case "none":
				return &ConfigError{Field: "FullNetwork", Value: c.FullNetwork, Reason: `"none" is not full network access`}
			case "":
				return nil
			}
			if strings.ContainsAny(c.FullNetwork, "\x00 \t\n") {
				return &ConfigError{Field: "FullNetwork", Value: c.FullNetwork, Reason: "contains white space or a NUL byte"}
			}
			if strings.HasPrefix(c.FullNetwork, "container:") {
				return &ConfigError{Field: "FullNetwork", Value: c.FullNetwork, Reason: "sharing another container's network namespace is not supported"}
			}
			return nil
		},
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c Config) memory() int64 {
	switch {
	case c.Memory == 0:
		return DefaultMemory
	case c.Memory < 0:
		return 0
	}
	return c.Memory
}

func (c Config) pids() int64 {
	switch {
	case c.Pids == 0:
		return DefaultPids
	case c.Pids < 0:
		return -1 // the Docker API's "unlimited"
	}
	return c.Pids
}

func (c Config) fullNetwork() string {
	if c.FullNetwork == "" {
		return DefaultFullNetwork
	}
	return c.FullNetwork
}

func (c Config) waitDelay() time.Duration {
	if c.WaitDelay == 0 {
		return DefaultWaitDelay
	}
	return c.WaitDelay
}

// Causes wrapped by the *executor.UnavailableError of New (its Err), so
// errors.Is tells why Docker cannot be used.
var (
	// ErrNoEngine: no Docker Engine answers at the configured address.
	ErrNoEngine = errors.New("no Docker Engine answers")
	// ErrEngine: the engine answers but cannot run cordon's containers
	// (not a Linux engine, too old an API).
	ErrEngine = errors.New("the Docker Engine cannot run cordon's containers")
	// ErrNoImage: Config.Image is not present on the engine (cordon never
	// pulls), or the host-mode image could not be created.
	ErrNoImage = errors.New("the image is not present on the engine")
)

// ErrSetup is wrapped by *SetupError.
var ErrSetup = errors.New("docker could not set up the sandbox")

// SetupError reports a container or exec that the engine could not set
// up, so the command never ran: a mount failed (a path vanished between
// derivation and start), the working directory does not exist inside the
// container, or /bin/sh is missing from the image. It unwraps to ErrSetup.
type SetupError struct {
	// Stage is "create", "start" or "exec".
	Stage string
	// Container is the container's id, if one was created.
	Container string
	// Message is what the engine reported.
	Message string
	// Err is the engine client's error, if any.
	Err error

	// lost is set when the container was found unusable before the
	// exec was created: the command did not run and can be retried in
	// a new container.
	lost bool
}

func (e *SetupError) Error() string {
	msg := e.Message
	if e.Err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	if msg == "" {
		msg = "no message"
	}
	c := ""
	if e.Container != "" {
		c = " container " + shortID(e.Container)
	}
	return fmt.Sprintf("%v (%s%s): %s", ErrSetup, e.Stage, c, msg)
}

// Unwrap returns ErrSetup and Err.
func (e *SetupError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrSetup, e.Err}
	}
	return []error{ErrSetup}
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// defaultUser returns the calling process's uid:gid, or "" where the
// platform has none (the image's user then).
func defaultUser(uid, gid int) string {
	if uid < 0 || gid < 0 {
		return ""
	}
	return strconv.Itoa(uid) + ":" + strconv.Itoa(gid)
}
