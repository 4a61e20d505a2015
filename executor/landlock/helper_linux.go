//go:build linux

package landlock

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/cordon-sandbox/cordon/internal/netns"
	"github.com/cordon-sandbox/cordon/policyderive"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// helperArgs is the helper's command line:
//
//	cordon-landlock-sandbox RULESET_FD FLAGS FILTER MOUNTS CGROUP ENV_FD STATUS_FD PATH ARG0 ARGS...
//
// MOUNTS is "-", or the mount plan in hex (encodeMounts): the helper
// then makes its mount namespace. CGROUP is "-", or the cgroup.procs file
// of the command's cgroup, which the helper joins first of all.
// RULESET_FD is -1 without a Landlock layer; FLAGS are
// landlock_restrict_self's; FILTER is the seccomp program in hex (8 bytes
// an instruction, host byte order; "-" for none); ENV_FD is a descriptor
// (a memfd, see envFile) holding the command's complete environment,
// each entry ended by a NUL. The environment is not on the command line,
// which every process may read in /proc/PID/cmdline, and the helper itself
// runs with an empty one, so nothing in it (LD_PRELOAD, GODEBUG) acts
// before the restrictions. STATUS_FD is the write end of a pipe: the
// helper writes "ERRNO MESSAGE" there when it fails, and the exec of the
// command closes it (see readStatus).
func helperArgs(rulesetFD int, flags uint32, filter, mounts, cgroup string, netFD, envFD, statusFD int, path string, argv []string) []string {
	args := make([]string, 0, 10+len(argv))
	nf := "-"
	if netFD >= 0 {
		nf = strconv.Itoa(netFD)
	}
	args = append(args, helperArg0, strconv.Itoa(rulesetFD), strconv.FormatUint(uint64(flags), 10), filter, mounts, cgroup, nf,
		strconv.Itoa(envFD), strconv.Itoa(statusFD), path)
	return append(args, argv...)
}

// readStatus reads what the helper reported on its status pipe (r, whose
// write end the caller has closed): nothing once it executed the command,
// else a *HelperError.
func readStatus(r io.Reader) error {
	b, _ := io.ReadAll(io.LimitReader(r, 4096))
	if len(b) == 0 {
		return nil
	}
	n, msg, _ := strings.Cut(string(b), " ")
	errno, _ := strconv.Atoi(n)
	return &HelperError{Errno: syscall.Errno(errno), Message: msg}
}

// envFile returns a sealed, close-on-exec memfd holding env, each entry
// ended by a NUL, positioned at its start.
func envFile(env []string) (*os.File, error) {
	fd, err := unix.MemfdCreate("cordon-env", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "cordon-env")
	var b []byte
	for _, kv := range env {
		b = append(append(b, kv...), 0)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the environment: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		f.Close()
		return nil, fmt.Errorf("sealing the environment: %w", err)
	}
	return f, nil
}

// readEnv reads the environment helperArgs' ENV_FD holds, and closes it.
func readEnv(fd int) ([]string, error) {
	f := os.NewFile(uintptr(fd), "cordon-env")
	if f == nil {
		return nil, fmt.Errorf("bad environment descriptor %d", fd)
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("reading the environment: %w", err)
	}
	if len(b) == 0 {
		return []string{}, nil
	}
	if b[len(b)-1] != 0 {
		return nil, fmt.Errorf("malformed environment")
	}
	return strings.Split(string(b[:len(b)-1]), "\x00"), nil
}

// encodeFilter returns the seccomp program in helperArgs' FILTER form.
func encodeFilter(prog []unix.SockFilter) string {
	if len(prog) == 0 {
		return "-"
	}
	b := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		b = binary.NativeEndian.AppendUint16(b, in.Code)
		b = append(b, in.Jt, in.Jf)
		b = binary.NativeEndian.AppendUint32(b, in.K)
	}
	return hex.EncodeToString(b)
}

