//go:build linux

package mcpserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/mcpserver"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// BenchmarkRoundTrip measures what MCP adds to a tool call: read_file of
// a small file and shell running true on landlock, each called directly
// on a workspace.Session and through a Go SDK client over the server's
// stdio transport on real pipes, interleaved. Reported: each op's median
// and p95, and the MCP/direct median ratios. The README gives the figures
// (MCP adds the difference of the medians).
func BenchmarkRoundTrip(b *testing.B) {
	x, err := landlock.New(landlock.Config{})
	if err != nil {
		testenv.SkipUnavailable(b, testenv.Landlock, err)
	}
	defer x.Close()
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "small.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := workspace.Local(root, workspace.WithMode(policy.Coding), workspace.WithExecutor(x),
		workspace.WithCommandRules(policy.CommandRule{Pattern: "true", Action: policy.Allow}),
		workspace.WithAsker(mcpserver.Approve), workspace.WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	srv, err := mcpserver.New(b.Context(), ws, mcpserver.Config{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	sr, cw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cr, sw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, &mcpserver.StdioTransport{In: sr, Out: sw}) }()
	defer func() {
		cancel()
		sr.Close()
		cw.Close()
		<-done
		cr.Close()
		sw.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	s, err := ws.Open(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	viaMCP := func(name string, args map[string]any) func() error {
		return func() error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				return err
			}
			if res.IsError {
				return errors.New(name + " failed over MCP")
			}
			return nil
		}
	}
	testenv.Interleave(b,
		testenv.Op{Name: "read-direct", Run: func() error { _, err := s.ReadText(ctx, "small.txt", 0, 0); return err }},
		testenv.Op{Name: "read-mcp", Base: "read-direct", Run: viaMCP(workspace.ToolReadFile, map[string]any{"path": "small.txt"})},
		testenv.Op{Name: "true-direct", Run: func() error {
			r, err := s.Run(ctx, "true", "", 0)
			if err == nil && r.ExitCode != 0 {
				err = errors.New("true failed")
			}
			return err
		}},
		testenv.Op{Name: "true-mcp", Base: "true-direct", Run: viaMCP(workspace.ToolShell, map[string]any{"command": "true"})},
	)
}
