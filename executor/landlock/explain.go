package landlock

import (
	"context"
	"slices"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// Explanation is what Run would enforce for a request, for display
// (sandbox-probe derive): the Landlock ruleset it would build — protect
// masks dropped unless Config.KernelProtect, the private temporary
// directory granted — the seccomp filter, and the fidelity report with
// this backend's mitigations (seccomp, the mount namespace, the cgroup).
type Explanation struct {
	Profile  *policyderive.Profile
	Ruleset  *policyderive.LandlockRuleset
	Fidelity *policyderive.Fidelity
	// Filter names what the seccomp filter denies.
	Filter []string
	// Blocking are the gaps strict mode refuses: Run fails with an
	// *executor.UnenforceableError naming them unless Config.BestEffort.
	Blocking []executor.Gap
}

// Explain derives and assesses req as Run would, without running
// anything, and returns what Run would enforce.
func (x *Executor) Explain(ctx context.Context, req *executor.Request) (*Explanation, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, err
	}
	pr, pl, err := x.planRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	e := &Explanation{Profile: pr, Ruleset: pl.ruleset, Fidelity: pl.fidelity, Blocking: pl.blocking}
	for _, f := range []struct {
		on   bool
		what string
	}{
		{pl.filter.inet, "socket(2) for every family but AF_UNIX"},
		{pl.filter.loopback, "socket(2) for every family but AF_UNIX, AF_INET and AF_INET6, and for those two every protocol but TCP, UDP and ICMP"},
		{pl.filter.unix, "socket(AF_UNIX)"},
		{pl.filter.ioURing, "io_uring"},
		{pl.filter.kernelObjects, "kernel keyrings and System V IPC"},
	} {
		if f.on {
			e.Filter = append(e.Filter, f.what)
		}
	}
	return e, nil
}

// Assess derives and assesses req as Run would and returns its gaps:
// every looser element not mitigated, inherent ones included.
func (x *Executor) Assess(ctx context.Context, req *executor.Request) ([]executor.Gap, error) {
	if err := req.ValidateSandboxed(); err != nil {
		return nil, err
	}
	_, pl, err := x.planRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(pl.gaps), pl.blocking...), nil
}
