//go:build !linux

package landlock

import (
	"errors"
	"fmt"
	"github.com/cordon-sandbox/cordon/policyderive"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
)

func helperArgs(rulesetFD int, flags uint32, filter, mounts, cgroup string, netFD, envFD, statusFD int, path string, argv []string) []string {
	return nil
}

// mountPlan is Linux-only.
type mountPlan struct{}

func newMountPlan(_, _ []string) (*mountPlan, error) {
	return nil, errors.ErrUnsupported
}

func mountRegions(*policyderive.Profile, *policyderive.LandlockRuleset) (tops, masks []string) {
	return nil, nil
}

func existingRegions(_, _ []string) (wr, mk []string) { return nil, nil }

func encodeMounts(*mountPlan) string { return "-" }

// commandCgroup is Linux-only.
type commandCgroup struct{ dir string }

func newCommandCgroup(string) (*commandCgroup, error) { return nil, errors.ErrUnsupported }

func (c *commandCgroup) procs() string { return "" }

func (c *commandCgroup) end() (int, error) { return 0, nil }

func userNSStart(*ruleset, *netHandoff) func(string, []string, *os.ProcAttr) (*os.Process, error) {
	return nil
}

func envFile(env []string) (*os.File, error) {
	return nil, fmt.Errorf("landlock: not implemented on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}

const supported = false

func detect() features {
	return features{arch: runtime.GOARCH, errata: -1, seccompWhy: "seccomp is Linux-only"}
}

func newRuleset(pl *plan, log *slog.Logger) (*ruleset, error) {
	return nil, fmt.Errorf("landlock: not implemented on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}

func fileID(path string) (dev, ino uint64, ok bool) { return 0, 0, false }

func readStatus(io.Reader) error { return nil }

// netHandoff is Linux-only.
type netHandoff struct{ child *os.File }

func newNetHandoff(func(net.Listener) error) (*netHandoff, error) {
	return nil, fmt.Errorf("landlock: not implemented on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}

func (*netHandoff) close() {}

// keptNS is Linux-only.
type keptNS struct{}

func (*keptNS) close() {}

func (x *Executor) keptNamespace(*ruleset) *keptNS { return nil }
