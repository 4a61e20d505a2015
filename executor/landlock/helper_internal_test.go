//go:build linux

package landlock

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelperReportsFailure runs this test binary as the sandbox helper
// (Init, in TestMain) with a program that does not exist: the helper
// reports the failed exec on its status pipe as a *HelperError that
// unwraps to ENOENT, and its twin, an existing program, reports nothing.
func TestHelperReportsFailure(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	start := func(t *testing.T, program string) error {
		ef, err := envFile([]string{"A=1"})
		require.NoError(t, err)
		defer ef.Close()
		sr, sw, err := os.Pipe()
		require.NoError(t, err)
		defer sr.Close()
		cmd := &exec.Cmd{
			Path:       self,
			Args:       helperArgs(-1, 0, "-", "-", "-", -1, 3, 4, program, []string{"x", "-c", "exit 0"}),
			Env:        []string{},
			ExtraFiles: []*os.File{ef, sw},
		}
		out, _ := cmd.CombinedOutput()
		sw.Close()
		t.Logf("helper output: %q", out)
		return readStatus(sr)
	}
	err = start(t, "/nonexistent/sh")
	var he *HelperError
	require.ErrorAs(t, err, &he)
	assert.ErrorIs(t, err, fs.ErrNotExist, "a missing program is ErrNotExist")
	assert.True(t, strings.Contains(he.Message, "/nonexistent/sh"), he.Message)

	assert.NoError(t, start(t, "/bin/sh"), "control: the helper executed /bin/sh and reported nothing")
	assert.False(t, errors.Is(readStatus(strings.NewReader("")), fs.ErrNotExist))
}
