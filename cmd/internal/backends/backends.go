// Package backends is the one table that names cordon's executor
// packages: each backend's name, whether it is an OS sandbox, the
// operating systems it runs on and how to build it. The commands
// (sandbox-probe, cordon) choose backends through it, so a backend is
// added in one place.
//
// Build with -tags nodocker to leave the docker backend (and the Docker
// client) out; it is then listed as not built in.
package backends

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/executor/seatbelt"
)

// Options configure every backend a command builds.
type Options struct {
	// BestEffort opts into running despite gaps (never the default).
	BestEffort bool
	// KernelProtect has the landlock backend deny existing protected
	// paths in the kernel while commands run (landlock.Config.KernelProtect);
	// the mount-based backends always do.
	KernelProtect bool
	// DockerImage is the docker backend's image; "" is host mode.
	DockerImage string
	// KubeImage is the kubernetes backend's image (with cordon-pod);
	// "" leaves the backend unavailable. Kubeconfig and KubeNamespace
	// select the cluster ("": the default loading rules, the
	// kubeconfig's namespace).
	KubeImage, Kubeconfig, KubeNamespace string
	// KubeHostNetwork gives the kubernetes backend's session pod the
	// node's network when the policy's network is full
	// (kubernetes.Config.HostNetworkWhenFull); the pod network otherwise.
	KubeHostNetwork bool
	// Logger receives the backends' records; nil is slog.Default.
	Logger *slog.Logger
}

// Backend is one executor backend: how to build it and whether it is an
// OS sandbox.
type Backend struct {
	Name string
	// Sandboxed is false for local, which enforces nothing.
	Sandboxed bool
	// Streams says whether the executor connects a caller's streams
	// (executor.Request.Stdio): sandbox-probe run then wraps the command
	// (input, a terminal, streamed output, signals).
	Streams bool
	// GOOS lists the operating systems the backend runs on (nil: all).
	GOOS []string
	// New builds a fresh executor. nil means the backend is not built
	// into this program; Missing says why and Rebuild how to get it.
	New func(o Options) (executor.Executor, error)
	// Missing and Rebuild explain a nil New.
	Missing, Rebuild string
}

// All is every backend, in the order tables show them, local last.
var All = []Backend{
	{
		Name: landlock.Backend, Sandboxed: true, Streams: true, GOOS: []string{"linux"},
		New: func(o Options) (executor.Executor, error) {
			return landlock.New(landlock.Config{BestEffort: o.BestEffort, KernelProtect: o.KernelProtect, Logger: o.Logger})
		},
	},
	{
		Name: bwrap.Backend, Sandboxed: true, Streams: true, GOOS: []string{"linux"},
		New: func(o Options) (executor.Executor, error) {
			return bwrap.New(bwrap.Config{BestEffort: o.BestEffort, Logger: o.Logger})
		},
	},
	dockerBackend,
	{
		Name: seatbelt.Backend, Sandboxed: true, GOOS: []string{"darwin"},
		New: func(o Options) (executor.Executor, error) {
			return seatbelt.New(seatbelt.Config{BestEffort: o.BestEffort, Logger: o.Logger})
		},
	},
	kubernetesBackend,
	{
		Name: "local", Sandboxed: false, Streams: true,
		New: func(o Options) (executor.Executor, error) {
			return executor.NewLocal(), nil
		},
	},
}

// Names returns the names of every backend.
func Names() []string {
	names := make([]string, len(All))
	for i, b := range All {
		names[i] = b.Name
	}
	return names
}

// UnknownError is the error for a backend name no backend has.
type UnknownError struct {
	Name string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown backend %q (known: %s)", e.Name, strings.Join(Names(), ", "))
}

// Lookup returns the backend called name, or an *UnknownError.
func Lookup(name string) (*Backend, error) {
	for i := range All {
		if All[i].Name == name {
			return &All[i], nil
		}
	}
	return nil, &UnknownError{Name: name}
}

