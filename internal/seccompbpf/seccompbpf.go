// Package seccompbpf builds the seccomp filters of the sandboxes that
// install one (the landlock executor's command, bwrap's --seccomp) as
// classic BPF over struct seccomp_data: a program small enough to read
// whole, built as data and checked by a BPF interpreter in the tests, so
// no C library (libseccomp) is needed at build or run time. Foreign
// architectures and x32 calls fail with ENOSYS, io_uring, keyrings and
// System V IPC with EPERM (as when the kernel disables them), denied
// socket families with EACCES (as Landlock denials do), clone3 with
// ENOSYS, and the resource limits and scheduling of another process
// with EPERM.
package seccompbpf

import (
	"encoding/binary"
	"fmt"
)

// Classic BPF opcodes used by the filter (linux/filter.h, linux/bpf_common.h).
const (
	bpfLdWAbs = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK   = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK   = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfRetK   = 0x06 // BPF_RET | BPF_K
)

// seccomp return values and the errnos the filter returns (the same on
// every Linux architecture this package supports).
const (
	retAllow = 0x7fff0000 // SECCOMP_RET_ALLOW
	retErrno = 0x00050000 // SECCOMP_RET_ERRNO | errno

	errEPERM  = 1
	errEACCES = 13
	errENOSYS = 38

	afUnix  = 1  // AF_UNIX
	afInet  = 2  // AF_INET
	afInet6 = 10 // AF_INET6

	ipprotoICMP   = 1
	ipprotoTCP    = 6
	ipprotoUDP    = 17
	ipprotoICMPv6 = 58

	prioUser      = 2 // PRIO_USER
	ioprioWhoUser = 3 // IOPRIO_WHO_USER

	x32SyscallBit = 0x40000000 // __X32_SYSCALL_BIT
)

// Offsets in struct seccomp_data { int nr; __u32 arch; __u64
// instruction_pointer; __u64 args[6]; }. args[0]'s low 32 bits come first
// on the little-endian architectures supported; socket(2)'s domain is an
// int, so the kernel ignores the high half too.
const (
	offNr    = 0
	offArch  = 4
	offArg0  = 16
	offArg1  = 24
	offArg2  = 32
	dataSize = 64
)

// archInfo holds what the filter needs to know about an architecture.
type archInfo struct {
	// audit is the AUDIT_ARCH_* value of native system calls; any other
	// value (32-bit compat calls) is denied.
	audit uint32
	// x32 is set where system call numbers with __X32_SYSCALL_BIT are
	// the x32 ABI (amd64): they are denied.
	x32 bool
	// System call numbers.
	socket, ioURingSetup, ioURingEnter, ioURingRegister uint32
	clone3, prlimit64                                   uint32
	// selfOnly take a pid as args[0] and act on another process unless
	// it is 0 (the caller): sched_setparam, sched_setscheduler,
	// sched_setaffinity, sched_setattr. setpriority and ioprio_set take
	// (which, who) and act on another process unless who is 0 and which
	// is not the user-wide one (PRIO_USER 2, IOPRIO_WHO_USER 3).
	selfOnly               []uint32
	setpriority, ioprioSet uint32
	// kernelObjects are the system calls that reach the host's kernel
	// keyrings and System V IPC: add_key, request_key, keyctl, then
	// shmget, shmat, shmctl, shmdt, semget, semop, semctl, semtimedop,
	// msgget, msgsnd, msgrcv, msgctl.
	kernelObjects []uint32
}

// archs are the architectures the filter supports, by GOARCH. Numbers
// from arch/x86/entry/syscalls/syscall_64.tbl and
// include/uapi/asm-generic/unistd.h.
var archs = map[string]archInfo{
	"amd64": {audit: 0xc000003e, x32: true, socket: 41, ioURingSetup: 425, ioURingEnter: 426, ioURingRegister: 427, clone3: 435, prlimit64: 302,
		selfOnly: []uint32{142, 144, 203, 314}, setpriority: 141, ioprioSet: 251,
		kernelObjects: []uint32{248, 249, 250, 29, 30, 31, 67, 64, 65, 66, 220, 68, 69, 70, 71}},
	"arm64": {audit: 0xc00000b7, socket: 198, ioURingSetup: 425, ioURingEnter: 426, ioURingRegister: 427, clone3: 435, prlimit64: 261,
		selfOnly: []uint32{118, 119, 122, 274}, setpriority: 140, ioprioSet: 30,
		kernelObjects: []uint32{217, 218, 219, 194, 196, 195, 197, 190, 193, 191, 192, 186, 189, 188, 187}},
}

