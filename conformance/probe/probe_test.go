//go:build unix

package probe_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance/probe"
)

func TestMain(m *testing.M) {
	probe.MaybeRun()
	os.Exit(m.Run())
}

// run re-executes the test binary as the probe, the way a registered host
// program runs it.
func run(t *testing.T, args ...string) (stdout []byte, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--tag=test"}, args...)...)
	cmd.Env = append(os.Environ(), probe.EnvMain+"=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
	}
	return out.Bytes(), cmd.ProcessState.ExitCode()
}

func one(t *testing.T, args ...string) (probe.Record, int) {
	t.Helper()
	out, code := run(t, args...)
	recs := probe.Parse(out)
	require.Len(t, recs, 1, "%s", out)
	return recs[0], code
}

func TestRegistered(t *testing.T) { assert.True(t, probe.Registered()) }

func TestFileActions(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	tests := []struct {
		name  string
		args  []string
		ok    bool
		errno string
		check func(t *testing.T, r probe.Record)
	}{
		{"write", []string{"write", f, "hello"}, true, "", nil},
		{"append", []string{"append", f, " world"}, true, "", nil},
		{"read", []string{"read", f}, true, "", func(t *testing.T, r probe.Record) {
			assert.Equal(t, "hello world", r.Data)
			assert.EqualValues(t, 11, r.Size)
		}},
		{"read missing", []string{"read", filepath.Join(dir, "nope")}, false, "ENOENT", nil},
		{"chmod", []string{"chmod", "600", f}, true, "", nil},
		{"chown to self", []string{"chown", strconv.Itoa(os.Getuid()), f}, true, "", nil},
		{"utimes", []string{"utimes", f}, true, "", nil},
		{"utimes missing", []string{"utimes", filepath.Join(dir, "nope")}, false, "ENOENT", nil},
		{"link", []string{"link", f, filepath.Join(dir, "l")}, true, "", nil},
		{"link exists", []string{"link", f, filepath.Join(dir, "l")}, false, "EEXIST", nil},
		{"truncate", []string{"truncate", f}, true, "", nil},
		{"rename", []string{"rename", f, filepath.Join(dir, "g")}, true, "", nil},
		{"mkdir", []string{"mkdir", filepath.Join(dir, "a", "b")}, true, "", nil},
		{"remove", []string{"remove", filepath.Join(dir, "l")}, true, "", nil},
		{"list", []string{"list", dir}, true, "", func(t *testing.T, r probe.Record) {
			assert.Equal(t, []string{"a", "g"}, r.List)
		}},
		{"write into missing dir", []string{"write", filepath.Join(dir, "x", "y"), "z"}, false, "ENOENT", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, code := one(t, tt.args...)
			assert.Equal(t, tt.ok, r.OK, "%+v", r)
			assert.Equal(t, tt.errno, r.Errno)
			assert.Equal(t, map[bool]int{true: 0, false: 1}[tt.ok], code)
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
	fi, err := os.Stat(filepath.Join(dir, "g"))
	require.NoError(t, err)
	assert.EqualValues(t, 0, fi.Size(), "truncated on the host")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestNetActions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 64)
		n, _ := c.Read(b)
		got <- string(b[:n])
	}()
	r, _ := one(t, "tcp-connect", ln.Addr().String(), "tok")
	assert.True(t, r.OK, "%+v", r)
	assert.Equal(t, "tok", <-got)

	ln.Close()
	r, _ = one(t, "tcp-connect", ln.Addr().String(), "tok")
	assert.False(t, r.OK)
	assert.Equal(t, "ECONNREFUSED", r.Errno)
}

func TestProcessActions(t *testing.T) {
	r, _ := one(t, "fds")
	assert.True(t, r.OK)
	assert.Contains(t, r.List[0], "0=")
	if runtime.GOOS == "linux" {
		r, _ = one(t, "status")
		assert.Contains(t, []string{"0", "1"}, r.Values["NoNewPrivs"])
	}
	r, _ = one(t, "env")
	assert.Contains(t, r.List, probe.EnvMain+"=1")
	r, _ = one(t, "kill", "999999999", "0")
	assert.Equal(t, "ESRCH", r.Errno)
}

func TestOutputActions(t *testing.T) {
	out, code := run(t, "bytes", "seed", "5000")
	assert.Equal(t, 0, code)
	assert.Equal(t, probe.Pattern("seed", 5000), out)
	p := probe.Pattern("s", 300)
	for i := 0; i < 256; i++ {
		assert.Equal(t, byte(i), p[i])
	}

	out, _ = run(t, "repeat", "tok", "10")
	want, _ := probe.RepeatOutput("tok", 10)
	assert.Equal(t, want, out)
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"no-such-action"}, {"write", "only-one"}, {"chmod", "xyz", "f"}} {
		_, code := run(t, args...)
		assert.Equal(t, 2, code, "%q", args)
	}
}

func TestParseIgnoresOtherLines(t *testing.T) {
	out := []byte("noise\n{\"cordon_probe\":1,\"action\":\"read\",\"ok\":true}\n{\"other\":1}\n{\"cordon_probe\":1,broken\n")
	recs := probe.Parse(out)
	require.Len(t, recs, 1)
	assert.Equal(t, "read", recs[0].Action)
	assert.Equal(t, "read: ok", recs[0].String())
}
