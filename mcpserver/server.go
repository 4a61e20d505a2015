package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordon-sandbox/cordon/workspace"
)

// ProtocolVersions are the MCP protocol versions the server speaks, newest
// first. Versions from 2026-07-28 on are left out: they forbid a request
// from the server to the client while a tool call is in flight (asks are
// put to the user that way) in favour of multi-round-trip results.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// AskFallback decides an ask when the client cannot put it to the user
// (it did not declare the elicitation capability).
type AskFallback int

const (
	// AskDeny refuses the operation with a message naming what needed
	// approval, for the model to relay to the user. It is the default.
	AskDeny AskFallback = iota
	// AskAllow approves the operation (once; nothing is remembered).
	AskAllow
)

// String returns "deny" or "allow".
func (f AskFallback) String() string {
	if f == AskAllow {
		return "allow"
	}
	return "deny"
}

// ParseAskFallback parses "deny" or "allow".
func ParseAskFallback(s string) (AskFallback, error) {
	switch s {
	case "deny", "":
		return AskDeny, nil
	case "allow":
		return AskAllow, nil
	}
	return AskDeny, fmt.Errorf("invalid ask fallback %q (want deny or allow)", s)
}

// Config configures a Server.
type Config struct {
	// Name and Version identify the server to clients (default "cordon"
	// and "(devel)").
	Name, Version string
	// OnAsk decides asks a client without elicitation cannot answer.
	OnAsk AskFallback
	// Logger receives the server's records; nil is slog.Default.
	Logger *slog.Logger
	// MaxSessions caps the HTTP sessions open at once (each is a
	// workspace session); a client over the cap gets 400 Bad Request.
	// 0 means DefaultMaxSessions.
	MaxSessions int
}

// DefaultMaxSessions is Config.MaxSessions when 0.
const DefaultMaxSessions = 32

// Server is a workspace served over MCP. Each client connection (a stdio
// run, an HTTP session) gets its own workspace.Session, closed, with every
// process it started, when the connection ends.
type Server struct {
	ws    *workspace.Workspace
	cfg   Config
	log   *slog.Logger
	mcp   *mcp.Server
	tools []workspace.Tool

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*client
	closed   bool
	wg       sync.WaitGroup // session waiters
}

// New builds the server for ws. The tools listed are the ones a session
// of ws offers; the instructions are ws's "## Workspace" section. For asks
// to reach the client, ws must have been built with
// workspace.WithAsker(mcpserver.Approve).
func New(ctx context.Context, ws *workspace.Workspace, cfg Config) (*Server, error) {
	if ws == nil {
		return nil, errors.New("mcpserver: nil workspace")
	}
	if cfg.Name == "" {
		cfg.Name = "cordon"
	}
	if cfg.Version == "" {
		cfg.Version = "(devel)"
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	probe, err := ws.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: opening a session to list the tools: %w", err)
	}
	tools := probe.Tools()
	instructions := probe.Instructions()
	_ = probe.Close()

	s := &Server{ws: ws, cfg: cfg, log: log, tools: tools, sessions: map[*mcp.ServerSession]*client{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Title: "cordon sandboxed workspace", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions:              instructions,
		Logger:                    log,
		SupportedProtocolVersions: ProtocolVersions,
		Capabilities: &mcp.ServerCapabilities{
			Logging: &mcp.LoggingCapabilities{},
			Tools:   &mcp.ToolCapabilities{},
		},
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			// Open the workspace session now, so that a client that never
			// calls a tool still has its session closed when it leaves.
			if _, err := s.client(req.Session); err != nil {
				log.Warn("mcp session not opened", "err", err)
			}
		},
	})
	for _, t := range tools {
		s.mcp.AddTool(mcpTool(t), s.handler(t.Name))
	}
	return s, nil
}

// Tools returns the tools the server lists.
func (s *Server) Tools() []workspace.Tool { return s.tools }

// MCP returns the underlying SDK server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one client over t (for example a StdioTransport) until the
// client disconnects or ctx ends, then closes the client's session: its
// background processes are killed and reaped before Run returns. The
// session is closed first, then the connection (waiting at most
// closeWait for calls still in flight), so that a call stuck on the host
// can never keep the session's processes alive. With a StdioTransport,
// EOF on its input ends the session at once.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcpserver: connecting: %w", err)
	}
	var eof <-chan struct{}
	if st, ok := t.(*StdioTransport); ok {
		eof = st.eof
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
	case <-eof:
	}
	s.closeClient(ss)
	closeWithin(ss, closeWait)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// closeWait bounds how long closing a connection waits for calls in
// flight.
const closeWait = 5 * time.Second

