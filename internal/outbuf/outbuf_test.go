package outbuf_test

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/cordon-sandbox/cordon/internal/outbuf"
)

// want is the model of HeadTail: the stream, or head + marker + tail.
func want(data []byte, limit int) []byte {
	if len(data) <= limit {
		return append([]byte{}, data...)
	}
	headCap := (limit + 1) / 2
	tailCap := limit - headCap
	out := append([]byte{}, data[:headCap]...)
	out = append(out, outbuf.Marker(int64(len(data)-limit))...)
	return append(out, data[len(data)-tailCap:]...)
}

func TestHeadTail(t *testing.T) {
	seq := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i % 251)
		}
		return b
	}
	tests := []struct {
		name   string
		limit  int
		chunks []int
	}{
		{"empty", 10, nil},
		{"under", 10, []int{3, 4}},
		{"exact", 10, []int{10}},
		{"one over", 10, []int{11}},
		{"many small", 10, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"huge chunk", 10, []int{1000}},
		{"odd limit", 7, []int{3, 30, 2}},
		{"limit one", 1, []int{5}},
		{"limit zero", 0, []int{5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var data []byte
			for _, n := range tt.chunks {
				data = append(data, seq(n)...)
			}
			w := outbuf.NewHeadTail(tt.limit)
			off := 0
			for _, n := range tt.chunks {
				k, err := w.Write(data[off : off+n])
				require.NoError(t, err)
				require.Equal(t, n, k)
				off += n
			}
			assert.Equal(t, want(data, tt.limit), w.Bytes())
			assert.Equal(t, int64(len(data)), w.Total())
			assert.Equal(t, len(data) > tt.limit, w.Truncated())
			assert.Equal(t, int64(max(len(data)-tt.limit, 0)), w.Dropped())
		})
	}
}

func TestHeadTailProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.IntRange(0, 64).Draw(t, "limit")
		chunks := rapid.SliceOf(rapid.SliceOfN(rapid.Byte(), 0, 100)).Draw(t, "chunks")
		w := outbuf.NewHeadTail(limit)
		var data []byte
		for _, c := range chunks {
			_, _ = w.Write(c)
			data = append(data, c...)
		}
		if got := w.Bytes(); !bytes.Equal(got, want(data, limit)) {
			t.Fatalf("Bytes() = %q, want %q", got, want(data, limit))
		}
	})
}

func TestHeadTailBinaryExact(t *testing.T) {
	data := make([]byte, 256*4)
	for i := range data {
		data[i] = byte(i)
	}
	w := outbuf.NewHeadTail(len(data))
	_, err := io.Copy(w, bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, data, w.Bytes())
	assert.False(t, w.Truncated())
}

// TestHeadTailMemoryBounded writes 256 MiB and checks that the writer
// allocated nothing per write.
func TestHeadTailMemoryBounded(t *testing.T) {
	w := outbuf.NewHeadTail(30000)
	chunk := bytes.Repeat([]byte("y\n"), 16<<10)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range (256 << 20) / len(chunk) {
		_, _ = w.Write(chunk)
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated while writing 256 MiB")
	assert.True(t, w.Truncated())
	assert.Equal(t, int64(256<<20), w.Total())
}

func TestRing(t *testing.T) {
	r := outbuf.NewRing(8)
	out, dropped := r.ReadNew()
	assert.Empty(t, out)
	assert.False(t, dropped)

	_, _ = r.Write([]byte("abc"))
	out, dropped = r.ReadNew()
	assert.Equal(t, "abc", string(out))
	assert.False(t, dropped)

	_, _ = r.Write([]byte("defgh"))
	_, _ = r.Write([]byte("ijklmnop")) // 13 unread bytes, 8 kept
	peek, peekDropped := r.Unread()
	out, dropped = r.ReadNew()
	assert.Equal(t, "ijklmnop", string(out))
	assert.True(t, dropped)
	assert.Equal(t, out, peek)
	assert.Equal(t, dropped, peekDropped)

	out, dropped = r.ReadNew()
	assert.Empty(t, out)
	assert.False(t, dropped)
	assert.Equal(t, int64(16), r.Total())
}

func TestRingProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		size := rapid.IntRange(0, 32).Draw(t, "size")
		r := outbuf.NewRing(size)
		var data []byte
		read := 0
		steps := rapid.SliceOf(rapid.SliceOfN(rapid.Byte(), 0, 50)).Draw(t, "steps")
		for i, s := range steps {
			if i%3 == 2 { // every third step is a read
				out, dropped := r.ReadNew()
				first := max(read, len(data)-size)
				if !bytes.Equal(out, data[first:]) || dropped != (read < len(data)-size) {
					t.Fatalf("ReadNew() = %q, %v; want %q, %v", out, dropped, data[first:], read < len(data)-size)
				}
				read = len(data)
				continue
			}
			_, _ = r.Write(s)
			data = append(data, s...)
		}
	})
}
