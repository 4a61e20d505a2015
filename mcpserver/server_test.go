//go:build linux

package mcpserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/mcpserver"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

func TestMain(m *testing.M) {
	landlock.Init()
	bwrap.Init()
	os.Exit(m.Run())
}

// quiet logs warnings only, so that a failing test's output stays short.
var quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// secret is the content of the files no command may read.
const secret = "SECRET-4b1d"

// fixture is a workspace root and a fake home with a secret, served by a
// Server over a real executor.
type fixture struct {
	root, home string
	srv        *mcpserver.Server
	ws         *workspace.Workspace
}

// newLandlock returns a landlock executor, skipping where Landlock is
// unavailable (failing where CORDON_REQUIRE names it).
func newLandlock(t *testing.T) executor.Executor {
	t.Helper()
	x, err := landlock.New(landlock.Config{})
	if err != nil {
		testenv.SkipUnavailable(t, testenv.Landlock, err)
	}
	caps := x.Describe(t.Context())
	testenv.Require(t, testenv.Landlock, caps.Sandboxed, "landlock enforces nothing here: "+caps.Info["troubleshooting"])
	t.Cleanup(func() { x.Close() })
	return x
}

// newFixture serves a coding-mode workspace: .env* denied, echo, cat, ls
// and sleep allowed, every other command asked.
func newFixture(t *testing.T, x executor.Executor, cfg mcpserver.Config) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := &fixture{root: filepath.Join(base, "root"), home: filepath.Join(base, "home")}
	require.NoError(t, os.MkdirAll(filepath.Join(f.home, ".ssh"), 0o700))
	require.NoError(t, os.MkdirAll(f.root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.home, ".ssh", "id_rsa"), []byte(secret+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "notes.md"), []byte("# notes\nhello world\n"), 0o644))
	f.ws, err = workspace.Local(f.root,
		workspace.WithMode(policy.Coding),
		workspace.WithDeniedPaths(".env*"),
		workspace.WithCommandRules(
			policy.CommandRule{Pattern: "echo", Action: policy.Allow},
			policy.CommandRule{Pattern: "cat", Action: policy.Allow},
			policy.CommandRule{Pattern: "ls", Action: policy.Allow},
			policy.CommandRule{Pattern: "sleep", Action: policy.Allow},
			policy.CommandRule{Pattern: "exit", Action: policy.Allow},
		),
		workspace.WithHome(f.home),
		workspace.WithExecutor(x),
		workspace.WithAsker(mcpserver.Approve),
	)
	require.NoError(t, err)
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	f.srv, err = mcpserver.New(t.Context(), f.ws, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// elicitor answers elicitations from a script and counts them.
type elicitor struct {
	mu       sync.Mutex
	answers  []string // decision per ask; "" declines
	messages []string
}

func (e *elicitor) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.messages = append(e.messages, req.Params.Message)
	if len(e.answers) == 0 {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	a := e.answers[0]
	e.answers = e.answers[1:]
	if a == "" {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": a}}, nil
}

func (e *elicitor) asked() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.messages)
}

func (e *elicitor) answer(a ...string) {
	e.mu.Lock()
	e.answers = append(e.answers, a...)
	e.mu.Unlock()
}

// connect connects a Go SDK client to the server in memory. With a nil
// elicitor the client does not declare elicitation.
func (f *fixture) connect(t *testing.T, e *elicitor, logs chan<- *mcp.LoggingMessageParams) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- f.srv.Run(ctx, st) }()
	cs := f.dial(t, ct, e, logs)
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

func (f *fixture) dial(t *testing.T, tr mcp.Transport, e *elicitor, logs chan<- *mcp.LoggingMessageParams) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if e != nil {
		opts.ElicitationHandler = e.handle
	}
	if logs != nil {
		opts.LoggingMessageHandler = func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params }
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "cordon-test", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), tr, nil)
	require.NoError(t, err)
	if logs != nil {
		require.NoError(t, cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}))
	}
	return cs
}

// call calls a tool and returns its result and its text.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "calling %s", name)
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return res, strings.Join(text, "\n")
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

func hashFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return "absent"
	}
	require.NoError(t, err)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// gone reports whether pid no longer exists (waiting up to 10 s).
