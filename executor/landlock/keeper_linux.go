//go:build linux

package landlock

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// The keeper ends this process's commands when the process itself ends
// without ending them: killed outright (SIGKILL, the OOM killer), crashed,
// or exited with background commands still running. A landlock command
// has no PID namespace and no parent-death signal that reaches a process
// that left its tree, and a cgroup's processes are killed only by someone
// who writes its cgroup.kill. The keeper is that someone once this
// process is gone: a shell (keeperShell), started once per process when
// the first command cgroup is made, in a session of its own with its signals
// ignored, blocked reading a pipe whose only write end this process holds
// (close-on-exec: no command inherits it). At end of file it writes "1"
// to cgroup.kill of every command cgroup of this process — their names
// carry a token of this process (keeperPrefix), so a later process given
// the same pid is never touched — and removes them once empty.
//
// A command cannot end the keeper first: Landlock's signal scoping (ABI
// 6) keeps it from signalling processes outside its domain, its ptrace
// scoping from reaching the pipe through /proc, and the seccomp filter
// from changing its resource limits (prlimit64 on another process: a
// file limit of 0 would keep it from opening cgroup.kill) or leaving the
// cgroup (clone3 with CLONE_INTO_CGROUP). Below ABI 6 a command can kill
// it (the executor then already reports signals as a gap). Without cgroups (not root and no delegated cgroup v2 subtree)
// there is no keeper, and what left a command's tree outlives a killed
// process, as Describe says.

// keeperToken identifies this process's command cgroups.
var keeperToken = func() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// keeperPrefix is the name prefix of this process's command cgroups.
func keeperPrefix() string {
	return "cordon-" + strconv.Itoa(os.Getpid()) + "-" + keeperToken + "-"
}

// keeperScript is the keeper: $1 the cgroup base, $2 the name prefix.
// It first kills every cgroup with shell builtins alone: a command may
// have used up a process limit it shares with the keeper (a pids cgroup,
// systemd's TasksMax), which the kill frees only once the dead are
// reaped, and dash exits when it cannot fork. Each later round kills every cgroup still there again
// before removing it (rmdir and sleep fork): a command's process may join
// its cgroup after a kill (the sandbox helper without cgo joins after it
// started), and rmdir fails while it is there.
const keeperScript = `trap '' HUP INT TERM QUIT PIPE USR1 USR2 ALRM
while read -r _; do :; done
set -- "$1/$2"*
for d do [ -d "$d" ] && echo 1 > "$d/cgroup.kill"; done 2>/dev/null
n=0
while [ "$n" -lt 100 ]; do
	left=
	for d do
		[ -d "$d" ] || continue
		echo 1 > "$d/cgroup.kill"
		rmdir "$d" || left=1
	done 2>/dev/null
	[ -z "$left" ] && exit 0
	n=$((n + 1))
	sleep 0.1
done
exit 1`

// keeperShell is bash where there is one: when it cannot fork (a process
// limit used up) it reports the failure and goes on, where dash exits;
// /bin/sh otherwise (the first round uses builtins alone either way).
func keeperShell() string {
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash"
	}
	return "/bin/sh"
}

var (
	keeperOnce sync.Once
	// keeperW is the write end of the keeper's pipe, held (never
	// written) until this process ends.
	keeperW   *os.File
	keeperErr error
	// noKeeper turns the keeper off (tests of what it prevents).
	noKeeper bool
)

// startKeeper starts the keeper of the command cgroups under base, once
// per process; it returns why there is none.
func startKeeper(base string) error {
	keeperOnce.Do(func() {
		if noKeeper {
			keeperErr = fmt.Errorf("the keeper is turned off")
			return
		}
		r, w, err := os.Pipe()
		if err != nil {
			keeperErr = fmt.Errorf("the keeper's pipe: %w", err)
			return
		}
		cmd := exec.Command(keeperShell(), "-c", keeperScript, "cordon-keeper", base, keeperPrefix())
		cmd.Stdin = r
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		err = cmd.Start()
		r.Close()
		if err != nil {
			w.Close()
			keeperErr = fmt.Errorf("starting the keeper: %w", err)
			return
		}
		keeperW = w
		// Never waited for: it outlives this process on purpose.
		_ = cmd.Process.Release()
	})
	return keeperErr
}
