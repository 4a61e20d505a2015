//go:build linux

package podhelper

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// initMain is PID 1: it reaps orphans until SIGTERM or SIGINT, or until
// no lease attached (SIGUSR1) within timeout.
func initMain(timeout time.Duration) error {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, unix.SIGTERM, unix.SIGINT, unix.SIGUSR1, unix.SIGCHLD)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case <-deadline.C:
			return fmt.Errorf("no lease attached within %v: the executor that created this pod is gone", timeout)
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

// leaseMain holds the session: SIGUSR1 to PID 1 now, SIGTERM when in
// ends.
func leaseMain(in io.Reader) error {
	if err := unix.Kill(1, unix.SIGUSR1); err != nil {
		return fmt.Errorf("attaching to PID 1: %w", err)
	}
	_, err := io.Copy(io.Discard, in)
	if kerr := unix.Kill(1, unix.SIGTERM); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
		return fmt.Errorf("ending the session: %w", kerr)
	}
	return err
}