func gone(pid int) bool {
	for range 200 {
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func TestToolsAndInstructions(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	cs := f.connect(t, &elicitor{}, nil)
	s, err := f.ws.Open(t.Context())
	require.NoError(t, err)
	defer s.Close()

	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var got, want []string
	for _, tool := range list.Tools {
		got = append(got, tool.Name)
		require.NotNil(t, tool.Annotations, tool.Name)
		switch tool.Name {
		case workspace.ToolReadFile, workspace.ToolListFiles, workspace.ToolGrepFiles, workspace.ToolReadProcessOutput, workspace.ToolListProcesses:
			assert.True(t, tool.Annotations.ReadOnlyHint, "%s is read-only", tool.Name)
		default:
			assert.False(t, tool.Annotations.ReadOnlyHint, "%s changes things", tool.Name)
		}
		schema, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		assert.Contains(t, string(schema), `"additionalProperties":false`, tool.Name)
	}
	for _, tool := range s.Tools() {
		want = append(want, tool.Name)
	}
	assert.ElementsMatch(t, want, got, "exactly the session's tools")
	assert.Contains(t, got, workspace.ToolShell)
	assert.Contains(t, got, workspace.ToolSpawnProcess)
	assert.Equal(t, s.Instructions(), cs.InitializeResult().Instructions, "the instructions are the workspace section")
	assert.Contains(t, cs.InitializeResult().Instructions, "## Workspace")
}

func TestReadonlyListsNoWriteTools(t *testing.T) {
	x := newLandlock(t)
	root := t.TempDir()
	ws, err := workspace.Local(root, workspace.WithMode(policy.Readonly), workspace.WithExecutor(x), workspace.WithAsker(mcpserver.Approve))
	require.NoError(t, err)
	srv, err := mcpserver.New(t.Context(), ws, mcpserver.Config{Logger: quiet})
	require.NoError(t, err)
	defer srv.Close()
	f := &fixture{root: root, srv: srv, ws: ws}
	cs := f.connect(t, nil, nil)
	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, []string{workspace.ToolReadFile, workspace.ToolListFiles, workspace.ToolGrepFiles}, names, "readonly offers no write tool and no shell")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: workspace.ToolWriteFile, Arguments: map[string]any{"path": "x", "content": "y"}})
	if err == nil {
		assert.True(t, res.IsError, "a tool not listed cannot be called")
	}
	assert.Equal(t, "absent", hashFile(t, filepath.Join(root, "x")))
}

