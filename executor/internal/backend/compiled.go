package backend

import (
	"context"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// Derive derives req's profile for a command in cwd with grants from the
// request's compiled policy (executor.Request.Compiled: nothing is
// compiled when the request carries its Checker).
func Derive(ctx context.Context, d *policyderive.Deriver, req *executor.Request, cwd string, grants []policy.Grant) (*policyderive.Profile, error) {
	pc, err := req.Compiled()
	if err != nil {
		return nil, err
	}
	return d.DeriveCompiled(ctx, pc, cwd, grants)
}

// DeriveLive is Derive with the live placeholder mount points of Default
// as an input of the derivation (Registry.Derive,
// policyderive.Deriver.DeriveWith). It returns the registry generation
// the profile is current for: a caller that acquires placeholders checks
// it under the lock (Registry.Current) and derives again if the set
// changed since.
func DeriveLive(ctx context.Context, d *policyderive.Deriver, req *executor.Request, cwd string, grants []policy.Grant) (*policyderive.Profile, uint64, error) {
	pc, err := req.Compiled()
	if err != nil {
		return nil, 0, err
	}
	pr, err := Default.Derive(func(live []policyderive.Mask) (*policyderive.Profile, error) {
		return d.DeriveWith(ctx, pc, cwd, grants, live)
	})
	if err != nil {
		return nil, 0, err
	}
	gen := Default.Gen()
	Default.Unlock()
	return pr, gen, nil
}

// Guard returns c's guard of req's protect rules over trees (nil: nothing
// to guard), from the request's compiled policy.
func Guard(c *protectguard.Cache, req *executor.Request, trees []string) (*protectguard.Guard, error) {
	pc, err := req.Compiled()
	if err != nil {
		return nil, err
	}
	return c.For(pc, trees)
}
