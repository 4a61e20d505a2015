// Package mcpserver serves a cordon workspace over the Model Context
// Protocol, so that any MCP client (Claude Code, Codex, Gemini CLI,
// Cursor, VS Code, agent frameworks in any language) gets the
// workspace's tools behind its policy gate and its executor's OS sandbox.
// cmd/cordon's `cordon mcp` is its command line.
//
// It is built on the official Go SDK, github.com/modelcontextprotocol/go-sdk
// (the JSON-RPC framing, the stdio and streamable HTTP transports, the
// session handshake and elicitation are the SDK's; this package writes no
// protocol code).
//
// # Tools
//
// The tools listed are exactly the ones a session of the workspace offers
// (workspace.Session.Tools): their names, descriptions and JSON Schemas,
// so a policy that offers no write or no shell lists none. Calls go
// through workspace.Session.Dispatch: the same strict argument decoding,
// policy gate, limits and serialisation of mutating tools as the library.
// Tools that only read carry readOnlyHint. A result carries the typed
// result as structured content and its JSON as text; a failed call is a
// result with isError and the reason as text (a refusal names the rule and
// tells the model to ask the user instead of retrying); a shell result
// whose command had protected files repaired or connections refused ends
// with a block naming each. Only an unknown tool (and a server shutting
// down) is a protocol error.
//
// # Sessions and lifecycle
//
// Every MCP connection (a stdio Run, each streamable HTTP session) has its
// own workspace.Session, opened when the client has initialised. When the
// connection ends (EOF on stdin, the HTTP session deleted or idle past
// its timeout, Run's context cancelled, Server.Close) the session is
// closed: every background process it started is killed and reaped before
// Run or Close returns.
//
// # Asks
//
// The workspace must be built with workspace.WithAsker(Approve). An ask
// (an operation the policy marks ask) is put to the user of the client
// that made the call, as a form elicitation naming what is asked, why, and
// for a command which paths approving adds; the answers are allow_once,
// allow_session (a session grant of the connection's workspace session,
// covering what workspace.ApprovalRequest.Covers says), allow_always (the
// same, and the covering allow rule written to the user policy file, when
// the workspace has an approval store) and deny; a scope the request does
// not offer is not in the form. A client that declared no elicitation gets
// Config.OnAsk: AskDeny (the default) refuses with a message for the
// model to relay to the user, AskAllow approves. Network asks (the
// allow-list proxy's network.unknown: ask) reach the client of the
// command that connects in the same way.
//
// Protocol versions from 2026-07-28 on are not offered (ProtocolVersions):
// they forbid requests from server to client during a tool call in favour
// of multi-round-trip results, and an ask interrupts a call in flight.
// Clients negotiate 2025-11-25 or older, which every client in use speaks.
//
// # Background processes
//
// A background process that exits on its own is reported twice: at once
// as a notifications/message log record (level notice, logger "cordon",
// data {"event":"process_exited", ...}) to clients that set a logging
// level, and as a "[cordon] background process ..." status line appended
// to the connection's next tool result, so the model learns of it without
// polling.
package mcpserver