// Parse parses a --backend list ("landlock,bwrap"); repeated flags and
// commas both separate names. Duplicates are dropped. A list naming no
// backend at all is an error.
func Parse(list []string) ([]*Backend, error) {
	var out []*Backend
	for _, item := range list {
		for _, name := range strings.Split(item, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			b, err := Lookup(name)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 && len(list) > 0 {
		return nil, fmt.Errorf("--backend names no backend (known: %s)", strings.Join(Names(), ", "))
	}
	return out, nil
}

// Built reports whether the backend is built into this program for this
// operating system.
func (b *Backend) Built() bool {
	return b.New != nil && (b.GOOS == nil || slices.Contains(b.GOOS, runtime.GOOS))
}

// Availability is what building a backend on this host showed.
type Availability struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Sandboxed bool   `json:"sandboxed"`
	// Reason says why the backend is unavailable; Fix how to get it.
	Reason string `json:"reason,omitempty"`
	Fix    string `json:"fix,omitempty"`
	// Capabilities is the backend's Describe, when it could be built.
	Capabilities *executor.Capabilities `json:"capabilities,omitempty"`
	// Err is the error behind Reason.
	Err error `json:"-"`
}

// Check builds the backend once, asks it what it enforces and closes it.
// A backend is available when it could be built and, for an OS sandbox,
// when its Describe says it sandboxes (landlock builds on a kernel without
// Landlock but then enforces nothing).
func (b *Backend) Check(ctx context.Context, o Options) *Availability {
	av := &Availability{Name: b.Name, Sandboxed: b.Sandboxed}
	if len(b.GOOS) > 0 && !slices.Contains(b.GOOS, runtime.GOOS) {
		av.Reason = fmt.Sprintf("%s runs only on %s, not on %s", b.Name, strings.Join(b.GOOS, ", "), runtime.GOOS)
		av.Err = &executor.UnavailableError{Backend: b.Name, Reason: av.Reason, Err: errors.ErrUnsupported}
		return av
	}
	if b.New == nil {
		av.Reason = b.Missing
		av.Fix = b.Rebuild
		if av.Fix == "" {
			av.Fix = "rebuild from a cordon version that includes executor/" + b.Name
		}
		av.Err = &executor.UnavailableError{Backend: b.Name, Reason: av.Reason, Fix: av.Fix}
		return av
	}
	x, err := b.New(o)
	if err != nil {
		av.Err = err
		av.Reason, av.Fix = ExplainUnavailable(err)
		return av
	}
	defer Close(x)
	if d, ok := x.(executor.Describer); ok {
		caps := d.Describe(ctx)
		av.Capabilities = &caps
		if b.Sandboxed && !caps.Sandboxed {
			av.Reason = b.Name + " enforces nothing on this host"
			if t := caps.Info["troubleshooting"]; t != "" {
				av.Reason += ": " + t
			}
			av.Err = &executor.UnavailableError{Backend: b.Name, Reason: av.Reason}
			return av
		}
	}
	av.Available = true
	return av
}

// ExplainUnavailable splits a constructor's error into a reason and a fix,
// each on one line.
func ExplainUnavailable(err error) (reason, fix string) {
	var ue *executor.UnavailableError
	if errors.As(err, &ue) {
		reason = ue.Reason
		if ue.Err != nil {
			reason += ": " + ue.Err.Error()
		}
		return OneLine(reason), OneLine(ue.Fix)
	}
	return OneLine(err.Error()), ""
}

// OneLine folds a message onto one line, its lines joined by "; ".
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return strings.Join(fields, "; ")
}

// Close closes x when it holds resources.
func Close(x executor.Executor) {
	if c, ok := x.(io.Closer); ok {
		_ = c.Close()
	}
}

// CheckAll checks the given backends (nil: every backend) and returns the
// results in table order.
func CheckAll(ctx context.Context, list []*Backend, o Options) []*Availability {
	if list == nil {
		for i := range All {
			list = append(list, &All[i])
		}
	}
	out := make([]*Availability, len(list))
	for i, b := range list {
		out[i] = b.Check(ctx, o)
	}
	return out
}

// AutoOrder is the order Auto tries the OS sandboxes in, strongest
// first: bwrap (its own user, mount, PID, IPC and network namespaces),
// landlock (the kernel's access rules and a seccomp filter, no namespaces
// of its own), seatbelt (macOS), docker last (it needs a running engine
// and an image).
var AutoOrder = []string{bwrap.Backend, landlock.Backend, seatbelt.Backend, "docker"}

// Auto builds the strongest OS sandbox this host offers: the first of
// AutoOrder that is built in, builds and enforces something here. It is
// built with o, so it is strict unless o.BestEffort. It never returns
// local; when no sandbox is usable its error lists each candidate's
// reason.
func Auto(ctx context.Context, o Options) (*Backend, executor.Executor, error) {
	var why []string
	for _, name := range AutoOrder {
		b, err := Lookup(name)
		if err != nil {
			continue
		}
		av := b.Check(ctx, o)
		if !av.Available {
			why = append(why, b.Name+": "+av.Reason)
			continue
		}
		x, err := b.New(o)
		if err != nil {
			r, _ := ExplainUnavailable(err)
			why = append(why, b.Name+": "+r)
			continue
		}
		return b, x, nil
	}
	return nil, nil, fmt.Errorf("no OS sandbox backend is usable on this host (%s); name one with --backend, or --backend local to run with the gate alone", strings.Join(why, "; "))
}