// Insn is one classic BPF instruction (struct sock_filter).
type Insn struct {
	Code   uint16
	Jt, Jf uint8
	K      uint32
}

// Spec says what a filter denies. The zero value denies nothing (Build
// returns no program).
type Spec struct {
	// Inet denies socket(2) for every family but AF_UNIX (network none).
	Inet bool
	// Loopback denies socket(2) for every family but AF_UNIX, AF_INET and
	// AF_INET6, and for those two every protocol but the default (0),
	// TCP, UDP, ICMP and ICMPv6 (network none in a private network
	// namespace whose only interface is loopback: those stay in the
	// namespace, while AF_VSOCK would reach a hypervisor, AF_NETLINK the
	// kernel's network configuration — nf_tables in a nested user
	// namespace, host device events — and SCTP or DCCP would load kernel
	// modules). Inet wins over it.
	Loopback bool
	// Unix denies socket(2) for AF_UNIX: pathname Unix sockets that no
	// mount or Landlock rule can keep a command from connecting to;
	// socketpair(2) stays allowed.
	Unix bool
	// IOURing denies io_uring_setup, io_uring_enter and
	// io_uring_register: io_uring performs socket operations without
	// the system calls a filter sees.
	IOURing bool
	// KernelObjects denies the host's kernel keyrings (add_key,
	// request_key, keyctl) and System V IPC (shm*, sem*, msg*).
	KernelObjects bool
	// OtherProcesses denies what reaches past the command's own process
	// where Landlock does not look: clone3(2) fails with ENOSYS (C
	// libraries then use clone(2), which cannot name a cgroup:
	// CLONE_INTO_CGROUP would move a child out of the command's cgroup
	// through an O_PATH descriptor Landlock never sees); prlimit64(2),
	// sched_setparam, sched_setscheduler, sched_setaffinity and
	// sched_setattr on any process but the caller (pid 0), and
	// setpriority(2) and ioprio_set(2) on anything but the caller or its
	// process group (who 0, not user-wide), fail with EPERM: the
	// resource limits and scheduling of another process of the same user
	// (a file limit of 0, a CPU limit, SCHED_IDLE pinned to a busy CPU).
	// A program setting its own threads' scheduling by thread id gets
	// EPERM too (stricter).
	OtherProcesses bool
}

// Empty reports whether s denies nothing.
func (s Spec) Empty() bool {
	return !s.Inet && !s.Loopback && !s.Unix && !s.IOURing && !s.KernelObjects && !s.OtherProcesses
}

// Supported reports whether Build knows the system calls of arch (a
// GOARCH).
func Supported(arch string) bool { _, ok := archs[arch]; return ok }

// Bytes returns prog as the kernel's struct sock_filter array in this
// machine's byte order (little-endian on every supported architecture):
// what bwrap's --seccomp reads from its descriptor.
func Bytes(prog []Insn) []byte {
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = binary.LittleEndian.AppendUint16(out, in.Code)
		out = append(out, in.Jt, in.Jf)
		out = binary.LittleEndian.AppendUint32(out, in.K)
	}
	return out
}

// assembler resolves forward jumps to labels.
type assembler struct {
	prog   []Insn
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string
}

func (a *assembler) stmt(code uint16, k uint32) { a.prog = append(a.prog, Insn{Code: code, K: k}) }

// jump appends a conditional jump to label jt when true, jf when false
// ("" means the next instruction).
func (a *assembler) jump(code uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, fixup{at: len(a.prog), jt: jt, jf: jf})
	a.prog = append(a.prog, Insn{Code: code, K: k})
}

func (a *assembler) label(name string) { a.labels[name] = len(a.prog) }

func (a *assembler) ret(k uint32) { a.stmt(bpfRetK, k) }

