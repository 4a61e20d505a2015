//go:build linux

package landlock

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// A landlock command has no PID namespace, so a process that leaves its
// tree (setsid and a double fork) would outlive it: keep its grants, and
// write a hook after the protected-path guard's last look. Where cgroup v2
// lets this process make child cgroups (root; or a delegated subtree),
// each command starts in a cgroup of its own — the child writes "0" to
// its cgroup.procs before anything else — and when the command ends the
// executor writes "1" to cgroup.kill (Linux 5.14), waits until
// cgroup.events says the cgroup is empty, and removes it, before the
// guard runs. A sandboxed process cannot leave the cgroup: moving a
// process needs write access to cgroup.procs files that Landlock does not
// grant (and the mount namespace makes read-only), and starting a child
// in another cgroup (clone3 with CLONE_INTO_CGROUP, through an O_PATH
// descriptor Landlock never sees, checked by the kernel against the
// cgroup.procs file's mode only) is refused by the seccomp filter, which
// fails clone3 with ENOSYS (TestCommandCannotLeaveCgroup).

// cgroupBase is the cgroup v2 directory of this process, under which
// command cgroups are made; "" and a reason when there is none usable.
var cgroupBase = sync.OnceValues(func() (string, string) {
	base, err := ownCgroup()
	if err != nil {
		return "", err.Error()
	}
	// Migrating a process from base into a child needs write access to
	// both cgroup.procs files; try it with a probe cgroup.
	probe := filepath.Join(base, fmt.Sprintf("cordon-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Sprintf("cannot make a cgroup under %s: %v", base, err)
	}
	defer os.Remove(probe)
	if _, err := os.Stat(filepath.Join(probe, "cgroup.kill")); err != nil {
		return "", fmt.Sprintf("cgroup v2 has no cgroup.kill (Linux ≥ 5.14): %v", err)
	}
	for _, f := range []string{filepath.Join(base, "cgroup.procs"), filepath.Join(probe, "cgroup.procs")} {
		fd, err := unix.Open(f, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", fmt.Sprintf("cannot move processes between cgroups under %s: %s: %v", base, f, err)
		}
		unix.Close(fd)
	}
	return base, ""
})

// ownCgroup returns the directory of this process's cgroup v2.
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	rel := ""
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			rel, found = p, true
		}
	}
	if !found {
		return "", errors.New("no cgroup v2 hierarchy (cgroup v1 only)")
	}
	mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup2"))
	if err != nil || len(mounts) == 0 {
		return "", errors.New("cgroup v2 is not mounted")
	}
	m := mounts[0]
	if m.Root != "/" {
		// A cgroup namespace or a bind of a subtree: paths are relative to
		// its root.
		rel = strings.TrimPrefix(rel, m.Root)
	}
	dir := filepath.Join(m.Mountpoint, rel)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("this process's cgroup %s is not visible at %s", rel, dir)
	}
	return dir, nil
}

var cgroupSeq atomic.Uint64

// commandCgroup is the cgroup of one command.
type commandCgroup struct{ dir string }

// keeperWarn logs a keeper that could not start, once.
var keeperWarn sync.Once

// newCommandCgroup makes an empty cgroup for one command under base, and
// starts the keeper of this process's command cgroups the first time.
// Its name carries this process's keeper token and random bytes besides
// the pid and a sequence number: a
// cgroup left behind by a process that was killed outright (it cannot
// remove it) keeps its name, and a later process given the same pid would
// otherwise collide with it and fail every command.
func newCommandCgroup(base string) (*commandCgroup, error) {
	if err := startKeeper(base); err != nil {
		keeperWarn.Do(func() {
			slog.Warn("landlock: no keeper: what is left of running commands outlives this process if it is killed", "err", err)
		})
	}
	var err error
	for range 4 {
		var rnd [6]byte
		if _, err = rand.Read(rnd[:]); err != nil {
			return nil, fmt.Errorf("making the command's cgroup: %w", err)
		}
		dir := filepath.Join(base, keeperPrefix()+strconv.FormatUint(cgroupSeq.Add(1), 10)+"-"+hex.EncodeToString(rnd[:]))
		if err = os.Mkdir(dir, 0o755); err == nil {
			return &commandCgroup{dir: dir}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	return nil, fmt.Errorf("making the command's cgroup: %w", err)
}

// procs is the file the child writes "0" to, to join.
func (c *commandCgroup) procs() string { return filepath.Join(c.dir, "cgroup.procs") }

// killTimeout bounds the wait for a killed cgroup to empty.
const killTimeout = 10 * time.Second

// end kills every process left in the cgroup, waits until it is empty and
// removes it. It returns the number of processes that were still running.
func (c *commandCgroup) end() (int, error) {
	left := 0
	if b, err := os.ReadFile(c.procs()); err == nil {
		left = bytes.Count(b, []byte("\n"))
	}
	if left > 0 {
		if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
			return left, fmt.Errorf("killing what is left of the command (%d processes): %w", left, err)
		}
	}
	deadline := time.Now().Add(killTimeout)
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 20*time.Millisecond) {
		err := os.Remove(c.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return left, nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return left, fmt.Errorf("removing the command's cgroup: %w", err)
		}
		time.Sleep(wait)
	}
}
