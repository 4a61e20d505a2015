//go:build linux

package landlock_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// helperEnv, set to "1" in a request's environment, makes the test binary
// run as a helper inside the sandbox: it tries one system call and prints
// "ok" or the errno's name.
const helperEnv = "CORDON_LANDLOCK_TEST_HELPER"

func TestMain(m *testing.M) {
	landlock.Init()
	probe.MaybeRun()
	if arg := os.Getenv(reapEnv); arg != "" {
		os.Exit(reapMain(arg))
	}
	if arg := os.Getenv(keepEnv); arg != "" {
		os.Exit(keepMain(arg))
	}
	if os.Getenv(attackEnv) != "" && len(os.Args) > 1 {
		os.Exit(attackMain(os.Args[1:]))
	}
	if os.Getenv(helperEnv) == "1" {
		fmt.Println(helper(os.Args[1:]))
		os.Exit(0)
	}
	code := m.Run()
	if helperDir != "" {
		os.RemoveAll(helperDir)
	}
	if benchX != nil {
		benchX.Close()
	}
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

// helper runs one action: socket FAMILY TYPE, socketpair, io_uring,
// read PATH.
func helper(args []string) string {
	result := func(err error) string {
		var errno syscall.Errno
		switch {
		case err == nil:
			return "ok"
		case errors.As(err, &errno):
			return unix.ErrnoName(errno)
		}
		return err.Error()
	}
	if len(args) == 0 {
		return "usage"
	}
	switch args[0] {
	case "socket":
		fam, _ := strconv.Atoi(args[1])
		typ, _ := strconv.Atoi(args[2])
		proto := 0
		if len(args) > 3 {
			proto, _ = strconv.Atoi(args[3])
		}
		fd, err := unix.Socket(fam, typ, proto)
		if err == nil {
			unix.Close(fd)
		}
		return result(err)
	case "socketpair":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return result(err)
	case "io_uring":
		var params [120]byte // struct io_uring_params
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
		if e != 0 {
			return result(e)
		}
		unix.Close(int(fd))
		return "ok"
	case "read":
		_, err := os.ReadFile(args[1])
		return result(err)
	}
	return "unknown action " + args[0]
}

var (
	helperOnce sync.Once
	helperDir  string
	helperErr  error
)

// helperBinary returns a directory holding a copy of the test binary (to
// be added to Policy.System) and the copy's path.
func helperBinary(t *testing.T) (dir, path string) {
	t.Helper()
	helperOnce.Do(func() {
		helperDir, helperErr = os.MkdirTemp("", "cordon-landlock-helper-")
		if helperErr != nil {
			return
		}
		helperDir, helperErr = filepath.EvalSymlinks(helperDir)
		if helperErr == nil {
			helperErr = os.Chmod(helperDir, 0o755)
		}
		if helperErr != nil {
			return
		}
		self, err := os.Executable()
		if err != nil {
			helperErr = err
			return
		}
		in, err := os.Open(self)
		if err != nil {
			helperErr = err
			return
		}
		defer in.Close()
		out, err := os.OpenFile(filepath.Join(helperDir, "helper"), os.O_WRONLY|os.O_CREATE, 0o755)
		if err != nil {
			helperErr = err
			return
		}
		_, helperErr = io.Copy(out, in)
		if err := out.Close(); helperErr == nil {
			helperErr = err
		}
	})
	if helperErr != nil {
		t.Fatalf("helper binary: %v", helperErr)
	}
	return helperDir, filepath.Join(helperDir, "helper")
}

// newExecutor returns an executor, skipping (or failing, when
// CORDON_REQUIRE names landlock) where Landlock is unavailable.
func newExecutor(t *testing.T, cfg landlock.Config) *landlock.Executor {
	t.Helper()
	x, err := landlock.New(cfg)
	if err != nil {
		t.Fatalf("landlock.New: %v", err)
	}
	t.Cleanup(func() { x.Close() })
	testenv.Require(t, testenv.Landlock, x.ABI() > 0, "Landlock is not available: the kernel lacks it or it is not in the lsm= boot parameter")
	return x
}
