//go:build linux

package procgroup_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/launcher"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
)

var env = []string{"PATH=/usr/bin:/bin"}

func sh(script string) *procgroup.Spec {
	return &procgroup.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Env: env}
}

// childFDs lists the descriptors of a running process as seen from outside.
func childFDs(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[int]string{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		require.NoError(t, err)
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		out[n] = target
	}
	return out
}

func keys(m map[int]string) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// waitExec waits until pid runs path (its exec is done).
//
// It also waits until the process sleeps (state S): right after the exec
// the dynamic loader holds the libraries it maps open as descriptors 3,
// 4, ... for a moment, which a read of /proc/PID/fd must not mistake for
// inherited ones.
func waitExec(t *testing.T, pid int, path string) {
	t.Helper()
	require.Eventually(t, func() bool {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if exe != path {
			return false
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		// pid (comm) state ...: the state follows the last ')'.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		return strings.HasPrefix(strings.TrimSpace(rest), "S")
	}, 5*time.Second, 5*time.Millisecond)
}

// TestDescriptorsFromOutside reads /proc/PID/fd of the running child: only
// 0-2 arrive, an inheritable descriptor of the parent does not, and one
// passed through ExtraFiles does (the allowed twin).
func TestDescriptorsFromOutside(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "canary")
	require.NoError(t, os.WriteFile(canary, nil, 0o600))
	fd, err := syscall.Open(canary, syscall.O_RDONLY, 0) // inheritable
	require.NoError(t, err)
	defer syscall.Close(fd)
	passed, err := os.Open(canary)
	require.NoError(t, err)
	defer passed.Close()

	tests := []struct {
		name  string
		extra []*os.File
		want  []int
	}{
		{"none", nil, []int{0, 1, 2}},
		{"extra file", []*os.File{passed}, []int{0, 1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := procgroup.Start(context.Background(), &procgroup.Spec{
				Path: "/bin/sleep", Args: []string{"sleep", "1000"}, ExtraFiles: tt.extra,
			})
			require.NoError(t, err)
			defer p.Kill()
			waitExec(t, p.Pid(), "/usr/bin/sleep")
			fds := childFDs(t, p.Pid())
			assert.Equal(t, tt.want, keys(fds))
			assert.Equal(t, "/dev/null", fds[0])
			assert.Regexp(t, `^pipe:`, fds[1])
			assert.Equal(t, fds[1], fds[2], "Start merges stdout and stderr")
			if len(tt.extra) > 0 {
				assert.Equal(t, canary, fds[3])
			}
		})
	}
}

func TestLauncherStateReachesChild(t *testing.T) {
	plain, err := launcher.New(nil)
	require.NoError(t, err)
	defer plain.Close()
	nnp, err := launcher.New(launcher.NoNewPrivs)
	require.NoError(t, err)
	defer nnp.Close()

	probe := func(l *launcher.Launcher) string {
		s := sh("grep '^NoNewPrivs:' /proc/self/status")
		s.Launcher = l
		res, err := procgroup.Run(context.Background(), s)
		require.NoError(t, err)
		return string(res.Stdout)
	}
	if regexp.MustCompile(`1`).MatchString(probe(plain)) {
		t.Skip("the test process already has no_new_privs")
	}
	assert.Regexp(t, `NoNewPrivs:\s*0`, probe(plain), "control: a launcher without setup")
	assert.Regexp(t, `NoNewPrivs:\s*1`, probe(nnp))
	assert.Regexp(t, `NoNewPrivs:\s*1`, probe(nil), "the default launcher sets no_new_privs")
}

func TestSessionLeader(t *testing.T) {
	res, err := procgroup.Run(context.Background(), sh(`set -- $(sed 's/.*) //' /proc/self/stat); echo "$$ $3 $4"`))
	require.NoError(t, err)
	pid := strconv.Itoa(res.Pid)
	assert.Equal(t, pid+" "+pid+" "+pid+"\n", string(res.Stdout), "pid, process group and session are the same")
}

func TestPathLookupUsesSpecEnv(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "cordon-probe-prog")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\necho found\n"), 0o755))

	res, err := procgroup.Run(context.Background(), &procgroup.Spec{Path: "cordon-probe-prog", Env: []string{"PATH=" + dir}})
	require.NoError(t, err)
	assert.Equal(t, "found\n", string(res.Stdout))

	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	_, err = procgroup.Run(context.Background(), &procgroup.Spec{Path: "cordon-probe-prog", Env: []string{"PATH=/nonexistent"}})
	var se *procgroup.StartError
	require.ErrorAs(t, err, &se, "the parent's PATH is never searched")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestSpecErrors(t *testing.T) {
	for _, s := range []*procgroup.Spec{nil, {}, {Path: "/bin/true", Timeout: -1}} {
		_, err := procgroup.Run(context.Background(), s)
		assert.ErrorIs(t, err, procgroup.ErrInvalidSpec)
		_, err = procgroup.Start(context.Background(), s)
		assert.ErrorIs(t, err, procgroup.ErrInvalidSpec)
	}
}

func TestStartTimeout(t *testing.T) {
	s := sh("echo hi; sleep 1000")
	s.Timeout = 200 * time.Millisecond
	p, err := procgroup.Start(context.Background(), s)
	require.NoError(t, err)
	<-p.Done()
	res := p.Wait()
	assert.True(t, res.TimedOut)
	assert.Equal(t, -1, res.ExitCode)
	assert.Equal(t, "hi\n", string(res.Stdout))
}

func TestNegativeLimitKeepsNothing(t *testing.T) {
	s := sh("echo hi; echo there >&2")
	s.OutputLimit = -1
	res, err := procgroup.Run(context.Background(), s)
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	assert.Contains(t, string(res.Stdout), "3 bytes omitted")
}

func TestEnvExact(t *testing.T) {
	t.Setenv("CORDON_CANARY_ENV", "leaked")
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"nil is empty", nil, ""},
		{"empty", []string{}, ""},
		{"given", []string{"A=1", "B=two words"}, "A=1\nB=two words\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := procgroup.Run(context.Background(), &procgroup.Spec{Path: "/usr/bin/env", Env: tt.env})
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(res.Stdout))
		})
	}
}
