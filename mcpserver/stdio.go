package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineLength is the longest message a StdioTransport accepts (the SDK's
// default); a longer line is refused with a parse error and skipped.
const MaxLineLength = mcp.DefaultMaxLineLength

// StdioTransport is the SDK's newline-delimited stdio transport made
// robust against bad input: where the SDK ends the session at the first
// line that is not JSON (or at a batch it cannot take), a StdioTransport
// answers such a line (and a line longer than MaxLineLength) with a
// JSON-RPC parse error (-32700, id null), and a batch (a JSON array;
// no current client sends one, and 2025-06-18 removed them) with an
// invalid-request error (-32600, id null), and goes on serving.
// Well-formed single messages reach the SDK unchanged.
type StdioTransport struct {
	// In and Out are the streams; nil means os.Stdin and os.Stdout.
	In  io.Reader
	Out io.Writer

	eof chan struct{} // closed at the end of In (Server.Run watches it)
}

// Connect starts filtering In and returns the SDK connection over it.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	in, out := t.In, t.Out
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	t.eof = make(chan struct{})
	go func() {
		filterLines(in, pw, w)
		close(t.eof)
	}()
	inner := &mcp.IOTransport{Reader: pr, Writer: nopCloser{w}}
	return inner.Connect(ctx)
}

// filterLines copies the well-formed lines of in to good and answers the
// others on out. It closes good at the end of in.
func filterLines(in io.Reader, good *io.PipeWriter, out io.Writer) {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case tooLong:
		case len(line)+len(chunk) > MaxLineLength+1:
			tooLong, line = true, line[:0]
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			parseError(out, fmt.Sprintf("message longer than %d bytes", MaxLineLength))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if msg[0] == '[' {
				replyError(out, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported")
			} else if reason := malformed(msg); reason != "" {
				parseError(out, reason)
			} else if _, werr := good.Write(append(msg, '\n')); werr != nil {
				return
			}
		}
		line, tooLong = line[:0], false
		if err != nil {
			good.CloseWithError(nil)
			return
		}
	}
}

// malformed says why msg is not a JSON-RPC message, or "".
func malformed(msg []byte) string {
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return err.Error()
	}
	return ""
}

// parseError writes a JSON-RPC parse error response.
func parseError(out io.Writer, reason string) {
	replyError(out, jsonrpc.CodeParseError, "parse error: "+reason)
}

// replyError writes a JSON-RPC error response with id null, as JSON-RPC
// 2.0 requires when the request's id cannot be known.
func replyError(out io.Writer, code int64, message string) {
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      *int      `json:"id"`
		Error   wireError `json:"error"`
	}{"2.0", nil, wireError{code, clip(message, 200)}})
	if err != nil {
		return
	}
	_, _ = out.Write(append(b, '\n'))
}

// lockedWriter serialises writes, so a parse error never lands inside a
// message the SDK writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
