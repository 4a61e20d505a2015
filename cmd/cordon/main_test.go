//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/workspace"
)

// asCordon, set to "1", makes the test binary run as cordon.
const asCordon = "CORDON_TEST_AS_CORDON"

func TestMain(m *testing.M) {
	landlock.Init()
	bwrap.Init()
	if os.Getenv(asCordon) == "1" {
		os.Exit(main1())
	}
	os.Exit(m.Run())
}

// requireLandlock skips (or fails, when CORDON_REQUIRE names it) where
// the landlock backend cannot sandbox.
func requireLandlock(t *testing.T) {
	t.Helper()
	x, err := landlock.New(landlock.Config{})
	if err != nil {
		testenv.SkipUnavailable(t, testenv.Landlock, err)
	}
	defer x.Close()
	caps := x.Describe(t.Context())
	testenv.Require(t, testenv.Landlock, caps.Sandboxed, "landlock enforces nothing here: "+caps.Info["troubleshooting"])
}

// cordonCmd returns the test binary as cordon with args.
func cordonCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, TokenEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, asCordon+"=1")
	return cmd
}

// tree is a workspace root and a home with a secret.
type tree struct{ root, home string }

const secret = "SECRET-77e2"

func newTree(t *testing.T) tree {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	tr := tree{root: filepath.Join(base, "root"), home: filepath.Join(base, "home")}
	require.NoError(t, os.MkdirAll(filepath.Join(tr.home, ".ssh"), 0o700))
	require.NoError(t, os.MkdirAll(tr.root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tr.home, ".ssh", "id_rsa"), []byte(secret+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(tr.root, "notes.md"), []byte("hello\n"), 0o644))
	return tr
}

func (tr tree) args(backend string, extra ...string) []string {
	return append([]string{"mcp", "--root", tr.root, "--home", tr.home, "--backend", backend}, extra...)
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

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, name)
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return res, strings.Join(parts, "\n")
}

func TestStdioSession(t *testing.T) {
	requireLandlock(t)
	tr := newTree(t)
	cmd := cordonCmd(t, tr.args("landlock")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var mu sync.Mutex
	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, r.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
		},
	})
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)

	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
	}
	for _, n := range []string{workspace.ToolReadFile, workspace.ToolWriteFile, workspace.ToolShell, workspace.ToolSpawnProcess, workspace.ToolKillProcess} {
		assert.True(t, names[n], "lists %s", n)
	}

	res, text := callText(t, cs, workspace.ToolWriteFile, map[string]any{"path": "out.txt", "content": "via stdio\n"})
	require.False(t, res.IsError, text)
	b, err := os.ReadFile(filepath.Join(tr.root, "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "via stdio\n", string(b))

	script := "#!/bin/sh\ncat notes.md\ncat " + filepath.Join(tr.home, ".ssh", "id_rsa") + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(tr.root, "probe.sh"), []byte(script), 0o755))
	res, text = callText(t, cs, workspace.ToolShell, map[string]any{"command": "./probe.sh"})
	require.False(t, res.IsError, text)
	assert.Len(t, asked, 1, "the ask went to the client")
	assert.Contains(t, text, "hello", "allowed twin: the approved command reads the root")
	assert.NotContains(t, text, secret, "the sandbox keeps the home's secret")

	res, text = callText(t, cs, workspace.ToolSpawnProcess, map[string]any{"command": "sleep 1000"})
	require.False(t, res.IsError, text)
	var pi workspace.ProcessInfo
	b, _ = json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(b, &pi))
	require.NotZero(t, pi.Pid)
	require.NoError(t, syscall.Kill(pi.Pid, 0), "control: the background process runs")

	require.NoError(t, cs.Close(), "EOF on stdin ends cordon mcp")
	assert.True(t, gone(pi.Pid), "the session's processes are killed when the client leaves")
	assert.NotContains(t, stderr.String(), "panic")
}

// rawServer is cordon mcp on pipes, for bytes no SDK client would send.
type rawServer struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	outPipe io.Closer // our end of cordon's stdout
}

func startRaw(t *testing.T, args ...string) *rawServer {
	t.Helper()
	cmd := cordonCmd(t, args...)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return &rawServer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), outPipe: out}
}

func (r *rawServer) send(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(r.in, line+"\n")
	require.NoError(t, err)
}

