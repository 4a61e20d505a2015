//go:build linux

package docker

import (
	"encoding/json"
	"fmt"
	"slices"
	"syscall"

	"github.com/containers/common/pkg/seccomp"
	"golang.org/x/sys/unix"
)

// seccompProfile returns the containers/common default seccomp profile in
// the JSON form the Docker API's SecurityOpt "seccomp=<json>" takes, and a
// sentence describing it for Describe. Unless nestedUserns, the profile
// also refuses to create namespaces (see Config.NestedUserNamespaces);
// with noUnix it refuses socket(AF_UNIX) too (see unixRules).
func seccompProfile(nestedUserns, noUnix bool) (string, string, error) {
	p, err := convertSeccomp(seccomp.DefaultProfile(), !nestedUserns, noUnix)
	if err != nil {
		return "", "", err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", "", fmt.Errorf("docker executor: encoding the seccomp profile: %w", err)
	}
	desc := "containers/common v0.64.2 default profile (pkg/seccomp), sent as SecurityOpt seccomp=<json>, with ptrace, process_vm_readv, process_vm_writev and pidfd_getfd refused (EPERM)"
	if !nestedUserns {
		desc += "; namespace creation refused: unshare fails with EPERM, clone with CLONE_NEW* flags and clone3 with ENOSYS (libc falls back from clone3 to clone)"
	}
	return string(b), desc, nil
}

// engineSeccomp is a seccomp profile in the Docker Engine's JSON format
// (moby profiles/seccomp), with only the fields every engine since API
// 1.41 (Docker 20.10) reads: error numbers as numbers, no Errno names,
// no listener, no flags.
type engineSeccomp struct {
	DefaultAction   string          `json:"defaultAction"`
	DefaultErrnoRet *uint           `json:"defaultErrnoRet,omitempty"`
	ArchMap         []engineArch    `json:"archMap,omitempty"`
	Syscalls        []engineSyscall `json:"syscalls"`
}

type engineArch struct {
	Arch      string   `json:"architecture"`
	SubArches []string `json:"subArchitectures"`
}

type engineSyscall struct {
	Names    []string     `json:"names"`
	Action   string       `json:"action"`
	Args     []engineArg  `json:"args"`
	ErrnoRet *uint        `json:"errnoRet,omitempty"`
	Includes engineFilter `json:"includes"`
	Excludes engineFilter `json:"excludes"`
}

type engineFilter struct {
	Caps   []string `json:"caps,omitempty"`
	Arches []string `json:"arches,omitempty"`
}

type engineArg struct {
	Index    uint   `json:"index"`
	Value    uint64 `json:"value"`
	ValueTwo uint64 `json:"valueTwo"`
	Op       string `json:"op"`
}

// cloneNamespaceFlags are the clone(2) flags that create namespaces:
// CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
// CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET (the mask moby's default
// profile uses).
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// tracing are the system calls that reach into another process of the
// same user: tracing it, reading or writing its memory, taking its
// descriptors. The profile refuses them (EPERM) whatever the
// containers/common default says: the session's commands share one
// container with its init and the command runner, and a command that
// could trace one of those could run code outside its own tree, in a
// process that outlives it (see sweep). /proc/PID/mem, the other way to
// write another process's memory, is read-only (Config's ReadonlyPaths).
var tracing = []string{"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"}

