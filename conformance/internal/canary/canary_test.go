package canary

import (
	"net"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanariesCount(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		open  func() (*Canary, error)
		dial  string // network to dial
		linux bool
	}{
		{"tcp", TCP, "tcp", false},
		{"udp", UDP, "udp", false},
		{"unix", func() (*Canary, error) { return Unix(filepath.Join(dir, "s")) }, "unix", false},
		{"unixgram", func() (*Canary, error) { return Unixgram(filepath.Join(dir, "d")) }, "unixgram", false},
		{"abstract", func() (*Canary, error) { return Abstract("cordon-canary-test") }, "unix", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.linux && runtime.GOOS != "linux" {
				t.Skip("abstract Unix sockets are Linux-only")
			}
			c, err := tt.open()
			require.NoError(t, err)
			defer c.Close()
			assert.Equal(t, 0, c.WaitHits(0, 50*time.Millisecond), "nothing sent yet")

			conn, err := net.Dial(tt.dial, c.Addr())
			require.NoError(t, err)
			_, err = conn.Write([]byte("token-1"))
			require.NoError(t, err)
			require.NoError(t, conn.Close())

			assert.Equal(t, 1, c.WaitHits(0, 5*time.Second))
			assert.Equal(t, []string{"token-1"}, c.Payloads())
		})
	}
}

// TestLatePayload checks that bytes arriving after the first second still
// become the connection's payload (a proxy tunnel on a loaded machine),
// while the hit is counted at the second as before.
func TestLatePayload(t *testing.T) {
	c, err := TCP()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := net.Dial("tcp", c.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if h := c.WaitHits(0, 3*time.Second); h != 1 {
		t.Fatalf("hits = %d, want 1 after the first second", h)
	}
	if _, err := conn.Write([]byte("late-token")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if p := c.Payloads(); len(p) == 1 && p[0] == "late-token" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("payloads = %q, want the late token", c.Payloads())
}
