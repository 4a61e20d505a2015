package outbuf

import "sync"

// ring is a fixed-size circular byte buffer addressed by absolute stream
// offsets: after w bytes were written it holds bytes [w-len, w).
type ring struct {
	buf  []byte // allocated at the first write, len == size
	size int
	w    int64 // total bytes ever written
}

func (r *ring) write(p []byte) {
	if r.size <= 0 || len(p) == 0 {
		r.w += int64(len(p))
		return
	}
	if r.buf == nil {
		r.buf = make([]byte, r.size)
	}
	r.w += int64(len(p))
	if len(p) >= r.size {
		// Only the last size bytes survive; lay them out so that the
		// stream offset maps to the index with the usual modulus.
		p = p[len(p)-r.size:]
	}
	start := int((r.w - int64(len(p))) % int64(r.size))
	n := copy(r.buf[start:], p)
	copy(r.buf, p[n:])
}

// held is the number of bytes the ring holds.
func (r *ring) held() int64 {
	return min(r.w, int64(r.size))
}

// appendFrom appends the held bytes from absolute offset off (clamped to
// what is still held) to dst, and reports whether bytes at or after off were
// already overwritten.
func (r *ring) appendFrom(dst []byte, off int64) ([]byte, bool) {
	first := r.w - r.held()
	dropped := off < first
	if dropped {
		off = first
	}
	if off >= r.w {
		return dst, dropped
	}
	start := int(off % int64(r.size))
	end := int(r.w % int64(r.size))
	if start < end {
		return append(dst, r.buf[start:end]...), dropped
	}
	dst = append(dst, r.buf[start:]...)
	return append(dst, r.buf[:end]...), dropped
}

// Ring keeps the newest Size bytes written to it. ReadNew returns the bytes
// written since the previous ReadNew. A Ring is safe for concurrent use; the
// zero value keeps nothing (use NewRing).
type Ring struct {
	mu   sync.Mutex
	r    ring
	read int64 // absolute offset of the next unread byte
}

// NewRing returns a Ring that keeps the newest size bytes. size <= 0 keeps
// nothing (every write is counted and dropped).
func NewRing(size int) *Ring {
	return &Ring{r: ring{size: max(size, 0)}}
}

// Write stores p, overwriting the oldest bytes when full. It never fails.
func (b *Ring) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.r.write(p)
	b.mu.Unlock()
	return len(p), nil
}

// ReadNew returns a copy of the bytes written since the previous ReadNew
// (at most Size of them, the newest) and whether older unread bytes were
// overwritten before they could be read.
func (b *Ring) ReadNew() (out []byte, dropped bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out, dropped = b.r.appendFrom(nil, b.read)
	b.read = b.r.w
	return out, dropped
}

// Unread is like ReadNew but consumes nothing.
func (b *Ring) Unread() (out []byte, dropped bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.r.appendFrom(nil, b.read)
}

// Total returns the number of bytes ever written.
func (b *Ring) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.r.w
}

// Size returns the number of bytes the ring keeps.
func (b *Ring) Size() int {
	return b.r.size
}
