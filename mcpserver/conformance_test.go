//go:build linux

package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/mcpserver"
	"github.com/cordon-sandbox/cordon/workspace"
)

// viaMCP is an executor.Executor whose every command goes through MCP: a
// Go SDK client calls the shell tool of a Server serving a workspace with
// the case's policy, root and home; the workspace's gate judges it (the
// client approves every ask once) and hands it to the real executor.
//
// The command is sent as `eval "$CORDON_CASE_COMMAND"`, the case's
// command in that variable: the gate judges command text, and would
// refuse the suite's commands that name denied paths before the kernel
// sees them (stronger, but then it is not the sandbox that is tested).
// The gate asks for the eval (unresolved code) and the client approves it
// once, which grants no path. What the protocol cannot carry (the case's
// environment, grants, output limit and network approver) is put back
// into the request the workspace builds, so that the sandbox under test
// is exactly the case's.
type viaMCP struct {
	inner executor.Executor

	mu      sync.Mutex
	nextID  int
	pending map[string]*caseCall
}

// caseCall is one case command on its way through MCP.
type caseCall struct {
	orig *executor.Request
	res  *executor.Result // what the real executor returned
	err  error
	done chan struct{} // closed when the real executor returned
}

// caseCommandEnv holds the case's command; caseIDEnv names the call.
const (
	caseCommandEnv = "CORDON_CASE_COMMAND"
	caseIDEnv      = "CORDON_CASE_CALL"
	viaEval        = `eval "$CORDON_CASE_COMMAND"`
)

func newViaMCP(inner executor.Executor) *viaMCP {
	return &viaMCP{inner: inner, pending: map[string]*caseCall{}}
}

// Run sends req's command as a shell tool call.
func (v *viaMCP) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	v.mu.Lock()
	v.nextID++
	id := fmt.Sprint(v.nextID)
	c := &caseCall{orig: req, done: make(chan struct{})}
	v.pending[id] = c
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		delete(v.pending, id)
		v.mu.Unlock()
	}()
	opts := []workspace.Option{
		workspace.WithEnv(map[string]string{caseIDEnv: id}),
		workspace.WithPolicy(req.Policy),
		workspace.WithHome(req.Home),
		workspace.WithExecutor(restore{v}),
		workspace.WithAsker(mcpserver.Approve),
		workspace.WithLogger(quiet),
	}
	if req.Timeout > 0 {
		opts = append(opts, workspace.WithShellTimeout(req.Timeout))
	}
	ws, err := workspace.Local(req.Root, opts...)
	if err != nil {
		return nil, err
	}
	srv, err := mcpserver.New(ctx, ws, mcpserver.Config{Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	ct, st := mcp.NewInMemoryTransports()
	sctx, stop := context.WithCancel(context.Background())
	defer stop()
	go srv.Run(sctx, st)
	client := mcp.NewClient(&mcp.Implementation{Name: "conformance", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": mcpserver.AnswerAllowOnce}}, nil
		},
	})
	cs, err := client.Connect(context.WithoutCancel(ctx), ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: workspace.ToolShell, Arguments: map[string]any{"command": viaEval, "cwd": req.Dir}})
	if err != nil && ctx.Err() != nil {
		// The client cancelled the call (notifications/cancelled): no
		// result comes back over MCP, so return what the executor
		// returned once the cancellation reached it.
		select {
		case <-c.done:
			return c.res, c.err
		case <-time.After(30 * time.Second):
			return nil, fmt.Errorf("viaMCP: the cancelled command did not end: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	if res.IsError {
		select {
		case <-c.done:
			if c.err != nil {
				// The executor refused (strict mode): its typed error,
				// which the tool result carries only as text.
				return nil, c.err
			}
		default:
		}
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return nil, errors.New(strings.Join(text, "\n"))
	}
	var rr workspace.RunResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &rr); err != nil {
		return nil, fmt.Errorf("decoding the shell result: %w", err)
	}
	return &executor.Result{
		ExitCode:   rr.ExitCode,
		Signal:     rr.Signal,
		Stdout:     []byte(rr.Stdout),
		Stderr:     []byte(rr.Stderr),
		TimedOut:   rr.TimedOut,
		Truncated:  rr.Truncated,
		Duration:   time.Duration(rr.DurationMS) * time.Millisecond,
		Violations: rr.Violations,
		Network:    rr.Network,
	}, nil
}

// Describe is the real executor's.
func (v *viaMCP) Describe(ctx context.Context) executor.Capabilities {
	if d, ok := v.inner.(executor.Describer); ok {
		return d.Describe(ctx)
	}
	return executor.Capabilities{}
}