func (a *assembler) assemble() ([]Insn, error) {
	for _, f := range a.fixups {
		for _, t := range []struct {
			label string
			off   *uint8
		}{{f.jt, &a.prog[f.at].Jt}, {f.jf, &a.prog[f.at].Jf}} {
			if t.label == "" {
				continue
			}
			to, ok := a.labels[t.label]
			d := to - f.at - 1
			if !ok || d < 0 || d > 255 {
				return nil, fmt.Errorf("seccomp filter: bad jump to %q", t.label)
			}
			*t.off = uint8(d)
		}
	}
	return a.prog, nil
}

// Build returns the filter program for spec on arch (a GOARCH), or nil
// when spec denies nothing.
func Build(spec Spec, arch string) ([]Insn, error) {
	if spec.Empty() {
		return nil, nil
	}
	ai, ok := archs[arch]
	if !ok {
		return nil, fmt.Errorf("seccomp filter: unsupported architecture %s", arch)
	}
	a := &assembler{labels: map[string]int{}}
	a.stmt(bpfLdWAbs, offArch)
	a.jump(bpfJeqK, ai.audit, "native", "")
	a.ret(retErrno | errENOSYS)
	a.label("native")
	a.stmt(bpfLdWAbs, offNr)
	if ai.x32 {
		a.jump(bpfJgeK, x32SyscallBit, "enosys", "")
	}
	if spec.IOURing {
		for _, nr := range []uint32{ai.ioURingSetup, ai.ioURingEnter, ai.ioURingRegister} {
			a.jump(bpfJeqK, nr, "eperm", "")
		}
	}
	if spec.KernelObjects {
		for _, nr := range ai.kernelObjects {
			a.jump(bpfJeqK, nr, "eperm", "")
		}
	}
	if spec.OtherProcesses {
		a.jump(bpfJeqK, ai.clone3, "enosys", "")
		a.jump(bpfJeqK, ai.prlimit64, "self", "")
		for _, nr := range ai.selfOnly {
			a.jump(bpfJeqK, nr, "self", "")
		}
		a.jump(bpfJeqK, ai.setpriority, "setpriority", "")
		a.jump(bpfJeqK, ai.ioprioSet, "ioprio", "")
	}
	if spec.Inet || spec.Loopback || spec.Unix {
		a.jump(bpfJeqK, ai.socket, "socket", "")
	}
	a.ret(retAllow)
	if spec.OtherProcesses {
		// (pid, ...): only pid 0, the caller (pid_t is an int: the low
		// half of args[0]).
		a.label("self")
		a.stmt(bpfLdWAbs, offArg0)
		a.jump(bpfJeqK, 0, "allow", "eperm")
		// (which, who, ...): who 0 (the caller, its group), and which
		// not the whole user.
		for _, w := range []struct {
			label string
			user  uint32
		}{{"setpriority", prioUser}, {"ioprio", ioprioWhoUser}} {
			a.label(w.label)
			a.stmt(bpfLdWAbs, offArg1)
			a.jump(bpfJeqK, 0, "", "eperm")
			a.stmt(bpfLdWAbs, offArg0)
			a.jump(bpfJeqK, w.user, "eperm", "allow")
		}
	}
	if spec.Inet || spec.Loopback || spec.Unix {
		a.label("socket")
		a.stmt(bpfLdWAbs, offArg0)
		switch {
		case spec.Inet || spec.Loopback:
			// The families allowed; every other one is refused.
			if !spec.Unix {
				a.jump(bpfJeqK, afUnix, "allow", "")
			}
			if !spec.Inet {
				a.jump(bpfJeqK, afInet, "inetproto", "")
				a.jump(bpfJeqK, afInet6, "inetproto", "")
			}
			a.ret(retErrno | errEACCES)
			if !spec.Inet {
				// (family, type, protocol): the protocols allowed.
				a.label("inetproto")
				a.stmt(bpfLdWAbs, offArg2)
				for _, proto := range []uint32{0, ipprotoICMP, ipprotoTCP, ipprotoUDP, ipprotoICMPv6} {
					a.jump(bpfJeqK, proto, "allow", "")
				}
				a.ret(retErrno | errEACCES)
			}
		default:
			a.jump(bpfJeqK, afUnix, "eacces", "")
			a.ret(retAllow)
			a.label("eacces")
			a.ret(retErrno | errEACCES)
		}
	}
	a.label("allow")
	a.ret(retAllow)
	a.label("eperm")
	a.ret(retErrno | errEPERM)
	a.label("enosys")
	a.ret(retErrno | errENOSYS)
	return a.assemble()
}