// convertSeccomp converts a containers/common profile to the engine's
// format. noNamespaces replaces the unconditional allow rules of unshare,
// clone and clone3 by rules that refuse namespace creation; noUnix
// replaces every rule of socket and socketcall by unixRules.
func convertSeccomp(p *seccomp.Seccomp, noNamespaces, noUnix bool) (*engineSeccomp, error) {
	errno := func(name string, ret *uint) (*uint, error) {
		if ret != nil {
			v := *ret
			return &v, nil
		}
		if name == "" {
			return nil, nil
		}
		for n := syscall.Errno(1); n < 4096; n++ {
			if unix.ErrnoName(n) == name {
				v := uint(n)
				return &v, nil
			}
		}
		return nil, fmt.Errorf("docker executor: seccomp profile: unknown errno %q", name)
	}
	out := &engineSeccomp{DefaultAction: string(p.DefaultAction)}
	var err error
	if out.DefaultErrnoRet, err = errno(p.DefaultErrno, p.DefaultErrnoRet); err != nil {
		return nil, err
	}
	if len(p.Flags) > 0 || p.ListenerPath != "" {
		return nil, fmt.Errorf("docker executor: seccomp profile: flags %v and listeners are not supported by the engine API", p.Flags)
	}
	if len(p.ArchMap) == 0 && len(p.Architectures) > 0 {
		for _, a := range p.Architectures {
			out.ArchMap = append(out.ArchMap, engineArch{Arch: string(a), SubArches: []string{}})
		}
	}
	for _, a := range p.ArchMap {
		ea := engineArch{Arch: string(a.Arch), SubArches: []string{}}
		for _, s := range a.SubArches {
			ea.SubArches = append(ea.SubArches, string(s))
		}
		out.ArchMap = append(out.ArchMap, ea)
	}
	namespaced := []string{"unshare", "clone", "clone3"}
	for _, s := range p.Syscalls {
		names := slices.Clone(s.Names)
		if s.Name != "" {
			names = append(names, s.Name)
		}
		unconditional := s.Action == seccomp.ActAllow && len(s.Args) == 0 &&
			len(s.Includes.Caps)+len(s.Includes.Arches)+len(s.Excludes.Caps)+len(s.Excludes.Arches) == 0
		if noNamespaces && unconditional {
			names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(namespaced, n) })
		}
		if s.Action == seccomp.ActAllow {
			names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(tracing, n) })
		}
		if noUnix {
			names = slices.DeleteFunc(names, func(n string) bool { return n == "socket" || n == "socketcall" })
		}
		if len(names) == 0 {
			continue
		}
		es := engineSyscall{Names: names, Action: string(s.Action), Args: []engineArg{},
			Includes: engineFilter{Caps: s.Includes.Caps, Arches: s.Includes.Arches},
			Excludes: engineFilter{Caps: s.Excludes.Caps, Arches: s.Excludes.Arches}}
		if es.ErrnoRet, err = errno(s.Errno, s.ErrnoRet); err != nil {
			return nil, err
		}
		for _, a := range s.Args {
			es.Args = append(es.Args, engineArg{Index: a.Index, Value: a.Value, ValueTwo: a.ValueTwo, Op: string(a.Op)})
		}
		out.Syscalls = append(out.Syscalls, es)
	}
	eperm := uint(unix.EPERM)
	out.Syscalls = append(out.Syscalls, engineSyscall{Names: tracing, Action: string(seccomp.ActErrno), Args: []engineArg{}, ErrnoRet: &eperm})
	if noUnix {
		out.Syscalls = append(out.Syscalls, unixRules()...)
	}
	if noNamespaces {
		enosys := uint(unix.ENOSYS)
		s390 := []string{"s390", "s390x"}
		out.Syscalls = append(out.Syscalls,
			// clone(flags, ...): allowed without namespace flags. The
			// flags are the first argument, the second on s390.
			engineSyscall{Names: []string{"clone"}, Action: string(seccomp.ActAllow),
				Args:     []engineArg{{Index: 0, Value: cloneNamespaceFlags, ValueTwo: 0, Op: string(seccomp.OpMaskedEqual)}},
				Excludes: engineFilter{Arches: s390}},
			engineSyscall{Names: []string{"clone"}, Action: string(seccomp.ActAllow),
				Args:     []engineArg{{Index: 1, Value: cloneNamespaceFlags, ValueTwo: 0, Op: string(seccomp.OpMaskedEqual)}},
				Includes: engineFilter{Arches: s390}},
			// clone3 passes its flags in a struct seccomp cannot read:
			// ENOSYS makes libc fall back to clone.
			engineSyscall{Names: []string{"clone3"}, Action: string(seccomp.ActErrno), Args: []engineArg{}, ErrnoRet: &enosys},
			engineSyscall{Names: []string{"unshare"}, Action: string(seccomp.ActErrno), Args: []engineArg{}, ErrnoRet: &eperm},
		)
	}
	return out, nil
}

// unixRules are the socket(2) rules of a profile that refuses AF_UNIX:
// the domain (the first argument, an int: its low 32 bits, as the kernel
// reads it) must be one of 2..63 but AF_NETLINK, or AF_NETLINK with a
// protocol other than NETLINK_AUDIT (as the default profile allows
// without CAP_AUDIT_WRITE, which the container does not have). Every
// other domain, AF_UNIX among them, fails with the profile's default
// error (EPERM). The allowed domains are aligned blocks tested with
// masked equality: one rule cannot compare an argument twice, rules are
// alternatives, and the engine's libseccomp refuses a rule of another
// action beside them (EEXIST). socketcall(2), the 32-bit multiplexer
// whose arguments a filter cannot read, is not allowed at all.
func unixRules() []engineSyscall {
	allow := func(args ...engineArg) engineSyscall {
		return engineSyscall{Names: []string{"socket"}, Action: string(seccomp.ActAllow), Args: args}
	}
	var rules []engineSyscall
	for _, b := range []struct{ lo, size uint64 }{{2, 2}, {4, 4}, {8, 8}, {17, 1}, {18, 2}, {20, 4}, {24, 8}, {32, 32}} {
		rules = append(rules, allow(engineArg{Index: 0, Value: 0xffff_ffff &^ (b.size - 1), ValueTwo: b.lo, Op: string(seccomp.OpMaskedEqual)}))
	}
	return append(rules, allow(
		engineArg{Index: 0, Value: 0xffff_ffff, ValueTwo: unix.AF_NETLINK, Op: string(seccomp.OpMaskedEqual)},
		engineArg{Index: 2, Value: unix.NETLINK_AUDIT, Op: string(seccomp.OpNotEqual)}))
}
