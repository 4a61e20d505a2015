//go:build linux

package landlock

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// helperArgs is the helper's command line:
//
//	cordon-landlock-sandbox RULESET_FD FLAGS FILTER NENV ENV... PATH ARG0 ARGS...
//
// RULESET_FD is -1 without a Landlock layer; FLAGS are
// landlock_restrict_self's; FILTER is the seccomp program in hex (8 bytes
// an instruction, host byte order; "-" for none); ENV is the command's
// complete environment (the helper itself runs with an empty one, so
// nothing in it — LD_PRELOAD, GODEBUG — acts before the restrictions).
func helperArgs(rulesetFD int, flags uint32, filter string, env []string, path string, argv []string) []string {
	args := make([]string, 0, 5+len(env)+1+len(argv))
	args = append(args, helperArg0, strconv.Itoa(rulesetFD), strconv.FormatUint(uint64(flags), 10), filter, strconv.Itoa(len(env)))
	args = append(args, env...)
	args = append(args, path)
	return append(args, argv...)
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

// helperCommand is a decoded helper command line.
type helperCommand struct {
	rulesetFD int
	flags     uint32
	filter    []unix.SockFilter
	env       []string
	path      string
	argv      []string
}

func parseHelperArgs(args []string) (*helperCommand, error) {
	if len(args) < 6 || args[0] != helperArg0 {
		return nil, fmt.Errorf("usage: %s RULESET_FD FLAGS FILTER NENV ENV... PATH ARG0 ARGS...", helperArg0)
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
	n, err := strconv.Atoi(args[4])
	rest := args[5:]
	if err != nil || n < 0 || n > len(rest)-2 {
		return nil, fmt.Errorf("bad environment count %q", args[4])
	}
	c.env = rest[:n:n]
	c.path = rest[n]
	c.argv = rest[n+1:]
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
	err := helperExec(os.Args)
	fmt.Fprintf(os.Stderr, "cordon: landlock sandbox: %v\n", err)
	os.Exit(126)
}

func helperExec(args []string) error {
	c, err := parseHelperArgs(args)
	if err != nil {
		return err
	}
	if err := restrictThread(c.rulesetFD, c.flags, c.filter); err != nil {
		return err
	}
	if c.rulesetFD >= 0 {
		unix.Close(c.rulesetFD)
	}
	err = unix.Exec(c.path, c.argv, c.env)
	return &os.PathError{Op: "exec", Path: c.path, Err: err}
}
