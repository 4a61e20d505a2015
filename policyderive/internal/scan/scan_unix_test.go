//go:build unix

package scan

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSearchUnreadable checks that a directory the searcher cannot list is
// reported, with what could be found elsewhere, and that a cache notices
// when it becomes readable. As root (who reads everything) the test runs
// itself again as nobody.
func TestSearchUnreadable(t *testing.T) {
	if os.Getenv("SCAN_TEST_UNREADABLE") == "" && os.Geteuid() == 0 {
		base, err := os.MkdirTemp("", "scan-unreadable")
		require.NoError(t, err)
		defer os.RemoveAll(base)
		require.NoError(t, os.Chmod(base, 0o777))
		// The test binary's own directory is private to root.
		bin, err := os.ReadFile(os.Args[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(base+"/scan.test", bin, 0o755))
		cmd := exec.Command(base+"/scan.test", "-test.run=^TestSearchUnreadable$", "-test.v")
		cmd.Dir = base
		cmd.Env = append(os.Environ(), "SCAN_TEST_UNREADABLE="+base)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestSearchUnreadable", "%s", out)
		return
	}
	base := os.Getenv("SCAN_TEST_UNREADABLE")
	if base == "" {
		base = tempDir(t)
	} else {
		base, _ = os.MkdirTemp(base, "t")
		defer os.RemoveAll(base)
	}
	mkTree(t, base, "ws/open/.env", "ws/closed/.env", "ws/closed/sub/", "ws/.envsecret/x")
	require.NoError(t, os.Chmod(base+"/ws/closed", 0o311)) // traversable, not listable
	require.NoError(t, os.Chmod(base+"/ws/.envsecret", 0o000))
	defer os.Chmod(base+"/ws/closed", 0o755)
	defer os.Chmod(base+"/ws/.envsecret", 0o755)
	pats := []string{".env*"}
	req := &Request{Root: base + "/ws", Patterns: testPatterns(pats...)}
	want := []string{
		"$/ws/.envsecret dir in:.envsecret .env*",
		"$/ws/open/.env file in:open/.env .env*",
		"$/ws/closed unreadable",
	}
	res, err := Search(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, want, summary(res, base, pats))
	require.Len(t, res.Unreadable, 1)
	assert.ErrorIs(t, res.Unreadable[0].Err, fs.ErrPermission)

	c := NewCache(Options{})
	defer c.Close()
	res, err = c.Search(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, want, summary(res, base, pats))

	require.NoError(t, os.Chmod(base+"/ws/closed", 0o755))
	res, err = c.Search(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"$/ws/.envsecret dir in:.envsecret .env*",
		"$/ws/closed/.env file in:closed/.env .env*",
		"$/ws/open/.env file in:open/.env .env*",
	}, summary(res, base, pats))
}
