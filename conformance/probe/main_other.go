//go:build !unix

package probe

import (
	"fmt"
	"os"
	"runtime"
)

// Main reports that the probe is not implemented on this operating system.
func Main(args []string) int {
	fmt.Fprintf(os.Stderr, "cordon-probe: not implemented on %s/%s\n", runtime.GOOS, runtime.GOARCH)
	return 2
}
