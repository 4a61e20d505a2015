package backendtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// CheckCompiledOnce checks that x compiles no policy per command when the
// request carries its compiled policy (executor.Request.Compile, as a
// workspace's requests do), while the tree changes between commands, and,
// as the twin that shows the count works, that it compiles the policy of
// a request that carries none. req is a request in the workspace root
// (Policy, Root, Home set); it is not modified.
func CheckCompiledOnce(t *testing.T, x executor.Executor, req *executor.Request) {
	t.Helper()
	ctx := context.Background()
	compiled := *req
	require.NoError(t, compiled.Compile())
	runAll := func(r executor.Request) uint64 {
		before := policy.CheckersCompiled()
		for i := range 3 {
			r.Command = fmt.Sprintf("echo %d > compiled-once-%d", i, i)
			res, err := x.Run(ctx, &r)
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
		}
		return policy.CheckersCompiled() - before
	}
	runAll(compiled) // warm the executor's caches
	// Another goroutine of the test binary may compile a policy meanwhile;
	// a compilation per command would show in every attempt.
	var n uint64
	for range 3 {
		if n = runAll(compiled); n == 0 {
			break
		}
	}
	assert.Zero(t, n, "policies compiled for 3 commands whose request carries its Checker")
	assert.GreaterOrEqual(t, runAll(*req), uint64(3), "twin: a request without a Checker is compiled per command")
}
