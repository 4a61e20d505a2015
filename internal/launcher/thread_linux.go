package launcher

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func threadID() int { return unix.Gettid() }

func onMainThread() bool { return unix.Gettid() == unix.Getpid() }

// NoNewPrivs sets PR_SET_NO_NEW_PRIVS on the calling thread; as a launcher
// setup it makes every child unable to gain privileges through execve
// (setuid binaries, file capabilities).
func NoNewPrivs() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	return nil
}

var defaultSetup = NoNewPrivs
