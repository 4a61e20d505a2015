package launcher

import (
	"testing"
)

// BenchmarkHandoff measures one round trip to the launcher thread.
func BenchmarkHandoff(b *testing.B) {
	l, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		if err := l.do(func() {}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarkCloexec measures the descriptor sweep done before each start.
func BenchmarkMarkCloexec(b *testing.B) {
	for b.Loop() {
		if err := markCloexec(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewClose measures creating and stopping a launcher thread, the
// cost a backend pays for a launcher per distinct per-thread state.
func BenchmarkNewClose(b *testing.B) {
	for b.Loop() {
		l, err := New(nil)
		if err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
}
