//go:build unix

package procscan

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFindAndKill(t *testing.T) {
	tag := "procscan-test-tag-" + time.Now().Format("150405.000000000")
	tests := []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"in argv", func() *exec.Cmd { return exec.Command("/bin/sh", "-c", "sleep 30; : "+tag) }},
		{"in environment", func() *exec.Cmd {
			c := exec.Command("/bin/sh", "-c", "sleep 30; :")
			c.Env = append(os.Environ(), "TAG="+tag)
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			none, err := Find(tag)
			require.NoError(t, err)
			require.Empty(t, none, "control: nothing carries the tag yet")

			c := tt.cmd()
			require.NoError(t, c.Start())
			defer c.Process.Kill()
			var found []Process
			require.Eventually(t, func() bool { found, _ = Find(tag); return len(found) > 0 }, 5*time.Second, 10*time.Millisecond)
			require.NoError(t, Kill(found))
			err = c.Wait()
			assert.Error(t, err, "killed")
		})
	}
}