// closeWithin closes ss, waiting at most d.
func closeWithin(ss *mcp.ServerSession, d time.Duration) {
	c := make(chan struct{})
	go func() {
		_ = ss.Close()
		close(c)
	}()
	select {
	case <-c:
	case <-time.After(d):
	}
}

// HTTPHandler serves the streamable HTTP transport: every MCP session is
// a client of its own, at most Config.MaxSessions at once; idle sessions
// end after opts.SessionTimeout (0: never). Requests whose Origin is
// another site are refused (http.CrossOriginProtection), as the MCP
// specification requires; the SDK refuses a loopback request whose Host
// is not loopback (DNS rebinding).
func (s *Server) HTTPHandler(opts *mcp.StreamableHTTPOptions) http.Handler {
	if opts == nil {
		opts = &mcp.StreamableHTTPOptions{}
	}
	if opts.Logger == nil {
		opts.Logger = s.log
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		n := 0
		for range s.mcp.Sessions() {
			n++
		}
		if n >= s.cfg.MaxSessions {
			s.log.Warn("mcp session refused: too many sessions", "max", s.cfg.MaxSessions)
			return nil
		}
		return s.mcp
	}, opts)
	return http.NewCrossOriginProtection().Handler(h)
}

// Close ends every client's session (killing and reaping their
// processes) and refuses new ones.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	var all []*mcp.ServerSession
	for ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		s.closeClient(ss)
		closeWithin(ss, closeWait)
	}
	waited := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-time.After(closeWait):
	}
	return nil
}

// client returns the state of the connection ss, opening its workspace
// session on first use.
func (s *Server) client(ss *mcp.ServerSession) (*client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.sessions[ss]; c != nil {
		if c.closed {
			// A call that arrived as the connection closed: never a new
			// workspace session for it.
			return nil, errors.New("the MCP session has ended")
		}
		return c, nil
	}
	if s.closed {
		return nil, errors.New("the server is shutting down")
	}
	ws, err := s.ws.Open(context.Background())
	if err != nil {
		return nil, err
	}
	c := &client{srv: s, ss: ws, mcp: ss}
	ws.NotifyProcessExit(c.exited)
	s.sessions[ss] = c
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = ss.Wait()
		s.closeClient(ss)
	}()
	s.log.Debug("mcp session opened")
	return c, nil
}

// closeClient closes the workspace session of ss and returns when it is
// closed (its processes reaped), whichever caller got there first. The
// closed client stays in the table as a tombstone for tombstoneTTL, so a
// call still in flight as the connection ended cannot open a new
// workspace session for it.
func (s *Server) closeClient(ss *mcp.ServerSession) {
	s.mu.Lock()
	c := s.sessions[ss]
	if c != nil && !c.closed {
		c.closed = true
		time.AfterFunc(tombstoneTTL, func() {
			s.mu.Lock()
			if s.sessions[ss] == c {
				delete(s.sessions, ss)
			}
			s.mu.Unlock()
		})
	}
	s.mu.Unlock()
	if c == nil {
		return
	}
	c.closeOnce.Do(func() {
		_ = c.ss.Close()
		s.log.Debug("mcp session closed")
	})
}

// tombstoneTTL is how long a closed connection's entry outlives it.
const tombstoneTTL = time.Minute

// client is one MCP connection: its workspace session, the approvals it
// remembers and the background process exits not yet reported.
type client struct {
	srv       *Server
	ss        *workspace.Session
	mcp       *mcp.ServerSession
	closeOnce sync.Once
	closed    bool // under srv.mu: the connection ended; see closeClient

	mu     sync.Mutex
	events []string // status lines for the next tool result
}

// exited reports a background process that exited on its own: a log
// notification now (clients that set a logging level show it) and a
// status line on the next tool result.
func (c *client) exited(pi workspace.ProcessInfo) {
	line := fmt.Sprintf("background process %s (%s) %s", pi.ID, clip(pi.Command, 80), pi.Status)
	if pi.ExitCode != nil {
		line += fmt.Sprintf(" with exit code %d", *pi.ExitCode)
	}
	line += "; read_process_output " + pi.ID + " returns its last output"
	c.mu.Lock()
	c.events = append(c.events, line)
	c.mu.Unlock()
	_ = c.mcp.Log(context.Background(), &mcp.LoggingMessageParams{
		Level:  "notice",
		Logger: "cordon",
		Data:   map[string]any{"event": "process_exited", "id": pi.ID, "command": pi.Command, "status": pi.Status, "exit_code": pi.ExitCode, "message": line},
	})
}

// takeEvents returns and clears the pending status lines.
func (c *client) takeEvents() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := c.events
	c.events = nil
	return ev
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
