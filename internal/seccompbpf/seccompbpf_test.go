package seccompbpf

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call is one system call as the filter sees it (struct seccomp_data).
type call struct {
	arch             uint32
	nr               uint32
	arg0, arg1, arg2 uint64
}

// runBPF interprets the subset of classic BPF the filter uses, like the
// kernel's seccomp checker would: unknown instructions, loads out of
// bounds and running off the end are errors.
func runBPF(prog []Insn, c call) (uint32, error) {
	var data [dataSize]byte
	binary.LittleEndian.PutUint32(data[offNr:], c.nr)
	binary.LittleEndian.PutUint32(data[offArch:], c.arch)
	binary.LittleEndian.PutUint64(data[offArg0:], c.arg0)
	binary.LittleEndian.PutUint64(data[offArg1:], c.arg1)
	binary.LittleEndian.PutUint64(data[offArg2:], c.arg2)
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case bpfLdWAbs:
			if in.K%4 != 0 || in.K+4 > dataSize {
				return 0, fmt.Errorf("pc %d: load out of bounds at %d", pc, in.K)
			}
			a = binary.LittleEndian.Uint32(data[in.K:])
		case bpfJeqK, bpfJgeK:
			ok := a == in.K
			if in.Code == bpfJgeK {
				ok = a >= in.K
			}
			if ok {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case bpfRetK:
			return in.K, nil
		default:
			return 0, fmt.Errorf("pc %d: unknown instruction %#x", pc, in.Code)
		}
	}
	return 0, fmt.Errorf("ran off the end of the program")
}