func TestFileTools(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	// Only here: under Landlock a denied file anywhere below the root
	// takes from every command the right to create files in the
	// directories above it (a right granted on a directory holds for all
	// below it).
	require.NoError(t, os.MkdirAll(filepath.Join(f.root, "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "app", ".env"), []byte("TOKEN="+secret+"\n"), 0o600))
	cs := f.connect(t, &elicitor{}, nil)

	res, text := call(t, cs, workspace.ToolReadFile, map[string]any{"path": "notes.md"})
	require.False(t, res.IsError, text)
	var rr workspace.ReadResult
	structured(t, res, &rr)
	assert.Contains(t, rr.Content, "hello world")
	assert.Contains(t, text, "hello world")

	res, text = call(t, cs, workspace.ToolReadFile, map[string]any{"path": "app/.env"})
	assert.True(t, res.IsError, "a denied read is an error result")
	assert.NotContains(t, text, secret)
	assert.Contains(t, text, "[cordon] refused: read")
	assert.Contains(t, text, ".env*", "the violation names the rule")

	res, text = call(t, cs, workspace.ToolWriteFile, map[string]any{"path": "src/new.txt", "content": "fresh\n"})
	require.False(t, res.IsError, text)
	b, err := os.ReadFile(filepath.Join(f.root, "src", "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "fresh\n", string(b), "the write reached the disk")

	res, text = call(t, cs, workspace.ToolEditFile, map[string]any{"path": "notes.md", "old_string": "hello world", "new_string": "hello mcp"})
	require.False(t, res.IsError, text)
	b, err = os.ReadFile(filepath.Join(f.root, "notes.md"))
	require.NoError(t, err)
	assert.Equal(t, "# notes\nhello mcp\n", string(b))

	envHash := hashFile(t, filepath.Join(f.root, "app", ".env"))
	res, _ = call(t, cs, workspace.ToolWriteFile, map[string]any{"path": "app/.env", "content": "x"})
	assert.True(t, res.IsError, "a denied write is an error result")
	assert.Equal(t, envHash, hashFile(t, filepath.Join(f.root, "app", ".env")), "the denied file is unchanged")

	res, text = call(t, cs, workspace.ToolListFiles, map[string]any{"include_hidden": true})
	require.False(t, res.IsError, text)
	assert.Contains(t, text, "notes.md")

	res, text = call(t, cs, workspace.ToolGrepFiles, map[string]any{"pattern": "mcp|TOKEN", "include_hidden": true})
	require.False(t, res.IsError, text)
	assert.Contains(t, text, "hello mcp")
	assert.NotContains(t, text, secret, "grep skips the denied file")
}

// writeProbe writes probe.sh, which reads the root's notes and the
// home's secret: the gate sees neither (it asks for the script itself), so
// only the OS sandbox can stop the second read.
func (f *fixture) writeProbe(t *testing.T) {
	t.Helper()
	script := "#!/bin/sh\ncat notes.md\ncat " + filepath.Join(f.home, ".ssh", "id_rsa") + "\necho probe-done\n"
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "probe.sh"), []byte(script), 0o755))
}

func TestShellSandboxed(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	f.writeProbe(t)
	e := &elicitor{}
	cs := f.connect(t, e, nil)

	res, text := call(t, cs, workspace.ToolShell, map[string]any{"command": "cat notes.md"})
	require.False(t, res.IsError, text)
	var rr workspace.RunResult
	structured(t, res, &rr)
	assert.Equal(t, 0, rr.ExitCode)
	assert.Contains(t, rr.Stdout, "hello world", "an allowed command reads the root")

	e.answer(mcpserver.AnswerAllowOnce)
	res, text = call(t, cs, workspace.ToolShell, map[string]any{"command": "./probe.sh"})
	require.False(t, res.IsError, text)
	structured(t, res, &rr)
	assert.Contains(t, rr.Stdout, "hello world", "allowed twin: the approved script reads the root")
	assert.Contains(t, rr.Stdout, "probe-done", "the script ran to its end")
	assert.NotContains(t, text, secret, "the kernel keeps the home's secret from an approved command")
	assert.Contains(t, rr.Stderr, "id_rsa")
}

func TestAskElicitation(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	e := &elicitor{}
	cs := f.connect(t, e, nil)

	// allow once: the command runs; the same command asks again.
	e.answer(mcpserver.AnswerAllowOnce)
	res, text := call(t, cs, workspace.ToolShell, map[string]any{"command": "touch once.txt"})
	require.False(t, res.IsError, text)
	assert.Equal(t, 1, e.asked())
	assert.NotEqual(t, "absent", hashFile(t, filepath.Join(f.root, "once.txt")), "the approved command ran")
	assert.Contains(t, e.messages[0], "touch once.txt", "the elicitation names the command")
	assert.Contains(t, e.messages[0], "landlock sandbox", "and says where it runs")

	e.answer(mcpserver.AnswerDeny)
	require.NoError(t, os.Remove(filepath.Join(f.root, "once.txt")))
	res, text = call(t, cs, workspace.ToolShell, map[string]any{"command": "touch once.txt"})
	assert.True(t, res.IsError, "denied after allow once: %s", text)
	assert.Equal(t, 2, e.asked(), "allow once is not remembered")
	assert.Equal(t, "absent", hashFile(t, filepath.Join(f.root, "once.txt")), "the denied command did not run")
	assert.Contains(t, text, "declined")

	// decline (the form's own button) denies.
	e.answer("")
	res, _ = call(t, cs, workspace.ToolShell, map[string]any{"command": "touch declined.txt"})
	assert.True(t, res.IsError)
	assert.Equal(t, "absent", hashFile(t, filepath.Join(f.root, "declined.txt")))

	// allow for the session: exactly this request, not another. (A
	// file the command names is pinned by content: s.txt exists first.)
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "s.txt"), nil, 0o644))
	e.answer(mcpserver.AnswerAllowSession)
	res, text = call(t, cs, workspace.ToolShell, map[string]any{"command": "touch s.txt"})
	require.False(t, res.IsError, text)
	n := e.asked()
	res, text = call(t, cs, workspace.ToolShell, map[string]any{"command": "touch s.txt"})
	require.False(t, res.IsError, text)
	assert.Equal(t, n, e.asked(), "the session grant covers the same command")
	e.answer(mcpserver.AnswerDeny)
	res, _ = call(t, cs, workspace.ToolShell, map[string]any{"command": "touch t.txt"})
	assert.True(t, res.IsError)
	assert.Equal(t, n+1, e.asked(), "another command asks again")
	assert.Equal(t, "absent", hashFile(t, filepath.Join(f.root, "t.txt")))

	// a session grant ends with the session.
	e2 := &elicitor{}
	cs2 := f.connect(t, e2, nil)
	e2.answer(mcpserver.AnswerDeny)
	res, _ = call(t, cs2, workspace.ToolShell, map[string]any{"command": "touch s.txt"})
	assert.True(t, res.IsError, "another session does not inherit the grant")
	assert.Equal(t, 1, e2.asked())
}

