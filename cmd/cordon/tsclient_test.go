//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/workspace"
)

// tsPolicy denies .env files and allows the commands the client's
// scenario runs without asking; ./probe.sh and touch ask.
const tsPolicy = `mode: coding
denied_paths: [".env*"]
command_rules:
  - {pattern: sleep, action: allow}
  - {pattern: echo, action: allow}
  - {pattern: exit, action: allow}
`

type tsStep struct {
	IsError    bool            `json:"isError"`
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured"`
}

type tsReport struct {
	Mode         string `json:"mode"`
	Error        string `json:"error"`
	Instructions string `json:"instructions"`
	Tools        []struct {
		Name     string
		ReadOnly bool
	} `json:"tools"`
	Steps         map[string]tsStep `json:"steps"`
	Elicitations  []string          `json:"elicitations"`
	Notifications []json.RawMessage `json:"notifications"`
	LeftPid       int               `json:"leftPid"`
	KilledPid     int               `json:"killedPid"`
}

// tsTree is a tree for the TypeScript scenario: the policy file, a
// denied file (written by the host after the probe script, in app/ so
// that the root stays creatable under Landlock) and the probe script.
func tsTree(t *testing.T) (tree, string) {
	tr := newTree(t)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(pol, []byte(tsPolicy), 0o644))
	script := "#!/bin/sh\ncat notes.md\ncat " + filepath.Join(tr.home, ".ssh", "id_rsa") + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(tr.root, "probe.sh"), []byte(script), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(tr.root, "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tr.root, "app", ".env"), []byte("TOKEN="+secret+"\n"), 0o600))
	return tr, pol
}

// runNode runs client.mjs with env and returns its report.
func runNode(t *testing.T, env ...string) *tsReport {
	t.Helper()
	dir := os.Getenv("CORDON_MCP_TS_DIR")
	if dir == "" {
		testenv.Skip(t, testenv.Landlock, "the TypeScript MCP SDK is not installed (make test installs it with npm into build/mcp-ts and sets CORDON_MCP_TS_DIR)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, testenv.Landlock, "node is not installed")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "tsclient", "client.mjs"))
	require.NoError(t, err)
	// Node resolves the SDK from the script's directory upwards, so the
	// script runs from a copy beside the installed node_modules.
	run := filepath.Join(dir, "client.mjs")
	b, err := os.ReadFile(script)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(run, b, 0o644))
	cmd := exec.Command(node, run)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("node client hung; stderr:\n%.2000s", stderr.String())
	}
	var rep tsReport
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "stdout %.500s\nstderr %.2000s", stdout.String(), stderr.String())
	require.NoError(t, err, "node failed: %s\nstderr %.2000s", rep.Error, stderr.String())
	require.Empty(t, rep.Error)
	return &rep
}

// checkReport checks the scenario's results and its effects on disk.
func checkReport(t *testing.T, tr tree, rep *tsReport) {
	t.Helper()
	names := map[string]bool{}
	for _, tool := range rep.Tools {
		names[tool.Name] = true
		if tool.Name == workspace.ToolReadFile || tool.Name == workspace.ToolGrepFiles {
			assert.True(t, tool.ReadOnly, tool.Name)
		}
		if tool.Name == workspace.ToolShell || tool.Name == workspace.ToolWriteFile {
			assert.False(t, tool.ReadOnly, tool.Name)
		}
	}
	for _, n := range []string{"read_file", "list_files", "grep_files", "write_file", "edit_file", "shell", "spawn_process", "read_process_output", "kill_process", "list_processes"} {
		assert.True(t, names[n], "lists %s", n)
	}
	assert.Contains(t, rep.Instructions, "## Workspace")
	s := rep.Steps
	for _, ok := range []string{"read", "list", "grep", "write", "edit", "askAllowed", "spawn", "readOutput", "listProcesses", "kill", "left", "exits", "afterExit"} {
		assert.False(t, s[ok].IsError, "%s: %.300s", ok, s[ok].Text)
	}
	assert.Contains(t, s["read"].Text, "hello")
	assert.Contains(t, s["grep"].Text, "notes.md")
	b, err := os.ReadFile(filepath.Join(tr.root, "out-ts.txt"))
	require.NoError(t, err)
	assert.Equal(t, "from typescript\n", string(b), "write_file reached the disk")
	b, err = os.ReadFile(filepath.Join(tr.root, "notes.md"))
	require.NoError(t, err)
	assert.Equal(t, "hello ts\n", string(b), "edit_file reached the disk")

	assert.True(t, s["deniedRead"].IsError, "a denied read is an error")
	assert.Contains(t, s["deniedRead"].Text, "[cordon] refused: read")
	assert.NotContains(t, s["deniedRead"].Text, secret)

	require.Len(t, rep.Elicitations, 2, "two asks reached the client: %q", rep.Elicitations)
	assert.Contains(t, rep.Elicitations[0], "./probe.sh")
	assert.Contains(t, s["askAllowed"].Text, "hello", "allowed once: the script ran and read the root")
	assert.NotContains(t, s["askAllowed"].Text, secret, "the sandbox keeps the home's secret")
	assert.True(t, s["askDenied"].IsError, "denied through elicitation")
	_, err = os.Stat(filepath.Join(tr.root, "denied.txt"))
	assert.True(t, os.IsNotExist(err), "the denied command did not run")

	assert.Contains(t, s["readOutput"].Text, `"status":"running"`)
	assert.Contains(t, s["kill"].Text, `"status":"killed"`)
	require.NotZero(t, rep.KilledPid)
	assert.ErrorIs(t, syscall.Kill(rep.KilledPid, 0), syscall.ESRCH, "kill_process killed it")
	require.NotEmpty(t, rep.Notifications, "the exit was notified")
	assert.Contains(t, string(rep.Notifications[0]), "process_exited")
	assert.Contains(t, s["afterExit"].Text, "exit code 3", "and reported on the next result")

	assert.True(t, s["wrongType"].IsError)
	assert.Contains(t, s["wrongType"].Text, "path")
	assert.True(t, s["unknownTool"].IsError)
	assert.Contains(t, s["unknownTool"].Text, "no_such_tool")

	require.NotZero(t, rep.LeftPid)
	assert.True(t, gone(rep.LeftPid), "the process left running died with the session")
}

func TestTypeScriptClient(t *testing.T) {
	requireLandlock(t)
	self, err := os.Executable()
	require.NoError(t, err)

	t.Run("stdio", func(t *testing.T) {
		tr, pol := tsTree(t)
		args, _ := json.Marshal(append(tr.args("landlock"), "--policy", pol))
		rep := runNode(t, "MODE=stdio", "CORDON_BIN="+self, "CORDON_ARGS="+string(args), `CORDON_ENV={"`+asCordon+`":"1"}`)
		checkReport(t, tr, rep)
	})
	t.Run("http", func(t *testing.T) {
		tr, pol := tsTree(t)
		token := "ts-client-token-0123456789abcdef"
		tokenFile := filepath.Join(t.TempDir(), "token")
		require.NoError(t, os.WriteFile(tokenFile, []byte(token), 0o600))
		url, _ := startHTTP(t, append(tr.args("landlock"), "--policy", pol, "--http", "127.0.0.1:0", "--token-file", tokenFile)...)
		rep := runNode(t, "MODE=http", "CORDON_URL="+url, "CORDON_TOKEN="+token)
		checkReport(t, tr, rep)
	})
}
