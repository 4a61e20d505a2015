//go:build !linux

package launcher

import (
	"errors"
	"fmt"
	"runtime"
)

func threadID() int { return 0 }

func onMainThread() bool { return false }

// NoNewPrivs reports errors.ErrUnsupported: no_new_privs is Linux-only.
func NoNewPrivs() error {
	return fmt.Errorf("no_new_privs on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}

var defaultSetup func() error
