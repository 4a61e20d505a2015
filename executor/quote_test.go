package executor_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/cordon-sandbox/cordon/executor"
)

// TestShellQuote: the quoted word is read back byte for byte by every
// shell here (dash as /bin/sh, bash, busybox sh), for arbitrary bytes,
// words that look like options, expansions and quotes; a NUL is refused.
func TestShellQuote(t *testing.T) {
	var shells []string
	for _, sh := range []string{"/bin/sh", "/bin/bash", "/bin/busybox"} {
		if _, err := exec.LookPath(sh); err == nil {
			shells = append(shells, sh)
		}
	}
	require.NotEmpty(t, shells)
	words := []string{"", "plain", "a b", "'", `"`, "$HOME", "`id`", "$(id)", "*", "~", "\n", "-n", "a'b'c", "\\", "!x", "é", "\xff\xfe", "tab\there", "%s"}
	check := func(t require.TestingT, word string) {
		q, ok := executor.ShellQuote(word)
		require.True(t, ok)
		for _, sh := range shells {
			args := []string{"-c", "printf %s " + q}
			if strings.HasSuffix(sh, "busybox") {
				args = append([]string{"sh"}, args...)
			}
			var out bytes.Buffer
			cmd := exec.Command(sh, args...)
			cmd.Stdout = &out
			require.NoError(t, cmd.Run(), "%s: %q quoted as %s", sh, word, q)
			require.Equal(t, word, out.String(), "%s: %q quoted as %s", sh, word, q)
		}
	}
	for _, w := range words {
		check(t, w)
	}
	rapid.Check(t, func(rt *rapid.T) {
		w := string(rapid.SliceOfN(rapid.ByteRange(1, 255), 0, 40).Draw(rt, "word"))
		check(rt, w)
	})
	// As a first word, "A=b" would be an assignment and "%1" a job.
	for _, w := range []string{"A=b", "%1"} {
		q, _ := executor.ShellQuote(w)
		assert.NotEqual(t, w, q, "%q is quoted in any position", w)
	}
	_, ok := executor.ShellQuote("a\x00b")
	assert.False(t, ok, "a NUL cannot be quoted")
}
