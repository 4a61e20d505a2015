//go:build linux

package landlock_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// reapEnv makes the test binary run reapMain: "DIR:1" with
// Config.ReapOrphans, "DIR:0" without. A subreaper is for good and
// kills every child it did not start, so it gets a process of its own.
const reapEnv = "CORDON_LANDLOCK_TEST_REAP"

// reapMain runs, with cgroups turned off as in a container, a background
// command and then a command that leaves an orphan behind (setsid, its
// parent exits first) which writes late.txt a second later. It waits for
// the background command, which must have lived through the other
// command's end, and exits.
func reapMain(arg string) int {
	dir, reap, _ := strings.Cut(arg, ":")
	landlock.NoCgroups()
	x, err := landlock.New(landlock.Config{ReapOrphans: reap == "1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer x.Close()
	req := func(cmd string) *executor.Request {
		return &executor.Request{Command: cmd, Dir: dir, Root: dir, Policy: policy.Coding.Policy(), Timeout: time.Minute,
			Env: []string{"PATH=" + os.Getenv("PATH")}}
	}
	ctx := context.Background()
	bg, err := x.Start(ctx, req("sleep 1; echo bg > bg.txt"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res, err := x.Run(ctx, req(`setsid sh -c 'echo $$ > orphan.pid; sleep 1; echo late > late.txt' & sleep 0.3`))
	if err != nil || res.ExitCode != 0 {
		fmt.Fprintln(os.Stderr, err, res)
		return 1
	}
	if r := bg.Wait(); r.ExitCode != 0 {
		fmt.Fprintf(os.Stderr, "background command: exit %d %s\n", r.ExitCode, r.Stdout)
		return 1
	}
	fmt.Println(x.Describe(ctx).Info["reaper"])
	return 0
}

// TestReapOrphans: with Config.ReapOrphans and no cgroup, a process that
// left its command's tree is killed when the command ends — its pid is
// gone and the file it would have written later never appears — while a
// background command running meanwhile lives on. The twin without the
// reaper shows the orphan surviving and writing.
func TestReapOrphans(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	for _, reap := range []bool{true, false} {
		t.Run(fmt.Sprint("reap=", reap), func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			cmd := exec.Command(self, "-test.run=^$")
			arg := dir + ":0"
			if reap {
				arg = dir + ":1"
			}
			cmd.Env = append(os.Environ(), reapEnv+"="+arg)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			b, err := os.ReadFile(filepath.Join(dir, "orphan.pid"))
			require.NoError(t, err, "the orphan never ran")
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			require.NoError(t, err)
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			bg, err := os.ReadFile(filepath.Join(dir, "bg.txt"))
			require.NoError(t, err, "the background command did not finish")
			assert.Equal(t, "bg\n", string(bg))
			time.Sleep(2 * time.Second) // past the orphan's write
			_, err = os.Stat(filepath.Join(dir, "late.txt"))
			if reap {
				assert.ErrorIs(t, err, os.ErrNotExist, "the orphan outlived its command and wrote")
				assert.Contains(t, string(out), "subreaper", "Describe names the reaper")
				return
			}
			assert.NoError(t, err, "without the reaper the orphan survives (the fixture works)")
		})
	}
}
