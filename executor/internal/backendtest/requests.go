package backendtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// CheckRequestErrors runs the malformed requests every sandboxing
// executor must refuse before anything runs, through Run and, when x has
// it, Start: each error is a *executor.RequestError (executor.
// ErrInvalidRequest), or policyderive.ErrInvalid for a malformed grant,
// and the command — which would create a file in the root — never ran.
// req returns a well-formed request in the root running the command it is
// given; the first row is that request unchanged, the allowed twin, and
// must run.
func CheckRequestErrors(t *testing.T, x executor.Executor, root string, req func(cmd string) *executor.Request) {
	t.Helper()
	ctx := context.Background()
	compiled := func(r *executor.Request) {
		require.NoError(t, r.Compile())
	}
	tests := []struct {
		name string
		mod  func(r *executor.Request)
	}{
		{"nul in env", func(r *executor.Request) { r.Env = append(r.Env, "A=x\x00--bind\x00/\x00/") }},
		{"env without =", func(r *executor.Request) { r.Env = append(r.Env, "NOEQUALS") }},
		{"empty key", func(r *executor.Request) { r.Env = append(r.Env, "=v") }},
		{"nul in command", func(r *executor.Request) { r.Command += "\x00" }},
		{"nul in dir", func(r *executor.Request) { r.Dir += "\x00" }},
		{"no policy", func(r *executor.Request) { r.Policy = nil }},
		{"no root", func(r *executor.Request) { r.Root = "" }},
		{"relative root", func(r *executor.Request) { r.Root = "root" }},
		{"relative dir", func(r *executor.Request) { r.Dir = "sub" }},
		{"negative timeout", func(r *executor.Request) { r.Timeout = -time.Second }},
		{"negative limit", func(r *executor.Request) { r.OutputLimit = -1 }},
		{"nul in a grant", func(r *executor.Request) { r.Grants = []policy.Grant{{Path: "/x\x00", Op: policy.Read}} }},
		{"empty grant", func(r *executor.Request) { r.Grants = []policy.Grant{{Path: "", Op: policy.Read}} }},
		{"checker of another policy", func(r *executor.Request) { compiled(r); r.Policy = policy.Trusted.Policy() }},
		{"checker of another root", func(r *executor.Request) { compiled(r); r.Root = filepath.Dir(r.Root) }},
		{"checker of another home", func(r *executor.Request) { compiled(r); r.Home = "/nonexistent-home" }},
	}
	starter, _ := x.(interface {
		Start(context.Context, *executor.Request) (executor.Process, error)
	})
	marker := filepath.Join(root, "ran")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req("touch " + marker)
			tt.mod(r)
			_, err := x.Run(ctx, r)
			var re *executor.RequestError
			if !errors.As(err, &re) {
				assert.ErrorIs(t, err, policyderive.ErrInvalid, "neither a RequestError nor a policyderive input error")
			}
			if starter != nil {
				_, err = starter.Start(ctx, r)
				assert.True(t, errors.Is(err, executor.ErrInvalidRequest) || errors.Is(err, policyderive.ErrInvalid), "Start: %v", err)
			}
			assert.NoFileExists(t, marker)
		})
	}
	_, err := x.Run(ctx, nil)
	assert.ErrorIs(t, err, executor.ErrInvalidRequest, "nil request")

	// The twin: the same request, unchanged and compiled, runs.
	for _, mod := range []func(*executor.Request){func(*executor.Request) {}, compiled} {
		r := req("touch " + marker)
		mod(r)
		res, err := x.Run(ctx, r)
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode, "twin: stderr %s", res.Stderr)
		assert.FileExists(t, marker, "twin: the well-formed request ran")
		require.NoError(t, os.Remove(marker))
	}
}
