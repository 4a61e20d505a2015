package landlock

import "fmt"

// The seccomp filter is built here as data (classic BPF over struct
// seccomp_data) and installed by the sandbox helper (helper_linux.go); seccomp_test.go runs it in a small BPF interpreter.

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

	afUnix = 1 // AF_UNIX

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
	"amd64": {audit: 0xc000003e, x32: true, socket: 41, ioURingSetup: 425, ioURingEnter: 426, ioURingRegister: 427,
		kernelObjects: []uint32{248, 249, 250, 29, 30, 31, 67, 64, 65, 66, 220, 68, 69, 70, 71}},
	"arm64": {audit: 0xc00000b7, socket: 198, ioURingSetup: 425, ioURingEnter: 426, ioURingRegister: 427,
		kernelObjects: []uint32{217, 218, 219, 194, 196, 195, 197, 190, 193, 191, 192, 186, 189, 188, 187}},
}

// insn is one classic BPF instruction (struct sock_filter).
type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// assembler resolves forward jumps to labels.
type assembler struct {
	prog   []insn
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string
}

func (a *assembler) stmt(code uint16, k uint32) { a.prog = append(a.prog, insn{code: code, k: k}) }

// jump appends a conditional jump to label jt when true, jf when false
// ("" means the next instruction).
func (a *assembler) jump(code uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, fixup{at: len(a.prog), jt: jt, jf: jf})
	a.prog = append(a.prog, insn{code: code, k: k})
}

func (a *assembler) label(name string) { a.labels[name] = len(a.prog) }

func (a *assembler) ret(k uint32) { a.stmt(bpfRetK, k) }

func (a *assembler) assemble() ([]insn, error) {
	for _, f := range a.fixups {
		for _, t := range []struct {
			label string
			off   *uint8
		}{{f.jt, &a.prog[f.at].jt}, {f.jf, &a.prog[f.at].jf}} {
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

// buildFilter returns the filter program for spec on arch, or nil when
// spec denies nothing. Foreign-architecture and x32 system calls fail
// with ENOSYS, io_uring, keyrings and System V IPC with EPERM (as when
// the kernel disables them),
// denied sockets with EACCES (as Landlock denials do).
func buildFilter(spec filterSpec, arch string) ([]insn, error) {
	if spec.empty() {
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
	if spec.ioURing {
		for _, nr := range []uint32{ai.ioURingSetup, ai.ioURingEnter, ai.ioURingRegister} {
			a.jump(bpfJeqK, nr, "eperm", "")
		}
	}
	if spec.kernelObjects {
		for _, nr := range ai.kernelObjects {
			a.jump(bpfJeqK, nr, "eperm", "")
		}
	}
	if spec.inet || spec.unix {
		a.jump(bpfJeqK, ai.socket, "socket", "")
	}
	a.ret(retAllow)
	if spec.inet || spec.unix {
		a.label("socket")
		a.stmt(bpfLdWAbs, offArg0)
		switch {
		case spec.inet && spec.unix:
			a.ret(retErrno | errEACCES)
		case spec.inet:
			a.jump(bpfJeqK, afUnix, "allow", "")
			a.ret(retErrno | errEACCES)
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