// decodeFilter is encodeFilter's inverse.
func decodeFilter(s string) ([]unix.SockFilter, error) {
	if s == "-" {
		return nil, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b)%8 != 0 || len(b) == 0 || len(b)/8 > 4096 {
		return nil, fmt.Errorf("malformed seccomp program %q", s)
	}
	prog := make([]unix.SockFilter, len(b)/8)
	for i := range prog {
		p := b[8*i:]
		prog[i] = unix.SockFilter{Code: binary.NativeEndian.Uint16(p), Jt: p[2], Jf: p[3], K: binary.NativeEndian.Uint32(p[4:])}
	}
	return prog, nil
}

// encodeMounts returns the mount plan in helperArgs' MOUNTS form: hex of
// NUL-terminated fields, "w" PATH for a writable grant and "r" FLAGS PATH
// for a read-only remount; "-" for none.
func encodeMounts(mp *mountPlan) string {
	if mp == nil {
		return "-"
	}
	var b []byte
	for _, w := range mp.writable {
		b = append(append(append(b, "w\x00"...), w...), 0)
	}
	for _, m := range mp.masks {
		b = append(append(append(b, "k\x00"...), m...), 0)
	}
	for i, p := range mp.readonly {
		b = append(append(append(append(b, "r\x00"...), strconv.FormatUint(uint64(mp.flags[i]), 10)...), 0), p...)
		b = append(b, 0)
	}
	return "m" + hex.EncodeToString(b)
}

// decodeMounts is encodeMounts' inverse.
func decodeMounts(s string) (*mountPlan, error) {
	if s == "-" {
		return nil, nil
	}
	b, err := hex.DecodeString(strings.TrimPrefix(s, "m"))
	if err != nil || !strings.HasPrefix(s, "m") {
		return nil, fmt.Errorf("malformed mount plan %q", s)
	}
	f := strings.Split(string(b), "\x00")
	if len(f) > 0 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	mp := &mountPlan{}
	for i := 0; i < len(f); {
		switch {
		case f[i] == "w" && i+1 < len(f):
			mp.writable = append(mp.writable, f[i+1])
			i += 2
		case f[i] == "k" && i+1 < len(f):
			mp.masks = append(mp.masks, f[i+1])
			i += 2
		case f[i] == "r" && i+2 < len(f):
			fl, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("malformed mount plan: flags %q", f[i+1])
			}
			mp.readonly = append(mp.readonly, f[i+2])
			mp.flags = append(mp.flags, uintptr(fl))
			i += 3
		default:
			return nil, fmt.Errorf("malformed mount plan at field %d", i)
		}
	}
	return mp, nil
}

// helperCommand is a decoded helper command line.
type helperCommand struct {
	rulesetFD int
	flags     uint32
	filter    []unix.SockFilter
	mounts    *mountPlan
	cgroup    string
	// netFD is the socket over which the helper hands the proxy listener
	// it made in its own network namespace (-1: none).
	netFD    int
	envFD    int
	statusFD int
	path     string
	argv     []string
}

func parseHelperArgs(args []string) (*helperCommand, error) {
	if len(args) < 11 || args[0] != helperArg0 {
		return nil, fmt.Errorf("usage: %s RULESET_FD FLAGS FILTER MOUNTS CGROUP NET_FD ENV_FD STATUS_FD PATH ARG0 ARGS...", helperArg0)
	}
	c := &helperCommand{}
	fd, err := strconv.Atoi(args[1])
	if err != nil || fd < -1 {
		return nil, fmt.Errorf("bad ruleset descriptor %q", args[1])
	}
	c.rulesetFD = fd
	flags, err := strconv.ParseUint(args[2], 10, 32)
	if err != nil {
		return nil, fmt.Errorf("bad restrict flags %q", args[2])
	}
	c.flags = uint32(flags)
	if c.filter, err = decodeFilter(args[3]); err != nil {
		return nil, err
	}
	if c.mounts, err = decodeMounts(args[4]); err != nil {
		return nil, err
	}
	if args[5] != "-" {
		if !filepath.IsAbs(args[5]) || filepath.Base(args[5]) != "cgroup.procs" {
			return nil, fmt.Errorf("bad cgroup %q", args[5])
		}
		c.cgroup = args[5]
	}
	c.netFD = -1
	if args[6] != "-" {
		if c.netFD, err = strconv.Atoi(args[6]); err != nil || c.netFD < 3 {
			return nil, fmt.Errorf("bad network handoff descriptor %q", args[6])
		}
	}
	if c.envFD, err = strconv.Atoi(args[7]); err != nil || c.envFD < 3 {
		return nil, fmt.Errorf("bad environment descriptor %q", args[7])
	}
	if c.statusFD, err = strconv.Atoi(args[8]); err != nil || c.statusFD < 3 || c.statusFD == c.envFD || c.statusFD == c.netFD {
		return nil, fmt.Errorf("bad status descriptor %q", args[8])
	}
	c.path = args[9]
	c.argv = args[10:]
	return c, nil
}

