//go:build linux

package landlock_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// flood creates n empty files in flood/dDDDD/ (a thousand per directory)
// in the working directory, for the attacker (attackMain "flood").
func flood(n int) int {
	dirs := (n + 999) / 1000
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for d := w; d < dirs; d += 4 {
				dir := filepath.Join("flood", fmt.Sprintf("d%05d", d))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					errs <- err
					return
				}
				for i := d * 1000; i < min(n, (d+1)*1000); i++ {
					f, err := os.OpenFile(filepath.Join(dir, fmt.Sprint(i)), os.O_CREATE|os.O_WRONLY, 0o644)
					if err != nil {
						errs <- err
						return
					}
					f.Close()
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		fmt.Fprintln(os.Stderr, err)
		return 1
	default:
		return 0
	}
}

// floodDir is attackDir on a tmpfs of its own: two million files on a
// disk take minutes here, on a tmpfs seconds, and unmounting it removes
// them at once. It skips, saying why, where no tmpfs can be mounted.
func floodDir(t *testing.T) (dir, hook string) {
	t.Helper()
	base := reapDir(t)
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=4g,nr_inodes=%d", 3*floodFiles/2)); err != nil {
		t.Skipf("cannot mount a tmpfs for two million files (%v): on a disk they take minutes", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(base, unix.MNT_DETACH) })
	self, err := os.Executable()
	require.NoError(t, err)
	bin, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, exec.Command("git", "init", "-q", base).Run())
	require.NoError(t, os.WriteFile(filepath.Join(base, "atk"), bin, 0o755))
	return base, filepath.Join(base, ".git", "hooks", "pre-commit")
}

// floodFiles is how many files TestGuardFlood's command creates: twice
// the bound of the guard's cached walk.
const floodFiles = 2_000_000

// TestGuardFlood: a command that creates two million files — twice the
// bound of the guard's cached walk — and plants a hook in the root's
// repository and a new repository with a hook does not disable the
// repair: after Run both hooks are gone (seen from the host) and the
// violations name them. The twin plants the same with protection off,
// and the hooks stay.
func TestGuardFlood(t *testing.T) {
	const files = floodFiles
	x := newExecutor(t, landlock.Config{})
	plant := "mkdir -p fresh/.git/objects fresh/.git/refs/heads fresh/.git/hooks && " +
		"echo 'ref: refs/heads/main' > fresh/.git/HEAD && " +
		"printf '#!/bin/sh\\necho pwned\\n' > fresh/.git/hooks/post-checkout && " +
		"printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit"
	for _, protect := range []bool{false, true} {
		t.Run(fmt.Sprint("protect=", protect), func(t *testing.T) {
			dir, hook := floodDir(t)
			p := policy.Coding.Policy()
			cmd := plant
			if protect {
				cmd = "./atk flood " + fmt.Sprint(files) + " && " + plant
			} else {
				p.Protect = policy.Protect{Disabled: true}
			}
			start := time.Now()
			res, err := x.Run(t.Context(), &executor.Request{Command: cmd, Dir: dir, Root: dir, Policy: p, Timeout: 10 * time.Minute,
				Env: []string{"PATH=" + os.Getenv("PATH"), attackEnv + "=1"}})
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitCode, "%s%s", res.Stdout, res.Stderr)
			t.Logf("the command and its guard took %v", time.Since(start).Round(time.Millisecond))
			freshHook := filepath.Join(dir, "fresh/.git/hooks/post-checkout")
			if !protect {
				assert.FileExists(t, hook, "twin: the hook is planted with protection off (the fixture works)")
				assert.FileExists(t, freshHook, "twin: the new repository's hook is planted")
				return
			}
			des, err := os.ReadDir(filepath.Join(dir, "flood"))
			require.NoError(t, err)
			require.Len(t, des, files/1000, "the flood was created")
			assert.NoFileExists(t, hook, "the guard gave up on the flooded tree and kept the hook; violations: %v", res.Violations)
			assert.NoFileExists(t, freshHook, "the new repository's hook survived; violations: %v", res.Violations)
			v := strings.Join(res.Violations, "\n")
			assert.Contains(t, v, ".git/hooks/pre-commit")
			assert.Contains(t, v, "fresh/.git/hooks")
			assert.NotContains(t, v, "failed", "a repair failed")
		})
	}
}