// Close closes the real executor.
func (v *viaMCP) Close() error {
	if c, ok := v.inner.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// restore is the executor the served workspace runs: it checks that the
// workspace built the request for the eval in the case's directory with
// the case's root and home, puts back what MCP cannot carry, and runs it
// on the real executor.
type restore struct{ v *viaMCP }

func (r restore) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	var id string
	for _, kv := range req.Env {
		if v, ok := strings.CutPrefix(kv, caseIDEnv+"="); ok {
			id = v
		}
	}
	r.v.mu.Lock()
	c := r.v.pending[id]
	r.v.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("viaMCP: the workspace ran %q with no case call (%s=%q)", req.Command, caseIDEnv, id)
	}
	orig := c.orig
	if req.Command != viaEval || req.Dir != orig.Dir || req.Root != orig.Root || req.Home != orig.Home || req.Policy == nil {
		return nil, fmt.Errorf("viaMCP: the workspace changed the request: %q in %s (root %s, home %s)", req.Command, req.Dir, req.Root, req.Home)
	}
	out := *req
	out.Env = append(slices.Clone(orig.Env), caseCommandEnv+"="+orig.Command)
	out.Grants, out.OutputLimit, out.AskNetwork, out.Timeout = orig.Grants, orig.OutputLimit, orig.AskNetwork, orig.Timeout
	c.res, c.err = r.v.inner.Run(ctx, &out)
	close(c.done)
	return c.res, c.err
}

func (r restore) Describe(ctx context.Context) executor.Capabilities { return r.v.Describe(ctx) }

// mcpCases are the isolation layers; the functional layer checks what the
// shell tool cannot carry (binary output, the request's own
// environment and output limit), not the sandbox.
var mcpCases = []conformance.Option{
	conformance.Select("process", "filesystem", "protect", "network"),
	// readonly offers no shell tool at all (TestReadonlyListsNoWriteTools).
	conformance.Skip("readonly-mode"),
}

// suiteDir keeps fixtures out of /tmp (sandboxes make /tmp private).
func suiteDir(t *testing.T) conformance.Option {
	base, err := os.MkdirTemp("/var/tmp", "cordon-mcp-suite-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return conformance.WithTempDir(base)
}

// runViaMCP runs the isolation layers through MCP on executors from
// newInner, one per case.
func runViaMCP(t *testing.T, newInner func() (executor.Executor, error)) {
	conformance.Run(t, func(t *testing.T) executor.Executor {
		x, err := newInner()
		if err != nil {
			t.Fatal(err)
		}
		v := newViaMCP(x)
		t.Cleanup(func() { v.Close() })
		return v
	}, append(mcpCases, conformance.WithEnv("GIT_CONFIG_GLOBAL=/dev/null"), suiteDir(t))...)
}

func TestConformanceLandlock(t *testing.T) {
	newLandlock(t) // skips where Landlock is unavailable
	runViaMCP(t, func() (executor.Executor, error) { return landlock.New(landlock.Config{}) })
}

func TestConformanceBwrap(t *testing.T) {
	x, err := bwrap.New(bwrap.Config{})
	if err != nil {
		testenv.SkipUnavailable(t, testenv.Bwrap, err)
	}
	caps := x.Describe(t.Context())
	x.Close()
	testenv.Require(t, testenv.Bwrap, caps.Sandboxed, "bwrap enforces nothing here: "+caps.Info["troubleshooting"])
	runViaMCP(t, func() (executor.Executor, error) { return bwrap.New(bwrap.Config{}) })
}

// TestConformanceViaMCPCanFail is the control: the same route over an
// executor that enforces nothing must fail the isolation cases, so a
// broken route (a command that never ran, a result lost on the way) can
// never look like a working sandbox.
func TestConformanceViaMCPCanFail(t *testing.T) {
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) {
		return newViaMCP(executor.NewLocal()), nil
	}, conformance.Select("read-home-secrets", "write-outside", "write-inside-root"), conformance.WithEnv("GIT_CONFIG_GLOBAL=/dev/null"), suiteDir(t))
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]conformance.Outcome{}
	for _, c := range rep.Cases {
		outcomes[c.ID] = c.Outcome
	}
	if outcomes["write-inside-root"] != conformance.Allowed {
		t.Errorf("write-inside-root via MCP on local: %s, want allowed (the command ran)", outcomes["write-inside-root"])
	}
	for _, id := range []string{"read-home-secrets", "write-outside"} {
		if outcomes[id] != conformance.Allowed {
			t.Errorf("%s via MCP on local: %s, want allowed (local enforces nothing; anything else means the route lost the command)", id, outcomes[id])
		}
	}
}
