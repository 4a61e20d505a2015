//go:build linux

package procgroup

import "testing"

// BenchmarkListProcs measures one round of the freeze walk: reading
// /proc/*/stat of every process on the host.
func BenchmarkListProcs(b *testing.B) {
	for b.Loop() {
		if len(listProcs()) == 0 {
			b.Fatal("no processes listed")
		}
	}
}
