//go:build linux

package podhelper

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// initMain is PID 1: it reaps orphans until SIGTERM or SIGINT, or until
// no session attached (SIGUSR1) within timeout.
func initMain(timeout time.Duration) error {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, unix.SIGTERM, unix.SIGINT, unix.SIGUSR1, unix.SIGCHLD)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case <-deadline.C:
			return fmt.Errorf("no session attached within %v: the executor that created this pod is gone", timeout)
		case s := <-sig:
			switch s {
			case unix.SIGUSR1:
				deadline.Stop()
			case unix.SIGCHLD:
				for {
					var ws unix.WaitStatus
					pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
					if pid <= 0 || err != nil {
						break
					}
				}
			default:
				return nil
			}
		}
	}
}

// attach tells PID 1 a session attached (SIGUSR1).
func attach() error {
	if err := unix.Kill(1, unix.SIGUSR1); err != nil {
		return fmt.Errorf("attaching to PID 1: %w", err)
	}
	return nil
}

// detach ends the session: PID 1 exits (SIGTERM).
func detach() {
	if err := unix.Kill(1, unix.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		fmt.Fprintln(os.Stderr, "cordon-pod: ending the session:", err)
	}
}
