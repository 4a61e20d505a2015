package outbuf

import (
	"strconv"
	"sync"
)

// HeadTail is an io.Writer that keeps at most Limit bytes of a stream: the
// first ceil(Limit/2) bytes and the last floor(Limit/2). Bytes in between
// are counted and dropped. A HeadTail is safe for concurrent use; use
// NewHeadTail to make one.
type HeadTail struct {
	mu      sync.Mutex
	limit   int
	headCap int
	head    []byte
	tail    ring
}

// NewHeadTail returns a HeadTail keeping limit bytes. limit <= 0 keeps
// nothing: every byte is dropped and counted.
func NewHeadTail(limit int) *HeadTail {
	limit = max(limit, 0)
	headCap := (limit + 1) / 2
	return &HeadTail{limit: limit, headCap: headCap, tail: ring{size: limit - headCap}}
}

// Write keeps what fits in the head, passes the rest through the tail ring,
// and never fails.
func (w *HeadTail) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	if room := w.headCap - len(w.head); room > 0 {
		if w.head == nil {
			w.head = make([]byte, 0, min(w.headCap, max(len(p), 512)))
		}
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		w.tail.write(p)
	}
	w.mu.Unlock()
	return n, nil
}

// Total returns the number of bytes written.
func (w *HeadTail) Total() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int64(len(w.head)) + w.tail.w
}

// Dropped returns the number of bytes written but not kept.
func (w *HeadTail) Dropped() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tail.w - w.tail.held()
}

// Truncated reports whether any byte was dropped.
func (w *HeadTail) Truncated() bool {
	return w.Dropped() > 0
}

// Limit returns the number of bytes kept.
func (w *HeadTail) Limit() int {
	return w.limit
}

// Marker returns the omission marker HeadTail inserts for n dropped bytes.
func Marker(n int64) string {
	return "\n[... " + strconv.FormatInt(n, 10) + " bytes omitted ...]\n"
}

// Bytes returns a copy of what was kept: the stream exactly when nothing was
// dropped, otherwise head, Marker(dropped), tail.
func (w *HeadTail) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	dropped := w.tail.w - w.tail.held()
	size := len(w.head) + int(w.tail.held())
	if dropped > 0 {
		size += len(Marker(dropped))
	}
	out := make([]byte, 0, size)
	out = append(out, w.head...)
	if dropped > 0 {
		out = append(out, Marker(dropped)...)
	}
	out, _ = w.tail.appendFrom(out, 0)
	return out
}