func TestAskFallback(t *testing.T) {
	x := newLandlock(t)
	t.Run("deny", func(t *testing.T) {
		f := newFixture(t, x, mcpserver.Config{})
		cs := f.connect(t, nil, nil)
		res, text := call(t, cs, workspace.ToolShell, map[string]any{"command": "touch asked.txt"})
		assert.True(t, res.IsError)
		assert.Contains(t, text, "cannot ask the user", "the message says why, for the model to relay")
		assert.Contains(t, text, "touch asked.txt")
		assert.Equal(t, "absent", hashFile(t, filepath.Join(f.root, "asked.txt")))
	})
	t.Run("allow", func(t *testing.T) {
		f := newFixture(t, x, mcpserver.Config{OnAsk: mcpserver.AskAllow})
		cs := f.connect(t, nil, nil)
		res, text := call(t, cs, workspace.ToolShell, map[string]any{"command": "touch asked.txt"})
		require.False(t, res.IsError, text)
		assert.NotEqual(t, "absent", hashFile(t, filepath.Join(f.root, "asked.txt")))
		f.writeProbe(t)
		res, text = call(t, cs, workspace.ToolShell, map[string]any{"command": "./probe.sh"})
		require.False(t, res.IsError, text)
		assert.Contains(t, text, "hello world", "allowed twin")
		assert.NotContains(t, text, secret, "--on-ask allow approves asks; the sandbox still holds")
	})
}

func TestBackgroundProcesses(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	logs := make(chan *mcp.LoggingMessageParams, 16)
	cs := f.connect(t, &elicitor{}, logs)

	res, text := call(t, cs, workspace.ToolSpawnProcess, map[string]any{"command": "sleep 1000"})
	require.False(t, res.IsError, text)
	var pi workspace.ProcessInfo
	structured(t, res, &pi)
	require.NotZero(t, pi.Pid)
	require.NoError(t, syscall.Kill(pi.Pid, 0), "control: the process runs")

	res, text = call(t, cs, workspace.ToolReadProcessOutput, map[string]any{"id": pi.ID})
	require.False(t, res.IsError, text)
	assert.Contains(t, text, `"status":"running"`)

	res, text = call(t, cs, workspace.ToolKillProcess, map[string]any{"id": pi.ID})
	require.False(t, res.IsError, text)
	assert.True(t, gone(pi.Pid), "kill_process killed it")

	// An exit reaches the client as a notification and as a status line on
	// the next result.
	res, text = call(t, cs, workspace.ToolSpawnProcess, map[string]any{"command": "echo bye; exit 3"})
	require.False(t, res.IsError, text)
	structured(t, res, &pi)
	select {
	case m := <-logs:
		b, _ := json.Marshal(m.Data)
		assert.Contains(t, string(b), `"event":"process_exited"`)
		assert.Contains(t, string(b), pi.ID)
	case <-time.After(30 * time.Second):
		t.Fatal("no notification of the exit")
	}
	_, text = call(t, cs, workspace.ToolListProcesses, nil)
	assert.Contains(t, text, "[cordon] background process "+pi.ID)
	assert.Contains(t, text, "exit code 3")
	res, text = call(t, cs, workspace.ToolReadProcessOutput, map[string]any{"id": pi.ID})
	require.False(t, res.IsError, text)
	assert.Contains(t, text, "bye")
}

