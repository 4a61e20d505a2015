//go:build !darwin

package seatbelt

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/cordon-sandbox/cordon/executor"
)

// supported is false: Seatbelt and sandbox-exec exist only on macOS.
const supported = false

// unsupported is the error of New on every system but macOS.
func unsupported() error {
	return &executor.UnavailableError{Backend: Backend,
		Reason: fmt.Sprintf("seatbelt: not implemented on %s/%s (Seatbelt and %s exist only on macOS)", runtime.GOOS, runtime.GOARCH, Program),
		Fix:    "use the landlock or bwrap backend on Linux, or the docker backend",
		Err:    errors.ErrUnsupported}
}

// hostInfo returns nothing off macOS.
func hostInfo() map[string]string { return nil }