// helperMain runs the helper when this process is one, and never returns
// then.
func helperMain() {
	if len(os.Args) == 0 || os.Args[0] != helperArg0 {
		return
	}
	// Every restriction below is per thread; the exec at the end replaces
	// the process with this thread alone, so nothing unrestricted survives.
	runtime.LockOSThread()
	c, err := parseHelperArgs(os.Args)
	if err == nil {
		// The status pipe must not reach the command: the exec closes it,
		// which tells the executor the command started.
		unix.CloseOnExec(c.statusFD)
		err = helperExec(c)
		var errno syscall.Errno
		errors.As(err, &errno)
		fmt.Fprintf(os.NewFile(uintptr(c.statusFD), "status"), "%d %v", int(errno), err)
	}
	fmt.Fprintf(os.Stderr, "cordon: landlock sandbox: %v\n", err)
	os.Exit(126)
}

func helperExec(c *helperCommand) error {
	if c.cgroup != "" {
		// Into the command's own cgroup first (cgroup_linux.go).
		if err := os.WriteFile(c.cgroup, []byte("0"), 0); err != nil {
			return fmt.Errorf("joining the command's cgroup: %w", err)
		}
	}
	env, err := readEnv(c.envFD)
	if err != nil {
		return err
	}
	if c.mounts != nil {
		// The working directory was entered before the namespace: enter
		// it again, on the new mounts.
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if err := c.mounts.apply(); err != nil {
			return err
		}
		if err := unix.Chdir(wd); err != nil {
			return &os.PathError{Op: "chdir", Path: wd, Err: err}
		}
	}
	if c.netFD >= 0 {
		// Started in a network namespace of its own (userNSStart): lo
		// up, the proxy's listener handed to the executor.
		if err := handOverListener(c.netFD); err != nil {
			return err
		}
	}
	// Nothing but the standard descriptors reaches the command, even when
	// the helper was started without the launcher (in a user namespace,
	// by os.StartProcess, which passes on descriptors opened without
	// O_CLOEXEC): the ruleset is used before the exec, the status pipe is
	// already close-on-exec.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil && err != unix.ENOSYS && err != unix.EINVAL {
		return fmt.Errorf("close_range: %w", err)
	}
	if err := restrictThread(c.rulesetFD, c.flags, c.filter); err != nil {
		return err
	}
	if c.rulesetFD >= 0 {
		unix.Close(c.rulesetFD)
	}
	err = unix.Exec(c.path, c.argv, env)
	return &os.PathError{Op: "exec", Path: c.path, Err: err}
}

// handOverListener brings lo up in the helper's network namespace,
// listens on 127.0.0.1:policyderive.ProxyPort and sends the listener over
// fd (SCM_RIGHTS); the executor serves its proxy on it.
func handOverListener(fd int) error {
	if err := netns.LoopbackUp(); err != nil {
		return fmt.Errorf("bringing up lo in the command's network namespace: %w", err)
	}
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("listening for the allow-list proxy: %w", err)
	}
	defer unix.Close(l)
	sa := &unix.SockaddrInet4{Port: policyderive.ProxyPort, Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(l, sa); err != nil {
		return fmt.Errorf("listening for the allow-list proxy: %w", err)
	}
	if err := unix.Listen(l, 128); err != nil {
		return fmt.Errorf("listening for the allow-list proxy: %w", err)
	}
	if err := unix.Sendmsg(fd, []byte{0}, unix.UnixRights(l), nil, unix.MSG_NOSIGNAL); err != nil {
		return fmt.Errorf("handing the proxy's listener to the executor: %w", err)
	}
	return unix.Close(fd)
}