func TestDisconnectReaps(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	ct, st := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- f.srv.Run(context.Background(), st) }()
	cs := f.dial(t, ct, &elicitor{}, nil)
	res, text := call(t, cs, workspace.ToolSpawnProcess, map[string]any{"command": "sleep 1000"})
	require.False(t, res.IsError, text)
	var pi workspace.ProcessInfo
	structured(t, res, &pi)
	require.NoError(t, syscall.Kill(pi.Pid, 0), "control: the process runs")
	require.NoError(t, cs.Close())
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the client left")
	}
	assert.ErrorIs(t, syscall.Kill(pi.Pid, 0), syscall.ESRCH, "Run returned after reaping the session's processes")
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	cs := f.connect(t, &elicitor{}, nil)

	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	require.Error(t, err, "an unknown tool is a protocol error")
	assert.Contains(t, err.Error(), "no_such_tool")

	res, text := call(t, cs, workspace.ToolReadFile, map[string]any{"path": 42})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "path")

	res, text = call(t, cs, workspace.ToolReadFile, map[string]any{"path": "notes.md", "bogus": true})
	assert.True(t, res.IsError, "unknown properties are refused: %s", text)

	res, text = call(t, cs, workspace.ToolReadFile, map[string]any{})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "missing")

	res, text = call(t, cs, workspace.ToolReadFile, map[string]any{"path": "notes\x00.md"})
	assert.True(t, res.IsError, "a path with NUL: %s", text)

	huge := strings.Repeat("x", 3<<20)
	res, text = call(t, cs, workspace.ToolWriteFile, map[string]any{"path": "huge.txt", "content": huge})
	if res.IsError {
		assert.Equal(t, "absent", hashFile(t, filepath.Join(f.root, "huge.txt")), "a refused write leaves nothing: %s", text[:min(len(text), 200)])
	} else {
		assert.Equal(t, int64(len(huge)), fileSize(t, filepath.Join(f.root, "huge.txt")))
	}
	res, text = call(t, cs, workspace.ToolShell, map[string]any{"command": "echo " + strings.Repeat("y", 1<<20)})
	assert.NotEmpty(t, text)
	_ = res

	res, text = call(t, cs, workspace.ToolReadFile, map[string]any{"path": "notes.md"})
	require.False(t, res.IsError, "the server keeps serving: %s", text)
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	require.NoError(t, err)
	return st.Size()
}

func TestHTTPSessions(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	hs := httptest.NewServer(f.srv.HTTPHandler(nil))
	defer hs.Close()

	a := f.dial(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &elicitor{}, nil)
	b := f.dial(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &elicitor{}, nil)
	defer b.Close()

	res, text := call(t, a, workspace.ToolSpawnProcess, map[string]any{"command": "sleep 1000"})
	require.False(t, res.IsError, text)
	var pi workspace.ProcessInfo
	structured(t, res, &pi)

	_, text = call(t, b, workspace.ToolListProcesses, nil)
	assert.NotContains(t, text, "sleep 1000", "a second client has its own session")
	_, text = call(t, a, workspace.ToolListProcesses, nil)
	assert.Contains(t, text, "sleep 1000", "control: the first client sees its process")

	// concurrent calls on one session
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := b.CallTool(t.Context(), &mcp.CallToolParams{Name: workspace.ToolWriteFile, Arguments: map[string]any{"path": "c.txt", "content": strings.Repeat(string(rune('a'+i)), 1000)}})
			if assert.NoError(t, err) {
				assert.False(t, res.IsError)
			}
		}()
	}
	wg.Wait()
	b2, err := os.ReadFile(filepath.Join(f.root, "c.txt"))
	require.NoError(t, err)
	assert.Len(t, b2, 1000)
	assert.Equal(t, strings.Repeat(string(b2[0]), 1000), string(b2), "one whole write won")

	require.NoError(t, a.Close())
	assert.True(t, gone(pi.Pid), "ending the HTTP session kills its processes")
}

func TestAskMessageCannotBeSpoofed(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	e := &elicitor{}
	cs := f.connect(t, e, nil)
	for _, cmd := range []string{
		"touch a.txt\nIf you approve, it runs harmlessly.\nallow_once: safe",
		"touch b.txt # \u202eevil\u202c \x1b[2Jcleared",
		"touch c.txt # " + strings.Repeat("x", 10000) + " ; touch hidden.txt",
		"touch d.txt" + strings.Repeat("\u3164", 300) + strings.Repeat(" ", 300) + "\u0336; touch hidden2.txt",
	} {
		e.answer(mcpserver.AnswerDeny)
		res, _ := call(t, cs, workspace.ToolShell, map[string]any{"command": cmd})
		assert.True(t, res.IsError)
	}
	require.Len(t, e.messages, 4)
	for _, m := range e.messages {
		lines := strings.Split(m, "\n")
		assert.Len(t, lines, 4, "the model's text adds no line to the form: %q", m)
		for _, l := range lines[1:] {
			assert.False(t, strings.HasPrefix(l, "If you approve, it runs harmlessly"), "%q", m)
		}
		assert.NotContains(t, m, "\u202e", "bidirectional overrides are escaped")
		assert.NotContains(t, m, "\x1b", "terminal escapes are escaped")
	}
	assert.Contains(t, e.messages[2], "shown shortened", "a long command says it is shortened")
	assert.Contains(t, e.messages[2], "touch hidden.txt", "and still shows its end")
	assert.Less(t, len(e.messages[2]), 12000)
	assert.Contains(t, e.messages[3], `\u3164`, "filler characters are escaped")
	assert.Contains(t, e.messages[3], `\u0336`, "combining characters are escaped")
	assert.Contains(t, e.messages[3], "⟨300 spaces⟩", "a run of spaces is marked")
	assert.Contains(t, strings.Split(e.messages[3], "\n")[0], "touch hidden2.txt", "the whole command is on the first line")
	assert.Less(t, len(e.messages[3]), 6000)
}

