package docker

import (
	"bytes"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestCtlWriter feeds the wrapper's stderr in every split and checks that
// the header and trailer are taken out, the pid and status read, and the
// command's own bytes kept exactly.
func TestCtlWriter(t *testing.T) {
	nonce := "cordon-0123456789abcdef0123456789abcdef"
	tests := []struct {
		name   string
		in     string
		out    string
		pid    int
		status int
		exited bool
	}{
		{"plain", nonce + " 17\nerr1\nerr2\n" + nonce + " exit 3\n", "err1\nerr2\n", 17, 3, true},
		{"no trailing newline before the trailer", nonce + " 9\npartial" + nonce + " exit 0\n", "partial", 9, 0, true},
		{"output after the trailer", nonce + " 9\na" + nonce + " exit 1\nlate\n", "alate\n", 9, 1, true},
		{"no header (a runtime error)", "OCI runtime exec failed: chdir\n", "OCI runtime exec failed: chdir\n", 0, 0, false},
		{"empty", "", "", 0, 0, false},
		{"header only", nonce + " 5\n", "", 5, 0, false},
		{"a look-alike without the nonce", nonce + " 5\ncordon-ffff exit 3\n", "cordon-ffff exit 3\n", 5, 0, false},
		{"nonce but no number", nonce + " 5\n" + nonce + " exit x\n", nonce + " exit x\n", 5, 0, false},
		{"binary", nonce + " 5\n\x00\xff" + nonce[:10] + "\n" + nonce + " exit 2\n", "\x00\xff" + nonce[:10] + "\n", 5, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for split := 0; split <= len(tt.in); split++ {
				for split2 := split; split2 <= len(tt.in); split2 += max(1, len(tt.in)/7) {
					var buf bytes.Buffer
					w := newCtlWriter(&buf, nonce)
					for _, part := range []string{tt.in[:split], tt.in[split:split2], tt.in[split2:]} {
						n, err := w.Write([]byte(part))
						require.NoError(t, err)
						require.Equal(t, len(part), n)
					}
					w.flush()
					require.Equal(t, tt.out, buf.String(), "split at %d, %d", split, split2)
					assert.Equal(t, tt.pid, w.wrapperPid())
					status, exited := w.exitStatus()
					assert.Equal(t, tt.exited, exited)
					if tt.exited {
						assert.Equal(t, tt.status, status)
					}
				}
			}
		})
	}
}

// TestCtlWriterProperty checks that whatever the command prints (bytes
// that do not contain the nonce) comes through exactly, however the
// stream is cut.
func TestCtlWriterProperty(t *testing.T) {
	nonce := newNonce()
	rapid.Check(t, func(t *rapid.T) {
		body := rapid.SliceOf(rapid.SampledFrom([]byte("ab\n\x00 cordon-exit0123456789"+nonce[:8]))).Draw(t, "body")
		if bytes.Contains(body, []byte(nonce)) {
			t.Skip("contains the nonce")
		}
		status := rapid.IntRange(0, 255).Draw(t, "status")
		stream := []byte(nonce + " 42\n")
		stream = append(stream, body...)
		stream = append(stream, []byte(nonce+" exit "+strconv.Itoa(status)+"\n")...)
		cuts := rapid.SliceOfN(rapid.IntRange(0, len(stream)), 0, 6).Draw(t, "cuts")
		var buf bytes.Buffer
		w := newCtlWriter(&buf, nonce)
		prev := 0
		slices.Sort(cuts)
		for _, c := range append(cuts, len(stream)) {
			if c < prev {
				continue
			}
			_, _ = w.Write(stream[prev:c])
			prev = c
		}
		w.flush()
		if !bytes.Equal(buf.Bytes(), body) {
			t.Fatalf("got %q, want %q", buf.Bytes(), body)
		}
		if s, ok := w.exitStatus(); !ok || s != status {
			t.Fatalf("status %d %v, want %d", s, ok, status)
		}
		if w.wrapperPid() != 42 {
			t.Fatalf("pid %d", w.wrapperPid())
		}
	})
}

func TestUnsetNames(t *testing.T) {
	tests := []struct {
		env, image, want []string
	}{
		{nil, nil, []string{"PATH", "HOSTNAME", "HOME", "TERM"}},
		{[]string{"PATH=/bin", "HOME=/h"}, nil, []string{"HOSTNAME", "TERM"}},
		{[]string{"PATH=/bin"}, []string{"PATH", "LANG", "bad-name", "LANG"}, []string{"HOSTNAME", "HOME", "TERM", "LANG"}},
		{[]string{"HOSTNAME=", "TERM=x", "HOME=", "PATH="}, nil, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, unsetNames(tt.env, tt.image), "env %v image %v", tt.env, tt.image)
	}
}

func TestPartialSuffix(t *testing.T) {
	m := []byte("abc exit ")
	assert.Equal(t, 0, partialSuffix([]byte("xyz"), m))
	assert.Equal(t, 1, partialSuffix([]byte("xya"), m))
	assert.Equal(t, 3, partialSuffix([]byte("abc"), m))
	assert.Equal(t, 8, partialSuffix([]byte("zabc exit"), m))
	assert.Equal(t, 0, partialSuffix(nil, m))
}

func TestMountKeyStable(t *testing.T) {
	assert.Equal(t, mountKey(nil, "none", true), mountKey(nil, "none", true))
	assert.NotEqual(t, mountKey(nil, "none", true), mountKey(nil, "host", true))
	assert.NotEqual(t, mountKey(nil, "none", true), mountKey(nil, "none", false), "another seccomp profile, another container")
}

func TestConfigDefaults(t *testing.T) {
	var c Config
	assert.Equal(t, int64(DefaultMemory), c.memory())
	assert.Equal(t, int64(DefaultPids), c.pids())
	assert.Equal(t, DefaultFullNetwork, c.fullNetwork())
	assert.Equal(t, DefaultWaitDelay, c.waitDelay())
	c = Config{Memory: -1, Pids: -1}
	assert.Equal(t, int64(0), c.memory(), "no memory limit")
	assert.Equal(t, int64(-1), c.pids(), "the API's unlimited")
	assert.Equal(t, "1000:1000", defaultUser(1000, 1000))
	assert.Equal(t, "", defaultUser(-1, -1))
}
