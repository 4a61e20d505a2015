package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordon-sandbox/cordon/workspace"
)

// TestNoSessionAfterClose: a call that reaches the server after its
// connection was closed gets an error, never a new workspace session
// (whose processes nothing would reap).
func TestNoSessionAfterClose(t *testing.T) {
	ws, err := workspace.Local(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), ws, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	c, err := s.client(ss)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.client(ss); err != nil || again != c {
		t.Fatalf("control: a second call on an open connection: %v, %v; want the same client", again, err)
	}
	s.closeClient(ss)
	if late, err := s.client(ss); err == nil {
		t.Fatalf("a call after the connection closed got a client %p; want an error", late)
	}
	s.mu.Lock()
	n := len(s.sessions)
	s.mu.Unlock()
	if n != 1 {
		t.Errorf("sessions = %d, want the one tombstone", n)
	}
}
