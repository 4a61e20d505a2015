package scan

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// osSteps are the Linux-only changes TestCacheSeesChanges makes.
var osSteps = []changeStep{
	{"exchange atomically", func(b string) error {
		return unix.Renameat2(unix.AT_FDCWD, b+"/ws/a", unix.AT_FDCWD, b+"/ws/x", unix.RENAME_EXCHANGE)
	}},
	{"rename over", func(b string) error {
		if err := os.MkdirAll(b+"/ws/new/.git/hooks", 0o755); err != nil {
			return err
		}
		if err := os.RemoveAll(b + "/ws/x"); err != nil {
			return err
		}
		if err := os.Mkdir(b+"/ws/x", 0o755); err != nil {
			return err
		}
		return unix.Rename(b+"/ws/new", b+"/ws/x") // os.Rename refuses to replace a directory
	}},
}

// TestCacheOverflow loses the event queue on purpose: the cache must then
// re-read everything.
func TestCacheOverflow(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	require.NoError(t, err)
	var max int
	_, err = fmt.Sscan(string(b), &max)
	require.NoError(t, err)
	if max > 1<<17 {
		t.Skipf("max_queued_events is %d: too many events to overflow quickly", max)
	}
	base := tempDir(t)
	mkTree(t, base, "ws/d/", "ws/e/", "ws/f/")
	pats := []string{".env"}
	req := &Request{Root: base + "/ws", Patterns: testPatterns(pats...)}
	c := NewCache(Options{})
	defer c.Close()
	equalSearch(t, c, req, base, pats, "initial")
	require.Equal(t, 4, c.Stats().Watched)

	// Hold the lock so the drainer cannot keep up, and make more events
	// than the queue holds (each rename is two).
	c.mu.Lock()
	for i := 0; i < max/2+10; i++ {
		if err := os.Rename(base+"/ws/f", base+"/ws/e/f"); err != nil {
			c.mu.Unlock()
			require.NoError(t, err)
		}
		if err := os.Rename(base+"/ws/e/f", base+"/ws/f"); err != nil {
			c.mu.Unlock()
			require.NoError(t, err)
		}
	}
	// Changes lost with the queue: a new match, and a directory replaced
	// by another of the same name (whose old watch must not be trusted).
	for _, err := range []error{
		os.WriteFile(base+"/ws/e/.env", nil, 0o644),
		os.Rename(base+"/ws/d", base+"/ws/d.old"),
		os.Mkdir(base+"/ws/d", 0o755),
	} {
		if err != nil {
			c.mu.Unlock()
			require.NoError(t, err)
		}
	}
	c.mu.Unlock()
	res := equalSearch(t, c, req, base, pats, "after overflow")
	assert.Len(t, res.Matches, 1)
	assert.GreaterOrEqual(t, c.Stats().Overflows, 1)

	require.NoError(t, os.WriteFile(base+"/ws/d/.env", nil, 0o644))
	res = equalSearch(t, c, req, base, pats, "in the replacing directory")
	assert.Len(t, res.Matches, 2)
	require.NoError(t, os.WriteFile(base+"/ws/d.old/.env", nil, 0o644))
	res = equalSearch(t, c, req, base, pats, "in the replaced directory")
	assert.Len(t, res.Matches, 3)
}

// TestCacheSeesMounts mounts over a directory inside a cached tree, in a
// private mount namespace: mounts send no inotify event, so the cache must
// notice them from the mount table.
func TestCacheSeesMounts(t *testing.T) {
	if os.Getenv("SCAN_TEST_MOUNTNS") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCacheSeesMounts$", "-test.v")
		cmd.Env = append(os.Environ(), "SCAN_TEST_MOUNTNS=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS}
		if os.Geteuid() != 0 {
			cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWUSER
			cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		}
		out, err := cmd.CombinedOutput()
		if err != nil && os.Geteuid() != 0 {
			t.Skipf("requires root or unprivileged user namespaces: %v", err)
		}
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestCacheSeesMounts", "%s", out)
		return
	}
	require.NoError(t, unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""))
	pats := []string{".env"}
	base := tempDir(t)
	mkTree(t, base, "ws/m/old/.env", "ws/n/")
	req := &Request{Root: base + "/ws", Patterns: testPatterns(pats...)}
	c := NewCache(Options{})
	defer c.Close()
	equalSearch(t, c, req, base, pats, "initial")

	require.NoError(t, unix.Mount("tmpfs", base+"/ws/m", "tmpfs", 0, ""))
	res := equalSearch(t, c, req, base, pats, "after mounting over m")
	assert.Empty(t, res.Matches)
	require.NoError(t, os.WriteFile(base+"/ws/m/.env", nil, 0o644))
	res = equalSearch(t, c, req, base, pats, "a file in the mount")
	assert.Len(t, res.Matches, 1)
	require.NoError(t, unix.Mount(base+"/ws/m", base+"/ws/n", "", unix.MS_BIND, ""))
	res = equalSearch(t, c, req, base, pats, "bind mount: one directory twice")
	assert.Len(t, res.Matches, 2)
	require.NoError(t, unix.Unmount(base+"/ws/n", 0))
	require.NoError(t, unix.Unmount(base+"/ws/m", 0))
	res = equalSearch(t, c, req, base, pats, "after unmounting")
	assert.Equal(t, []string{"$/ws/m/old/.env file in:m/old/.env .env"}, summary(res, base, pats))
}