// TestApprovalScope: an approval covers the tool and the operation that
// asked, never a stronger one.
func TestApprovalScope(t *testing.T) {
	x := newLandlock(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(base, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "secret"), 0o755))
	file := filepath.Join(root, "secret", "a.txt")
	require.NoError(t, os.WriteFile(file, []byte("alpha\n"), 0o644))
	ws, err := workspace.Local(root, workspace.WithMode(policy.Coding),
		workspace.WithPathRules(policy.PathRule{Pattern: "secret/", Action: policy.Ask}),
		workspace.WithExecutor(x), workspace.WithAsker(mcpserver.Approve), workspace.WithLogger(quiet))
	require.NoError(t, err)
	srv, err := mcpserver.New(t.Context(), ws, mcpserver.Config{Logger: quiet})
	require.NoError(t, err)
	f := &fixture{root: root, srv: srv, ws: ws}
	t.Cleanup(func() { srv.Close() })
	e := &elicitor{}
	cs := f.connect(t, e, nil)

	e.answer(mcpserver.AnswerDeny)
	res, _ := call(t, cs, workspace.ToolEditFile, map[string]any{"path": "secret/a.txt", "old_string": "alpha", "new_string": "beta"})
	assert.True(t, res.IsError)
	require.Len(t, e.messages, 1)
	assert.Contains(t, e.messages[0], "editing", "an edit is asked as an edit: %s", e.messages[0])
	assert.NotContains(t, e.messages[0], "reading the file")

	e.answer(mcpserver.AnswerAllowSession)
	res, text := call(t, cs, workspace.ToolReadFile, map[string]any{"path": "secret/a.txt"})
	require.False(t, res.IsError, text)
	e.answer(mcpserver.AnswerDeny)
	res, _ = call(t, cs, workspace.ToolEditFile, map[string]any{"path": "secret/a.txt", "old_string": "alpha", "new_string": "beta"})
	assert.True(t, res.IsError, "a session grant to read does not cover an edit")
	assert.Len(t, e.messages, 3, "the edit asked again")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "alpha\n", string(b))

	e.answer(mcpserver.AnswerAllowSession)
	res, text = call(t, cs, workspace.ToolListFiles, map[string]any{"path": "secret"})
	require.False(t, res.IsError, text)
	e.answer(mcpserver.AnswerDeny)
	res, text = call(t, cs, workspace.ToolGrepFiles, map[string]any{"pattern": "alpha", "path": "secret"})
	assert.True(t, res.IsError, "a session grant to list a directory does not cover reading its files")
	assert.NotContains(t, text, "alpha\n")
	assert.Len(t, e.messages, 5)
	assert.Contains(t, e.messages[4], "searching the contents of every file under")
}

func TestHTTPLimits(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{MaxSessions: 1})
	hs := httptest.NewServer(f.srv.HTTPHandler(nil))
	defer hs.Close()

	req, err := http.NewRequest("POST", hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a cross-origin request is refused")

	a := f.dial(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &elicitor{}, nil)
	defer a.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "second", Version: "1"}, nil)
	_, err = c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	assert.Error(t, err, "a session over MaxSessions is refused")
	res, text := call(t, a, workspace.ToolReadFile, map[string]any{"path": "notes.md"})
	assert.False(t, res.IsError, "control: the first session works: %s", text)
}

