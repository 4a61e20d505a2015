//go:build linux

package bwrap

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRelayDeliversWhatWasSent runs the relay as the sandbox does (this
// test binary, whose TestMain calls Init) around a shell that opens two
// connections, writes 256 KiB and a token on each and exits at once: the
// proxy's socket receives every byte, although the relay exits as soon
// as the command has (it used to exit while still copying). Repeated,
// since the loss is a race.
func TestRelayDeliversWhatWasSent(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash (for /dev/tcp) is not installed")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	for i := range 10 {
		sock := filepath.Join(t.TempDir(), "proxy.sock")
		ul, err := net.Listen("unix", sock)
		require.NoError(t, err)
		got := make(chan string, 4)
		go func() {
			for {
				c, err := ul.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
					b, _ := io.ReadAll(c)
					got <- string(b)
				}()
			}
		}()
		free, err := net.Listen("tcp4", "127.0.0.1:0")
		require.NoError(t, err)
		port := free.Addr().(*net.TCPAddr).Port
		free.Close()
		script := fmt.Sprintf(`for j in 0 1; do { head -c 262144 /dev/zero; printf token-%d-$j; } >/dev/tcp/127.0.0.1/%d || exit 1; done`, i, port)
		// The relay listens before it starts the command.
		out, err := exec.Command(exe, relayArg, sock, strconv.Itoa(port), bash, "bash", "-c", script).CombinedOutput()
		require.NoError(t, err, "%s", out)
		for j := range 2 {
			select {
			case b := <-got:
				require.Equal(t, 262144+len(fmt.Sprintf("token-%d-%d", i, j)), len(b), "run %d: the proxy received every byte", i)
			case <-time.After(20 * time.Second):
				t.Fatalf("run %d: the proxy saw no connection end", i)
			}
		}
		ul.Close()
	}
}