// TestSeccompFilter runs the filter for every architecture and spec
// against a table of system calls.
func TestSeccompFilter(t *testing.T) {
	const (
		allow     = retAllow
		eacces    = retErrno | errEACCES
		eperm     = retErrno | errEPERM
		enosys    = retErrno | errENOSYS
		afINET    = 2
		afINET6   = 10
		afNETLINK = 16
		afVSOCK   = 40
	)
	specs := map[string]Spec{
		"none":          {Inet: true, Unix: true, IOURing: true, KernelObjects: true, OtherProcesses: true},
		"none abi9":     {Inet: true, IOURing: true, KernelObjects: true, OtherProcesses: true},
		"full":          {Unix: true, IOURing: true, KernelObjects: true},
		"full abi9":     {IOURing: true},
		"processes":     {IOURing: true, OtherProcesses: true},
		"processes net": {Inet: true, IOURing: true, OtherProcesses: true},
		"loopback":      {Loopback: true, Unix: true, IOURing: true, KernelObjects: true, OtherProcesses: true},
		"loopback abi9": {Loopback: true, IOURing: true, KernelObjects: true, OtherProcesses: true},
		"loopback inet": {Loopback: true, Inet: true, IOURing: true},
	}
	for arch, ai := range archs {
		for name, spec := range specs {
			t.Run(arch+" "+name, func(t *testing.T) {
				prog, err := Build(spec, arch)
				require.NoError(t, err)
				require.NotEmpty(t, prog)
				socket := func(fam uint64) call { return call{arch: ai.audit, nr: ai.socket, arg0: fam} }
				want := func(deny bool) uint32 {
					if deny {
						return eacces
					}
					return allow
				}
				cases := []struct {
					what string
					c    call
					want uint32
				}{
					{"read", call{arch: ai.audit, nr: 0}, allow},
					{"socketpair-like: another call", call{arch: ai.audit, nr: ai.socket + 1, arg0: afINET}, allow},
					{"io_uring_setup", call{arch: ai.audit, nr: ai.ioURingSetup}, eperm},
					{"io_uring_enter", call{arch: ai.audit, nr: ai.ioURingEnter}, eperm},
					{"io_uring_register", call{arch: ai.audit, nr: ai.ioURingRegister}, eperm},
					{"foreign architecture", call{arch: 0x40000003, nr: ai.socket, arg0: afUnix}, enosys},
					{"AF_UNIX", socket(afUnix), want(spec.Unix)},
					{"AF_UNIX with high bits set", socket(1<<32 | afUnix), want(spec.Unix)},
					{"AF_INET", socket(afINET), want(spec.Inet)},
					{"AF_INET6", socket(afINET6), want(spec.Inet)},
					{"AF_NETLINK", socket(afNETLINK), want(spec.Inet || spec.Loopback)},
					// Loopback keeps TCP, UDP and ICMP only: SCTP and
					// DCCP would load kernel modules.
					{"AF_INET TCP", call{arch: ai.audit, nr: ai.socket, arg0: afINET, arg2: 6}, want(spec.Inet)},
					{"AF_INET6 UDP", call{arch: ai.audit, nr: ai.socket, arg0: afINET6, arg2: 17}, want(spec.Inet)},
					{"AF_INET6 ICMPv6", call{arch: ai.audit, nr: ai.socket, arg0: afINET6, arg2: 58}, want(spec.Inet)},
					{"AF_INET SCTP", call{arch: ai.audit, nr: ai.socket, arg0: afINET, arg2: 132}, want(spec.Inet || spec.Loopback)},
					{"AF_INET6 DCCP", call{arch: ai.audit, nr: ai.socket, arg0: afINET6, arg2: 33}, want(spec.Inet || spec.Loopback)},
					{"AF_INET MPTCP", call{arch: ai.audit, nr: ai.socket, arg0: afINET, arg2: 262}, want(spec.Inet || spec.Loopback)},
					// Loopback keeps only the families that stay in a
					// network namespace.
					{"AF_VSOCK", socket(afVSOCK), want(spec.Inet || spec.Loopback)},
					{"AF_PACKET", socket(17), want(spec.Inet || spec.Loopback)},
					{"AF_BLUETOOTH", socket(31), want(spec.Inet || spec.Loopback)},
				}
				// clone3 and prlimit64 on another process (OtherProcesses);
				// prlimit64 on the caller (pid 0) always runs.
				denyIf := func(deny bool, errno uint32) uint32 {
					if deny {
						return errno
					}
					return allow
				}
				cases = append(cases, []struct {
					what string
					c    call
					want uint32
				}{
					{"clone3", call{arch: ai.audit, nr: ai.clone3}, denyIf(spec.OtherProcesses, enosys)},
					{"prlimit64 self", call{arch: ai.audit, nr: ai.prlimit64, arg0: 0}, allow},
					{"prlimit64 other", call{arch: ai.audit, nr: ai.prlimit64, arg0: 4242}, denyIf(spec.OtherProcesses, eperm)},
					{"prlimit64 other, low half 0 is the caller", call{arch: ai.audit, nr: ai.prlimit64, arg0: 1 << 32}, allow},
					{"prlimit64 pid -1", call{arch: ai.audit, nr: ai.prlimit64, arg0: 0xffffffff}, denyIf(spec.OtherProcesses, eperm)},
					{"setpriority self", call{arch: ai.audit, nr: ai.setpriority, arg0: 0, arg1: 0}, allow},
					{"setpriority own group", call{arch: ai.audit, nr: ai.setpriority, arg0: 1, arg1: 0}, allow},
					{"setpriority another process", call{arch: ai.audit, nr: ai.setpriority, arg0: 0, arg1: 4242}, denyIf(spec.OtherProcesses, eperm)},
					{"setpriority the whole user", call{arch: ai.audit, nr: ai.setpriority, arg0: prioUser, arg1: 0}, denyIf(spec.OtherProcesses, eperm)},
					{"ioprio_set self", call{arch: ai.audit, nr: ai.ioprioSet, arg0: 1, arg1: 0}, allow},
					{"ioprio_set another process", call{arch: ai.audit, nr: ai.ioprioSet, arg0: 1, arg1: 4242}, denyIf(spec.OtherProcesses, eperm)},
					{"ioprio_set the whole user", call{arch: ai.audit, nr: ai.ioprioSet, arg0: ioprioWhoUser, arg1: 0}, denyIf(spec.OtherProcesses, eperm)},
				}...)
				for _, nr := range ai.selfOnly {
					cases = append(cases, []struct {
						what string
						c    call
						want uint32
					}{
						{fmt.Sprintf("scheduling call %d on self", nr), call{arch: ai.audit, nr: nr, arg0: 0}, allow},
						{fmt.Sprintf("scheduling call %d on another process", nr), call{arch: ai.audit, nr: nr, arg0: 4242}, denyIf(spec.OtherProcesses, eperm)},
					}...)
				}
				for _, nr := range ai.kernelObjects {
					want := uint32(allow)
					if spec.KernelObjects {
						want = eperm
					}
					cases = append(cases, struct {
						what string
						c    call
						want uint32
					}{fmt.Sprintf("keyring or System V IPC call %d", nr), call{arch: ai.audit, nr: nr}, want})
				}
				if ai.x32 {
					cases = append(cases, struct {
						what string
						c    call
						want uint32
					}{"x32 socket", call{arch: ai.audit, nr: x32SyscallBit | ai.socket, arg0: afINET}, enosys})
				}
				for _, tc := range cases {
					got, err := runBPF(prog, tc.c)
					require.NoError(t, err, tc.what)
					assert.Equal(t, tc.want, got, "%s: got %#x want %#x", tc.what, got, tc.want)
				}
			})
		}
	}
}

func TestSeccompFilterEmpty(t *testing.T) {
	prog, err := Build(Spec{}, "amd64")
	require.NoError(t, err)
	assert.Nil(t, prog, "nothing to deny: no filter")
	_, err = Build(Spec{IOURing: true}, "mips")
	assert.Error(t, err)
}
