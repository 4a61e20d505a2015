//go:build !linux

package landlock

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/cordon-sandbox/cordon/internal/launcher"
)

const supported = false

func detect() features {
	return features{arch: runtime.GOARCH, errata: -1, seccompWhy: "seccomp is Linux-only"}
}

func newLauncher(pl *plan, log *slog.Logger) (*launcher.Launcher, error) {
	return nil, fmt.Errorf("landlock: not implemented on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}

func fileID(path string) (dev, ino uint64, ok bool) { return 0, 0, false }
