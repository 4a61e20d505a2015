package workspace_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/stretchr/testify/require"
)

// fixture is a workspace root and a home directory, both real temporary
// directories with their symlinks resolved.
type fixture struct {
	root, home, outside string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := fixture{root: filepath.Join(base, "root"), home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{f.root, f.home, f.outside} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	return f
}

// write creates a file (and its parents) below dir.
func write(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// open builds a workspace on f with the home set and opens a session that
// is closed when the test ends.
func (f fixture) open(t *testing.T, opts ...workspace.Option) *workspace.Session {
	t.Helper()
	ws, err := workspace.Local(f.root, append([]workspace.Option{workspace.WithHome(f.home)}, opts...)...)
	require.NoError(t, err)
	s, err := ws.Open(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// approvals is an inspectable Approver: it records every request and
// answers with answer.
type approvals struct {
	mu     sync.Mutex
	answer bool
	err    error
	reqs   []*workspace.ApprovalRequest
}

func (a *approvals) approve(ctx context.Context, r *workspace.ApprovalRequest) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, r)
	return a.answer, a.err
}

func (a *approvals) requests() []*workspace.ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*workspace.ApprovalRequest(nil), a.reqs...)
}

// allowAll approves everything.
func allowAll(context.Context, *workspace.ApprovalRequest) (bool, error) { return true, nil }

// recorder is an inspectable executor: executor.Local that records every
// request it is given.
type recorder struct {
	executor.Local
	mu   sync.Mutex
	reqs []*executor.Request
}

func (r *recorder) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Local.Run(ctx, req)
}

func (r *recorder) Start(ctx context.Context, req *executor.Request) (executor.Process, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Local.Start(ctx, req)
}

func (r *recorder) last() *executor.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		return nil
	}
	return r.reqs[len(r.reqs)-1]
}

// runOnly is an executor without Start or Describe.
type runOnly struct{ l executor.Local }

func (r runOnly) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	return r.l.Run(ctx, req)
}

// described is executor.Local reporting the given capabilities, to render
// the instructions of a sandboxed executor.
type described struct {
	executor.Local
	caps executor.Capabilities
}

func (d *described) Describe(context.Context) executor.Capabilities { return d.caps }

// assessed is a described executor whose assessment of any policy adds
// gaps.
type assessed struct {
	described
	gaps []executor.Gap
}

func (a *assessed) Assess(context.Context, *executor.Request) ([]executor.Gap, error) {
	return a.gaps, nil
}

// requireDenied asserts err is a *policy.DeniedError with the decision.
func requireDenied(t *testing.T, err error, d policy.Decision) *policy.DeniedError {
	t.Helper()
	var de *policy.DeniedError
	require.ErrorAs(t, err, &de)
	require.ErrorIs(t, err, os.ErrPermission)
	require.Equal(t, d, de.Decision, "decision of %v", err)
	require.NotEmpty(t, de.Rule, "the rule that decided")
	require.NotEmpty(t, de.Reason, "the reason for the model")
	return de
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