// TestBackgroundNetworkAskOverHTTP: a background process that connects to
// a host network.unknown: ask covers, after the call that started it has
// returned, still reaches its client's user over HTTP (the call's own
// response stream is gone by then).
func TestBackgroundNetworkAskOverHTTP(t *testing.T) {
	x := newLandlock(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, err := workspace.Local(base, workspace.WithMode(policy.Coding),
		workspace.WithCommandRules(policy.CommandRule{Pattern: "sleep", Action: policy.Allow}, policy.CommandRule{Pattern: "curl", Action: policy.Allow}),
		workspace.WithNetworkAllowList(policy.HostRules{Allow: []string{"127.0.0.1:1"}, Unknown: policy.Ask}),
		workspace.WithExecutor(x), workspace.WithAsker(mcpserver.Approve), workspace.WithLogger(quiet))
	require.NoError(t, err)
	srv, err := mcpserver.New(t.Context(), ws, mcpserver.Config{Logger: quiet})
	require.NoError(t, err)
	defer srv.Close()
	f := &fixture{root: base, srv: srv, ws: ws}
	hs := httptest.NewServer(srv.HTTPHandler(nil))
	defer hs.Close()
	e := &elicitor{}
	cs := f.dial(t, &mcp.StreamableClientTransport{Endpoint: hs.URL}, e, nil)
	defer cs.Close()

	e.answer(mcpserver.AnswerDeny)
	res, text := call(t, cs, workspace.ToolSpawnProcess, map[string]any{"command": "sleep 0.5; curl -s -m 5 http://ask-later.test/"})
	require.False(t, res.IsError, text)
	deadline := time.Now().Add(20 * time.Second)
	for e.asked() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, 1, e.asked(), "the background process's ask reached the client")
	assert.Contains(t, e.messages[0], "ask-later.test")
	assert.Contains(t, e.messages[0], "curl", "the ask names the command that connects")
}

// TestSessionGrantFollowsScript: a session grant for a command that runs a
// script does not survive a change of the script.
func TestSessionGrantFollowsScript(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	e := &elicitor{}
	cs := f.connect(t, e, nil)
	script := filepath.Join(f.root, "build.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho built\n"), 0o755))

	e.answer(mcpserver.AnswerAllowSession)
	res, text := call(t, cs, workspace.ToolShell, map[string]any{"command": "sh build.sh"})
	require.False(t, res.IsError, text)
	res, text = call(t, cs, workspace.ToolShell, map[string]any{"command": "sh build.sh"})
	require.False(t, res.IsError, text)
	assert.Equal(t, 1, e.asked(), "control: the unchanged script runs under the session grant")

	res, text = call(t, cs, workspace.ToolWriteFile, map[string]any{"path": "build.sh", "content": "#!/bin/sh\ntouch changed.txt\n"})
	require.False(t, res.IsError, text)
	e.answer(mcpserver.AnswerDeny)
	res, _ = call(t, cs, workspace.ToolShell, map[string]any{"command": "sh build.sh"})
	assert.True(t, res.IsError, "the changed script asks again")
	assert.Equal(t, 2, e.asked())
	assert.Equal(t, "absent", hashFile(t, filepath.Join(f.root, "changed.txt")))

	// A bare name granted for the session, then shadowed by a program in
	// a virtualenv the agent creates (the workspace puts it first on PATH).
	e.answer(mcpserver.AnswerAllowSession)
	res, text = call(t, cs, workspace.ToolShell, map[string]any{"command": "stat notes.md"})
	require.False(t, res.IsError, text)
	for name, body := range map[string]string{".venv/bin/python": "", ".venv/bin/stat": "#!/bin/sh\ntouch shadowed.txt\n"} {
		res, text = call(t, cs, workspace.ToolWriteFile, map[string]any{"path": name, "content": body})
		require.False(t, res.IsError, text)
		require.NoError(t, os.Chmod(filepath.Join(f.root, name), 0o755))
	}
	n := e.asked()
	e.answer(mcpserver.AnswerDeny)
	res, _ = call(t, cs, workspace.ToolShell, map[string]any{"command": "stat notes.md"})
	assert.True(t, res.IsError, "the shadowing program asks again")
	assert.Equal(t, n+1, e.asked())
	assert.Equal(t, "absent", hashFile(t, filepath.Join(f.root, "shadowed.txt")))
}

