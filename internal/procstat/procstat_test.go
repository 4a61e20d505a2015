//go:build linux

package procstat_test

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/procstat"
)

func TestParse(t *testing.T) {
	line := "4242 (a) b (c)) S 10 20 30 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 3 0 987654 1 2 3\n"
	st, ok := procstat.Parse(4242, []byte(line))
	require.True(t, ok)
	assert.Equal(t, procstat.Stat{PID: 4242, PPID: 10, PGID: 20, SID: 30, State: 'S', Threads: 3, Start: 987654}, st)
	for _, bad := range []string{"1 (x) S 0", "1 x S 0", "1 (x) SS 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 1", ""} {
		_, ok = procstat.Parse(1, []byte(bad))
		assert.False(t, ok, "%q", bad)
	}
}

func TestReadSelf(t *testing.T) {
	self, ok := procstat.Read(os.Getpid())
	require.True(t, ok)
	assert.Equal(t, os.Getppid(), self.PPID)
	assert.NotZero(t, self.Start)
	assert.GreaterOrEqual(t, self.Threads, 1)
	_, ok = procstat.Read(-1)
	assert.False(t, ok)
	assert.True(t, slices.ContainsFunc(procstat.All(), func(s procstat.Stat) bool { return s.PID == os.Getpid() }))
}

// BenchmarkAll measures one round of procgroup's freeze walk: reading
// /proc/*/stat of every process on the host.
func BenchmarkAll(b *testing.B) {
	for b.Loop() {
		if len(procstat.All()) == 0 {
			b.Fatal("no processes listed")
		}
	}
}
