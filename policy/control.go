package policy

// Control is one kind of isolation an executor may or may not enforce.
// Executors declare the controls they cannot enforce as gaps
// (executor.Gap), conformance cases name the controls they check, and the
// fidelity reports of package policyderive name the control each element
// concerns: one vocabulary, defined here, the lowest layer that needs it.
type Control string

// The controls.
const (
	// ControlFSRead: reads outside the derived read grants are refused.
	ControlFSRead Control = "fs-read"
	// ControlFSWrite: writes outside the derived write grants are refused.
	ControlFSWrite Control = "fs-write"
	// ControlFSNewFiles: denied and protected patterns also cover files
	// created after the command started.
	ControlFSNewFiles Control = "fs-new-files"
	// ControlFSMetadata: stat, chdir and chmod on paths outside grants.
	ControlFSMetadata Control = "fs-metadata"
	// ControlProtect: protected paths (.git/hooks, ...) cannot be written.
	ControlProtect Control = "protect"
	// ControlNetTCP: TCP connect and bind are refused under network none.
	ControlNetTCP Control = "net-tcp"
	// ControlNetUDP: UDP is refused under network none.
	ControlNetUDP Control = "net-udp"
	// ControlNetUnix: connecting to pathname Unix sockets outside grants is refused.
	ControlNetUnix Control = "net-unix"
	// ControlNetAbstract: abstract Unix sockets outside the sandbox are unreachable.
	ControlNetAbstract Control = "net-abstract-unix"
	// ControlSignal: processes outside the sandbox cannot be signalled.
	ControlSignal Control = "signal"
	// ControlProcessTree: timeout kills every descendant, setsid ones included.
	ControlProcessTree Control = "process-tree"
	// ControlProcInfo: other processes' /proc entries (command lines,
	// status) are hidden from the command.
	ControlProcInfo Control = "proc-info"
	// ControlHostProcess: the process that runs the command (the host
	// program) is out of its reach: its memory, environment and
	// descriptors through /proc or ptrace.
	ControlHostProcess Control = "host-process"
	// ControlKernelObjects: kernel objects the host shares outside any
	// file rule — keys in kernel keyrings, System V shared memory,
	// message queues and semaphores — are out of the command's reach.
	ControlKernelObjects Control = "kernel-objects"
	// ControlNetAllowList: under the network allow-list, commands reach
	// only the executor's proxy, which decides every connection by
	// network.allow, network.deny and network.unknown.
	ControlNetAllowList Control = "net-allowlist"
)

// Controls returns every control, in the order backends report them.
func Controls() []Control {
	return []Control{
		ControlFSRead, ControlFSWrite, ControlFSNewFiles, ControlFSMetadata,
		ControlProtect, ControlNetTCP, ControlNetUDP, ControlNetUnix,
		ControlNetAbstract, ControlSignal, ControlProcessTree, ControlProcInfo,
		ControlHostProcess, ControlKernelObjects, ControlNetAllowList,
	}
}