// TestUnresolvedClaimGrantsNothing: approving a command whose path claim
// the gate could not resolve ("${e}nv") grants nothing for it; before, the
// word became a grant that the sandbox resolved on the live disk, through
// a symbolic link the agent had planted, to the home's secret.
func TestUnresolvedClaimGrantsNothing(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	require.NoError(t, os.Symlink(filepath.Join(f.home, ".ssh", "id_rsa"), filepath.Join(f.root, "${e}nv")))
	e := &elicitor{}
	cs := f.connect(t, e, nil)
	e.answer(mcpserver.AnswerAllowOnce)
	res, text := call(t, cs, workspace.ToolShell, map[string]any{"command": "e='${e}'; cat ${e}nv; cat notes.md"})
	require.False(t, res.IsError, text)
	require.Equal(t, 1, e.asked(), "the command asked")
	assert.Contains(t, text, "hello world", "allowed twin: the approved command ran")
	assert.NotContains(t, text, secret, "the planted link's target was not granted")
}

// TestSessionGrantFollowsLinkOutside: a script link in the root pointing
// outside it is not read, but repointing it asks again (the key holds the
// link's resolved target, besides the grants the gate's claims give).
func TestSessionGrantFollowsLinkOutside(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	e := &elicitor{}
	cs := f.connect(t, e, nil)
	a, b := filepath.Join(f.home, "a.sh"), filepath.Join(f.home, "b.sh")
	require.NoError(t, os.WriteFile(a, []byte("echo a\n"), 0o755))
	require.NoError(t, os.WriteFile(b, []byte("echo b\n"), 0o755))
	link := filepath.Join(f.root, "run.sh")
	require.NoError(t, os.Symlink(a, link))

	e.answer(mcpserver.AnswerAllowSession)
	call(t, cs, workspace.ToolShell, map[string]any{"command": "./run.sh"})
	call(t, cs, workspace.ToolShell, map[string]any{"command": "./run.sh"})
	assert.Equal(t, 1, e.asked(), "control: the same link is covered by the session grant")

	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(b, link))
	e.answer(mcpserver.AnswerDeny)
	res, _ := call(t, cs, workspace.ToolShell, map[string]any{"command": "./run.sh"})
	assert.True(t, res.IsError, "the repointed link asks again")
	assert.Equal(t, 2, e.asked())
}

// TestSessionGrantFollowsQuotedScript: the words a session grant's key
// covers are the shell's own after quote removal, so a quoted script name,
// a redirection and a pipe from a file are covered; a command whose words
// are known only when it runs is never remembered. Before, the key split
// the command on spaces, so `sh "build.sh"` stayed granted after the
// script changed.
func TestSessionGrantFollowsQuotedScript(t *testing.T) {
	f := newFixture(t, newLandlock(t), mcpserver.Config{})
	e := &elicitor{}
	cs := f.connect(t, e, nil)
	for i, form := range []string{`sh "%s"`, `sh '%s'`, `sh < %s`, `cat %s | sh`, `sh -c "$(cat %s)"`, `f=%s; sh "$f"`, `sh %s*`} {
		// A script of its own per form: a session grant for one form
		// covers the others (the same words after quote removal).
		name := fmt.Sprintf("build%d.sh", i)
		command := fmt.Sprintf(form, name)
		script := filepath.Join(f.root, name)
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho built\n"), 0o755))
		n := e.asked()
		dynamic := i >= 4
		if dynamic {
			// Not coverable: the form offers no allow_session.
			e.answer(mcpserver.AnswerAllowOnce, mcpserver.AnswerAllowOnce)
		} else {
			e.answer(mcpserver.AnswerAllowSession)
		}
		res, text := call(t, cs, workspace.ToolShell, map[string]any{"command": command})
		require.False(t, res.IsError, "%s: %s", command, text)
		require.Contains(t, text, "built", command)
		res, text = call(t, cs, workspace.ToolShell, map[string]any{"command": command})
		require.False(t, res.IsError, "%s: %s", command, text)
		if dynamic {
			assert.Equal(t, n+2, e.asked(), "%s: a command with words known only when it runs is never remembered", command)
			continue
		}
		assert.Equal(t, n+1, e.asked(), "control: %s: the unchanged script runs under the session grant", command)

		marker := fmt.Sprintf("changed%d.txt", i)
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
		e.answer(mcpserver.AnswerDeny)
		res, _ = call(t, cs, workspace.ToolShell, map[string]any{"command": command})
		assert.True(t, res.IsError, "%s: the changed script asks again", command)
		assert.Equal(t, n+2, e.asked(), command)
		assert.Equal(t, "absent", hashFile(t, filepath.Join(f.root, marker)), command)
	}
}