// recv reads the next message.
func (r *rawServer) recv(t *testing.T) map[string]any {
	t.Helper()
	line, err := r.out.ReadBytes('\n')
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(line, &m), "%.300s", line)
	return m
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestStdioBadInput(t *testing.T) {
	requireLandlock(t)
	tr := newTree(t)
	r := startRaw(t, tr.args("landlock")...)

	isParseError := func(m map[string]any) {
		t.Helper()
		id, hasID := m["id"]
		assert.True(t, hasID && id == nil, "a parse error has id null: %v", m)
		e, _ := m["error"].(map[string]any)
		require.NotNil(t, e, "%v", m)
		assert.EqualValues(t, -32700, e["code"])
	}
	r.send(t, `{not json`)
	isParseError(r.recv(t))
	r.send(t, initialize)
	m := r.recv(t)
	assert.EqualValues(t, 1, m["id"], "the server keeps serving after a malformed line")
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// Batches (the SDK ends the session at one it cannot take): an
	// invalid-request error, and the session goes on.
	for _, batch := range []string{`[1, 2]`, `[]`, `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`} {
		r.send(t, batch)
		m := r.recv(t)
		e, _ := m["error"].(map[string]any)
		require.NotNil(t, e, "%s: %v", batch, m)
		assert.EqualValues(t, -32600, e["code"], batch)
	}
	r.send(t, `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"read_file","arguments":"oops"}}`)
	m = r.recv(t)
	res, _ := m["result"].(map[string]any)
	require.NotNil(t, res, "%v", m)
	assert.Equal(t, true, res["isError"], "wrong argument types are an error result")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`)
	m = r.recv(t)
	assert.NotNil(t, m["error"], "an unknown method is a JSON-RPC error")

	// a line over the limit is refused whole, without buffering it all
	huge := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"` + strings.Repeat("a", 17<<20) + `"}}}`
	go io.WriteString(r.in, huge+"\n")
	isParseError(r.recv(t))

	r.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes.md"}}}`)
	m = r.recv(t)
	assert.EqualValues(t, 5, m["id"])
	res, _ = m["result"].(map[string]any)
	require.NotNil(t, res, "%v", m)
	assert.Nil(t, res["isError"])

	require.NoError(t, r.in.Close())
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "EOF is a clean exit")
	case <-time.After(30 * time.Second):
		t.Fatal("cordon mcp did not exit at EOF")
	}
}

// spawnVia starts cordon mcp on pipes (--on-ask allow), spawns a
// sleeper through a Go SDK client and returns both.
func spawnVia(t *testing.T) (*exec.Cmd, *mcp.ClientSession, int, io.Closer) {
	t.Helper()
	tr := newTree(t)
	cmd := cordonCmd(t, tr.args("landlock", "--on-ask", "allow")...)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	c := mcp.NewClient(&mcp.Implementation{Name: "signal-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: out, Writer: in}, nil)
	require.NoError(t, err)
	res, text := callText(t, cs, workspace.ToolSpawnProcess, map[string]any{"command": "sleep 1000"})
	require.False(t, res.IsError, text)
	var pi workspace.ProcessInfo
	b, _ := json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(b, &pi))
	require.NoError(t, syscall.Kill(pi.Pid, 0), "control: the process runs")
	return cmd, cs, pi.Pid, out
}

// waitExit waits for cmd and returns its wait status.
func waitExit(t *testing.T, cmd *exec.Cmd) syscall.WaitStatus {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("cordon mcp did not exit")
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus)
}

func TestSignalsReap(t *testing.T) {
	requireLandlock(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, cs, pid, _ := spawnVia(t)
			defer cs.Close()
			require.NoError(t, cmd.Process.Signal(sig))
			ws := waitExit(t, cmd)
			assert.False(t, ws.Signaled(), "a clean shutdown, not death by %v", ws.Signal())
			assert.Equal(t, 0, ws.ExitStatus())
			assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "cordon reaped the session's processes before exiting")
		})
	}
}

// TestSIGKILLReaps: cordon killed outright (no chance to clean up) leaves
// no process of its sessions running: landlock's keeper kills the command
// cgroups of the dead process. (The landlock package's
// TestKeeperAfterSIGKILL has the twin without a keeper.)
func TestSIGKILLReaps(t *testing.T) {
	requireLandlock(t)
	x, err := landlock.New(landlock.Config{})
	require.NoError(t, err)
	keeper := x.Describe(t.Context()).Info["keeper"]
	x.Close()
	if !strings.HasPrefix(keeper, "a keeper") {
		t.Skip("landlock has no keeper here (it needs command cgroups: root or a delegated cgroup v2 subtree): " + keeper)
	}
	cmd, cs, pid, _ := spawnVia(t)
	defer cs.Close()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	ws := waitExit(t, cmd)
	require.True(t, ws.Signaled(), "control: cordon died of SIGKILL")
	assert.Eventually(t, func() bool { return gone(pid) }, 10*time.Second, 20*time.Millisecond, "the session's process %d outlived cordon", pid)
}

