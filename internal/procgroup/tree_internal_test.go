//go:build linux

package procgroup

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStat(t *testing.T) {
	line := "4242 (a) b (c)) S 10 20 30 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3\n"
	st, ok := parseStat(4242, []byte(line))
	require.True(t, ok)
	assert.Equal(t, procStat{pid: 4242, ppid: 10, pgid: 20, sid: 30, start: 987654}, st)

	_, ok = parseStat(1, []byte("1 (x) S 0"))
	assert.False(t, ok)

	self, ok := readStat(os.Getpid())
	require.True(t, ok)
	assert.Equal(t, os.Getppid(), self.ppid)
	assert.NotZero(t, self.start)
}