// TestKernelProtect: with --kernel-protect a background landlock command
// cannot change an existing protected file (.git/config) while it runs,
// checked from outside during the command; the twin without the flag
// changes it for the command's lifetime (the guard restores it only
// after). A backend that cannot deny protected paths is refused.
func TestKernelProtect(t *testing.T) {
	requireLandlock(t)
	for _, kp := range []bool{true, false} {
		t.Run(fmt.Sprint("kernel-protect=", kp), func(t *testing.T) {
			tr := newTree(t)
			require.NoError(t, exec.Command("git", "init", "-q", tr.root).Run())
			// Under --kernel-protect nothing can be created directly in
			// the root: the marker goes in a directory of its own.
			require.NoError(t, os.Mkdir(filepath.Join(tr.root, "out"), 0o755))
			cfg := filepath.Join(tr.root, ".git", "config")
			before, err := os.ReadFile(cfg)
			require.NoError(t, err)
			extra := []string{"--on-ask", "allow"}
			if kp {
				extra = append(extra, "--kernel-protect")
			}
			cmd := cordonCmd(t, tr.args("landlock", extra...)...)
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			c := mcp.NewClient(&mcp.Implementation{Name: "protect-test", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: out, Writer: in}, nil)
			require.NoError(t, err)
			defer cs.Close()
			res, text := callText(t, cs, workspace.ToolSpawnProcess, map[string]any{
				"command": `f=.git; f=$f/config; if echo '[core] planted' >> "$f"; then echo wrote; else echo refused; fi > out/marker; sleep 1000`})
			require.False(t, res.IsError, text)
			marker := filepath.Join(tr.root, "out", "marker")
			require.Eventually(t, func() bool {
				b, _ := os.ReadFile(marker)
				return strings.HasSuffix(string(b), "\n")
			}, 30*time.Second, 20*time.Millisecond, "the command ran")
			got, err := os.ReadFile(cfg)
			require.NoError(t, err)
			m, _ := os.ReadFile(marker)
			if kp {
				assert.Equal(t, "refused\n", string(m))
				assert.Equal(t, string(before), string(got), "the protected file is unchanged while the command runs")
				return
			}
			assert.Equal(t, "wrote\n", string(m), "without --kernel-protect the write succeeds (the fixture works)")
			assert.Contains(t, string(got), "planted", "and the file is changed until the command ends")
		})
	}
	t.Run("refused", func(t *testing.T) {
		cmd := cordonCmd(t, newTree(t).args("local", "--kernel-protect")...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Stdin = strings.NewReader("")
		err := cmd.Run()
		require.Error(t, err)
		assert.Contains(t, stderr.String(), "--kernel-protect: the local backend cannot deny protected paths while commands run")
	})
}

// spawnSleep initializes the session on r and starts `sleep 1000` in the
// background; it returns the process's pid.
func spawnSleep(t *testing.T, r *rawServer) float64 {
	t.Helper()
	r.send(t, initialize)
	r.recv(t)
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spawn_process","arguments":{"command":"sleep 1000"}}}`)
	m := r.recv(t)
	res, _ := m["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	pid, _ := sc["pid"].(float64)
	require.NotZero(t, pid, "%v", m)
	return pid
}

// TestBrokenPipeReaps: a client that stops reading and closes its end of
// cordon's stdout (stdin still open) makes cordon's next write fail; it
// must then reap its processes and exit, not die of SIGPIPE with them
// left running.
func TestBrokenPipeReaps(t *testing.T) {
	requireLandlock(t)
	r := startRaw(t, newTree(t).args("landlock", "--on-ask", "allow")...)
	pid := spawnSleep(t, r)
	require.NoError(t, syscall.Kill(int(pid), 0), "control: the process runs")

	require.NoError(t, r.outPipe.Close(), "the client stops reading")
	for i := range 5 {
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, 10+i))
	}
	ws := waitExit(t, r.cmd)
	assert.False(t, ws.Signaled(), "cordon died of %v", ws.Signal())
	assert.True(t, gone(int(pid)), "cordon reaped the session's processes")
}

func TestAutoBackend(t *testing.T) {
	requireLandlock(t)
	tr := newTree(t)
	cmd := cordonCmd(t, tr.args("auto")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdin = strings.NewReader("")
	require.NoError(t, cmd.Run())
	assert.Regexp(t, `cordon: --backend auto chose (bwrap|landlock)\n`, stderr.String(), "auto names the sandbox it chose")
}

// projectWith returns a root whose project policy layer is yaml.
func projectWith(t *testing.T, yaml string) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".cordon"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".cordon", "policy.yaml"), []byte(yaml), 0o644))
	return root
}

func TestUsageErrors(t *testing.T) {
	tr := newTree(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{tr.args("local", "--on-ask", "maybe"), `invalid ask fallback "maybe"`},
		{tr.args("nosuch"), `unknown backend "nosuch"`},
		{tr.args("local", "--http", "0.0.0.0:0"), "not a loopback address"},
		{tr.args("local", "--http", "127.0.0.1:0"), "needs a bearer token"},
		{tr.args("local", "--http", "0.0.0.0:0", "--no-token"), "not a loopback address"},
		{tr.args("local", "--http", "127.0.0.1:0", "--token-file", emptyFile(t)), "is empty"},
		{tr.args("local", "--http", "127.0.0.1:0", "--token-file", shortFile(t)), "use at least 16"},
		{append(tr.args("local", "--http", "127.0.0.1:0", "--no-token"), "--policy", policyFile(t, "mode: trusted\n")), "network: full"},
		{append(tr.args("local", "--http", "127.0.0.1:0", "--no-token"), "--policy", policyFile(t, "mode: coding\nnetwork:\n  allow: [\"127.0.0.1:8080\"]\n")), "drop loopback"},
		{tr.args("local", "--http", "nonsense"), `--http "nonsense"`},
		{append(tr.args("local"), "--policy", filepath.Join(tr.root, "missing.yaml")), "missing.yaml"},
		{[]string{"mcp", "--root", filepath.Join(tr.root, "notes.md"), "--backend", "local"}, "notes.md"},
		{[]string{"mcp", "--root", projectWith(t, "mode: trusted\n"), "--backend", "local"}, "project policy"},
		{[]string{"mcp", "--root", projectWith(t, "mode: trusted\n"), "--backend", "local", "--policy", policyFile(t, "mode: coding\n")}, ".cordon/policy.yaml: mode: a project policy"},
	} {
		cmd := cordonCmd(t, tc.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Stdin = strings.NewReader("")
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", tc.args)
		assert.Equal(t, exitSetup, ee.ExitCode(), "%v", tc.args)
		assert.Contains(t, stderr.String(), tc.want, "%v", tc.args)
	}
}

func policyFile(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func emptyFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(p, []byte("\n"), 0o600))
	return p
}

func shortFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "short")
	require.NoError(t, os.WriteFile(p, []byte("abc"), 0o600))
	return p
}

func TestVersionAndHelp(t *testing.T) {
	out, err := cordonCmd(t, "version").Output()
	require.NoError(t, err)
	assert.Regexp(t, `^cordon \S+ \(github.com/cordon-sandbox/cordon\)`, string(out))
	out, err = cordonCmd(t, "version", "--json").Output()
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(out, &v))
	assert.Contains(t, v, "backends")
	out, err = cordonCmd(t, "help").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "mcp")
	out, err = cordonCmd(t, "help", "mcp").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "--on-ask")
}

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// startHTTP starts cordon mcp --http on a free loopback port and returns
// its URL.
func startHTTP(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := cordonCmd(t, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	re := regexp.MustCompile(`serving MCP on (http://\S+)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1], cmd
		}
	}
	t.Fatal("cordon mcp --http did not say where it serves")
	return "", nil
}

func TestHTTPToken(t *testing.T) {
	requireLandlock(t)
	tr := newTree(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	token := "0123456789abcdef0123456789abcdef"
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	url, _ := startHTTP(t, tr.args("landlock", "--http", "127.0.0.1:0", "--token-file", tokenFile)...)

	body := strings.NewReader(initialize)
	req, err := http.NewRequest("POST", url, body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no token: refused")

	wrong := &http.Client{Transport: bearer{"wrong-token-wrong-token", http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
	_, err = c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: wrong}, nil)
	assert.Error(t, err, "a wrong token is refused")

	good := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: good}, nil)
	require.NoError(t, err, "allowed twin: the right token connects")
	defer cs.Close()
	res, text := callText(t, cs, workspace.ToolReadFile, map[string]any{"path": "notes.md"})
	require.False(t, res.IsError, text)
	assert.Contains(t, text, "hello")
}

// TestEOFDuringCall: the client leaves (EOF) while a foreground command is
// still running: cordon must not wait for that call; the session is
// closed at once and every process, foreground and background, is gone.
func TestEOFDuringCall(t *testing.T) {
	requireLandlock(t)
	tr := newTree(t)
	r := startRaw(t, tr.args("landlock", "--on-ask", "allow")...)
	bg := spawnSleep(t, r)
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shell","arguments":{"command":"echo $$ > fg.pid; exec sleep 1000"}}}`)
	var fg int
	for range 200 {
		if b, err := os.ReadFile(filepath.Join(tr.root, "fg.pid")); err == nil && len(b) > 1 {
			fmt.Sscan(string(b), &fg)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NotZero(t, fg, "control: the foreground command started")
	require.NoError(t, syscall.Kill(fg, 0))

	require.NoError(t, r.in.Close())
	start := time.Now()
	ws := waitExit(t, r.cmd)
	assert.Less(t, time.Since(start), 20*time.Second, "cordon did not wait for the call in flight")
	assert.False(t, ws.Signaled())
	assert.True(t, gone(fg), "the foreground command is gone")
	assert.True(t, gone(int(bg)), "the background process is gone")
}
