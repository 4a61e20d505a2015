// Package landlock is cordon's Landlock executor: it runs each command
// under one Landlock layer derived from the policy (policyderive.Landlock),
// a seccomp filter that closes what Landlock cannot restrict at the
// running ABI, no capabilities and no_new_privs, and it undoes changes to
// protected paths after the command (internal/protectguard). It
// implements executor.Executor, executor.Starter and executor.Describer.
//
//	x, err := landlock.New(landlock.Config{})
//	if err != nil { ... }
//	defer x.Close()
//	res, err := x.Run(ctx, &executor.Request{Command: "go test ./...", Dir: root, Root: root, Home: home, Policy: p, Env: env})
//
// # How it works
//
// For every request the executor derives the profile (a policyderive
// Deriver whose mask search is cached between commands), renders it for
// the host's ABI, and decides what the seccomp filter must close (below).
// The resulting ruleset is built once in the host process with go-landlock
// (Config.NewRulesetFD for the handled rights and the TCP port rules; the
// path rules are added to that descriptor directly, each path opened with
// openat2 RESOLVE_NO_SYMLINKS so that a link that appeared since the
// derivation is never granted through).
//
// The host process is never restricted: each command restricts itself
// between fork and exec, so it gets a Landlock domain of its own that
// nothing in the host shares, and Landlock's ptrace and signal scoping
// keep it away from the host process (its memory, environment and
// descriptors through /proc, and signals) and from other commands. The
// child drops every capability (bounding, ambient, inheritable,
// permitted and effective sets), sets PR_SET_NO_NEW_PRIVS, installs the
// seccomp filter and calls landlock_restrict_self on the cached ruleset,
// then executes /bin/sh -c in a new session with only descriptors 0-2.
// Two ways, one contract:
//
//   - With cgo (Linux, the default where a C compiler exists), a small C
//     function vforks and does the above in the child: the cost of a
//     bare fork+exec plus a few system calls.
//   - Without cgo, the command runs as the sandbox helper: the host
//     binary re-executed through /proc/self/exe under the name
//     "cordon-landlock-sandbox", with an empty environment, the ruleset as
//     descriptor 3, the command's environment in a sealed memfd (never
//     on a command line, which every process may read) and a status
//     pipe. Init, which the program's main calls first thing (tests in
//     TestMain; New fails with ErrNoInit otherwise), does the above on
//     its locked thread and execs; the exec leaves only that thread. A
//     failure before the exec comes back as a *HelperError (unwrapping
//     to the errno). This costs one more exec and a Go start-up per
//     command.
//
// TestCommandCannotReadHostMemory, TestCommandCannotReadHostEnviron and
// TestCommandCannotSignalHost check the separation from outside, each
// with an unsandboxed twin that succeeds; make test runs this package
// with cgo and, in its unprivileged run, without.
//
// Rulesets are cached by profile (Config.Rulesets, least recently used
// first out). The cache key is the rendered layer — handled rights, every
// rule with the device and inode its path names now, the port rules — and
// the filter, so a path replaced since gets a fresh ruleset. Closing a
// ruleset closes its descriptor; commands started with it keep their
// restriction.
//
// # Why not a restricted host thread
//
// An earlier version restricted a dedicated, locked thread of the host
// process and forked commands from it. That is
// unsound: the command inherits exactly that thread's domain, and
// Landlock lets a task ptrace and signal tasks of its own domain, so a
// command could read and write the host's memory through
// /proc/PPID/task/TID/mem and kill the host. A domain of the command's
// own needs landlock_restrict_self in the child, between fork and exec,
// which Go's os/exec cannot run: hence cordon_spawn and the helper.
//
// Go's restriction of the whole process (go-landlock's Restrict, which
// uses TSYNC or libpsx over all threads) is never called.
//
// # What is enforced per ABI
//
//	ABI  kernel  Landlock restricts                          the seccomp filter adds
//	1    5.13    file system (no refer, no truncate)          under network none: socket(2) for every
//	2    5.19    + rename/link across directories (refer)      family but AF_UNIX (TCP, UDP, MPTCP, SCTP,
//	3    6.2     + truncate                                    ICMP, raw, netlink, vsock) — with the private
//	                                                             loopback, all but AF_UNIX and TCP/UDP/ICMP;
//	4    6.7     + TCP bind and connect                        below ABI 9: socket(AF_UNIX), unless a
//	5    6.10    + ioctl on devices                            grant names a socket (socketpair works);
//	6    6.12    + abstract Unix sockets, signals (scopes)     always: io_uring_setup/enter/register
//	7    6.15    + audit logging flags                         (EPERM), 32-bit and x32 system calls
//	8            (thread synchronisation; not used here)
//	9            + connecting to pathname Unix sockets         (ENOSYS)
//	10           + UDP bind and send
//
// The file system layer grants the System paths read and execute (links
// such as /bin → usr/bin resolved), the root and every write grant read,
// write, refer and (from ABI 9) resolve-unix, pseudo-devices with
// ioctl-dev, and the executor's private temporary directory (TempDir)
// read-write; a read or write mask inside a granted tree is rendered by
// granting the tree's entries one by one down to the mask (see
// policyderive.Landlock, and the stricter consequence it reports). Network
// full leaves the network unhandled. Network none gives each command a
// private loopback (unless Config.NoLoopback), so test servers on
// 127.0.0.1 work as under bwrap and docker: as root one network namespace
// whose only interface is loopback, made by the executor on first use and
// shared by its commands (forked from one launcher thread that lives in
// it; commands of one executor can reach each other's servers, and take
// over a port another binds with SO_REUSEPORT, as in docker's session
// container); as another user the command's child makes one of its own,
// as for the allow-list below (the listener it hands over is closed).
// Landlock then leaves TCP alone and the filter allows only AF_UNIX,
// AF_INET and AF_INET6, and for those only TCP, UDP and ICMP, which stay
// in the namespace: AF_NETLINK is refused (a nested user namespace would
// otherwise reach nf_tables and the rest of rtnetlink, and the executor's
// namespace receives the host's device events), as are AF_VSOCK (the
// hypervisor), AF_PACKET, SCTP and DCCP (module loading) and the rest.
// The private loopback needs the seccomp filter; without one network none
// stays as below. Where no namespace can be had (no root, no user
// namespaces with capabilities) or with NoLoopback, network none handles
// TCP (ABI ≥ 4) with no port allowed and the filter denies every socket
// family but AF_UNIX; Describe's Info["loopback"] says which.
// Under the network allow-list (policy.NetworkAllowList) each command
// starts in a private network namespace of its own whose only listener is
// the executor's proxy (package netproxy, on
// 127.0.0.1:policyderive.ProxyPort; the proxy variables point there): as
// root the executor makes it and starts the command in it (procgroup's
// NetNS); as another user the command's child — cordon_spawn, or the
// sandbox helper, started with CLONE_NEWNET and CAP_NET_ADMIN in its user
// namespace — unshares it with the user namespace its read-only mounts
// need, brings lo up, listens and hands the listener over a socket pair
// (SCM_RIGHTS), which the executor serves before the start returns. The
// ruleset allows TCP connect to that port only and no bind, and the
// filter leaves socket families open, since nothing but the proxy is
// reachable in the namespace. Landlock alone restricts TCP by port, which
// would reach any host on the proxy's port, so where no namespace can be
// made (no root, no user namespaces with capabilities) strict mode
// refuses the allow-list (gap net-allowlist) and best effort runs the
// command with no network at all.
// Below ABI 9 seccomp cannot see connect's path, so the filter denies
// creating Unix sockets at all: programs cannot create Unix sockets, even
// inside the workspace (reported as stricter in the fidelity report and
// Describe's Info["stricter"]). socketpair(2) is unaffected. io_uring is
// denied because it performs socket operations without the system calls a
// filter sees. clone3 fails with ENOSYS (C libraries fall back to clone,
// as under Docker's default profile): its CLONE_INTO_CGROUP would start a
// child outside the command's cgroup, beyond its end and the keeper.
// prlimit64, sched_setparam, sched_setscheduler, sched_setaffinity and
// sched_setattr on another process, and setpriority and ioprio_set on
// anything but the caller or its process group, fail with EPERM: Landlock
// does not mediate them, and another process of the same user (the
// keeper, this process) could be given a file limit of 0, a CPU limit
// the kernel kills it at, or starved (nice 19, SCHED_IDLE, pinned to a
// busy CPU). A program that sets its own threads' scheduling by thread
// id gets EPERM too (stricter).
//
// # Gaps
//
// Landlock does not mediate everything; what neither it nor the filter can
// restrict is declared in Describe (and by Run's fidelity) as a gap:
//
//   - fs-metadata: stat, access, chdir, readlink on ungranted paths
//     succeed (a command can learn that ~/.ssh/id_rsa exists, not read
//     it). Changes — chmod, chown, utimes, extended attributes — are
//     closed by a mount namespace (see Metadata) and are a gap only where
//     none can be made.
//   - fs-new-files: masks exist for paths found when the command starts;
//     a denied or protected path created while it runs is not masked
//     until the next command re-derives. Protected ones are removed or
//     restored by the guard when the command ends.
//   - protect (default mode, see Protection): protected paths are
//     restored after the command, not denied while it runs.
//   - process-tree: without a PID namespace, a process that double-forks
//     out of the command's tree (its parent exits first) would survive the
//     command (internal/procgroup's caveat), keeping every restriction.
//     Where this process may make cgroup v2 child cgroups, each command
//     runs in one of its own and nothing survives (see Survivors); with
//     Config.ReapOrphans this process is a child subreaper that kills
//     them; the gap is declared only where neither holds.
//   - proc-info: /proc/self names the process that opens it, and the
//     ruleset is built once per profile, before the command exists, so its own
//     /proc/<pid> cannot be granted alone: /proc is granted read-only as a
//     whole. Command lines, status and statistics of host processes and
//     system-wide /proc files are readable; Landlock's ptrace scoping
//     still denies environ, mem, maps, fd and the cwd, root and exe links
//     of every process outside the command's own domain, the host
//     included.
//
// The probe's chmod-outside and denied-new-file conformance cases are
// reported as these declared gaps.
//
// # Strict and best effort
//
// The rule: Run refuses a profile (*executor.UnenforceableError listing
// the gaps) when any element of its fidelity report is looser than the
// policy and neither mitigated (closed by the seccomp filter) nor
// inherent. Inherent elements are the gaps Landlock has at every ABI and
// in every configuration — the five above — plus the derivation's own
// inherent elements (System trees not searched for bare-name denies);
// they are declared in Describe and never refused. Everything else is
// refused in strict mode: no Landlock at all; truncate below ABI 3; TCP
// below ABI 4, UDP below ABI 10 and other socket families under network
// none when seccomp is unavailable; pathname Unix sockets below ABI 9
// when a grant names a socket or seccomp is unavailable; abstract Unix
// sockets below ABI 6 unless socket(AF_UNIX) is denied; signals below
// ABI 6; a bare-name or glob deny that cannot be searched (a trusted
// policy reading /; the derivation's Unsearched); a protected-path guard
// that cannot scan the writable trees (more than 1,000,000 entries).
//
// Config.BestEffort runs anyway; Describe then sets BestEffort and lists
// every gap, and Info["unenforceable"] names the controls strict mode
// would refuse for a coding-mode profile. Config.MaxABI reproduces an
// older kernel's enforcement on a newer one.
//
// # Protection
//
// Landlock can only allow: rights granted on a directory reach everything
// below it. Denying writes to .git/hooks while the workspace stays
// writable therefore means taking creation, removal and rename rights away
// from every directory above it — the root and .git — so that nothing
// could be created at the root of a repository and git commit could not
// write .git/index.lock. Normal git use must keep
// working, so by default the executor does not render the protect masks:
// the guard (internal/protectguard) snapshots the protected paths before
// each command and after it removes new ones (hooks, a cloned repository's
// hooks and config), restores changed ones from its copy, and reports each
// repair in Result.Violations; background processes are repaired when
// they exit and before every later command. Read denies (denied_paths) are
// always rendered by Landlock: a read cannot be undone.
//
// Config.KernelProtect renders the protect masks too: Landlock denies
// writes to existing protected paths while the command runs, at the
// stricter cost above (reported as "split" elements), and the guard still
// handles protected paths created during the command.
//
// # Requirements
//
// Linux ≥ 5.13 built with CONFIG_SECURITY_LANDLOCK and with landlock in the
// active LSM list; ABI 6 (Linux 6.12) for strict mode to accept a profile
// (signals and abstract sockets); seccomp filters (CONFIG_SECCOMP_FILTER)
// on amd64 or arm64 to close the network below ABI 10. Any user may run
// it; as root, commands keep uid 0 but hold no capabilities, so they
// cannot bypass file permissions, load modules or reboot, yet they still
// own root's files — which is why each command gets the read-only mount
// namespace below.
//
// # Survivors
//
// Each command runs in a cgroup v2 of its own, made under this process's
// cgroup (cgroup_linux.go): the child writes "0" to its cgroup.procs
// before anything else (cordon_spawn, or the helper's first step), so
// everything the command starts is in it. When the command ends — Run's
// process exited, or a Start'ed one — the executor writes "1" to
// cgroup.kill (Linux 5.14), waits until the cgroup can be removed (it is
// empty) and removes it, and only then runs the protected-path guard,
// whose scan is therefore final. A sandboxed process cannot leave the
// cgroup: moving needs write access to cgroup.procs files, which Landlock
// does not grant and the mount namespace makes read-only. Whether cgroups
// can be made is tried once per process (a probe cgroup and write access
// to both cgroup.procs files): root, or a delegated subtree such as a
// systemd user service, on cgroup v2 (or the unified hierarchy of a
// hybrid host). Elsewhere the process-tree gap is declared with the
// reason. A cgroup that cannot be emptied within 10 s fails Run.
//
// Where there is no cgroup to use (a container, as in a Kubernetes
// session pod), Config.ReapOrphans makes this process a child subreaper
// for good (reaper.go): a process that leaves a command's tree is
// reparented to it, not to init. Every start of a command's leader (and
// of a kept namespace's holder) is registered under the reaper's lock;
// as soon as any command's leader has exited (procgroup.Spec.Exited,
// before its output is awaited, which a leftover holding the pipes would
// otherwise stretch) and again before the guard runs, every child of
// this process that is not registered is sent SIGKILL — whatever its
// state: a process whose main thread exited shows that thread's zombie
// state while its other threads run — and reaped where it can be, again
// until only zombies are left (a killed child's children are reparented
// here when it dies), for at most 5 s. Children are listed from the
// threads' children files (a few reads, not a scan of /proc), and each
// one's process group is killed with it, so a process that hops from pid
// to pid (fork, the parent exits) is caught in its group or in the next
// listing; one that also starts a new session at every hop is a race
// the sweep has won in every trial here (TestReapChain's variant), not a
// guarantee, and a sweep that runs out of time says so in the log. No wait blocks: a traced zombie
// is reported to its tracer first, and the tracer dies in the same
// sweep. Only a process that runs nothing but the executor's commands
// may set it: any other child of the program would be killed too.
//
// # Metadata
//
// Landlock has no setattr hook (truncate is the only attribute it
// mediates) and a seccomp filter cannot see paths, so chmod, chown,
// utimes and extended attributes are closed with mounts instead: each
// command starts in a mount namespace of its own (cordon_spawn in C, or
// the helper on its locked thread) in which every mount is made private,
// each top writable region is bound onto itself with MS_REC (so it and
// the mounts below it stay writable), each denied path inside a region
// is bound onto itself and remounted read-only, and every other
// mount point of /proc/self/mountinfo — read with moby/sys/mountinfo,
// which decodes its escapes — is remounted MS_BIND|MS_RDONLY with its
// nosuid, nodev, noexec and atime flags kept. A bind remount changes the
// mount's flags in the new namespace only, never the file system's or the
// host's. /proc is included (root may chmod its generic entries such as
// /proc/sysrq-trigger; Landlock grants no writes there), autofs mount
// points are skipped (touching them would mount), and a mount point that
// vanished (ENOENT, EINVAL) or that this user cannot walk to (EACCES, and
// so neither can the command) is skipped. Everything else failing fails the start: never silently
// weaker. The working directory is entered after the mounts.
//
// The regions are the profile's write grants, not the ruleset's rules:
// Landlock cannot deny one file inside a granted directory, so the
// ruleset grants each sibling of a denied file a rule of its own, and
// binding each of those (tens of thousands in a large tree with secrets
// scattered through it) cost a mount each per command. A directory of
// nothing but denied files is one mask. The metadata this leaves
// changeable that the earlier plan did not is that of the split
// directories themselves (the write grant covers them; only their masked
// entries are denied) and of entries the host creates in them after the
// profile was derived (their content stays out of reach: no rule names
// them).
//
// With cgo the namespace is made once per ruleset and kept: a holder
// process builds it and exits, descriptors of its mount (and user)
// namespace keep it, and each command's child joins it with setns
// instead of making mounts (keptns_linux.go). It is made again when a
// mount appears or goes away where a rule reaches (pathwatch polls the
// mount table; a container's mounts elsewhere do not count) and when a
// denied path inside a region is renamed over, removed or made again on
// the host — the kernel detaches the mounts on a replaced name in every
// namespace, so its mask would be gone. Commands cannot change the shared
// namespace: they hold no capabilities in it. Without cgo each command
// still makes its own.
//
// What the executor computes before each command is change-driven as
// well: the ruleset key (each rule path's inode) is computed again only
// after a directory on the way to a rule changed (pathwatch), and the
// protected-path guard skips its walks when nothing it records changed
// (package protectguard). The derivation itself still runs per command
// (cached mask search and listings).
//
// As root (CAP_SYS_ADMIN) unshare(CLONE_NEWNS) is enough. Another user
// gets a user namespace that maps only its uid and gid to themselves
// (setgroups denied), in which it holds the capabilities for the mounts
// until it drops them all before the exec; the helper path starts the
// helper in it with CAP_SYS_ADMIN as an ambient capability. Files of
// other users then show as nobody; access to them is unchanged. Whether
// this works is tried once per process (a trial command with the host's
// mounts): user namespaces may be disabled, or allowed without
// capabilities (Ubuntu 24.04's AppArmor policy); then metadata changes
// stay a declared gap whose reason says why.
//
// /tmp stays the host's (read-only in the command's mount namespace) and is
// not writable. Commands get a private directory instead (TempDir, removed by
// Close); set TMPDIR to it in Request.Env.
//
// # Troubleshooting
//
//   - Describe shows landlock_abi 0 and Run refuses everything: the kernel
//     lacks Landlock or it is not enabled. Check
//     /sys/kernel/security/lsm; add landlock to the lsm= boot parameter
//     (for example lsm=landlock,lockdown,yama,integrity,apparmor,bpf)
//     and reboot.
//   - git fails with "unknown error occurred while reading the
//     configuration files": ~/.gitconfig exists but is not granted, and
//     Landlock lets git see it (access succeeds) but not open it. Set
//     GIT_CONFIG_GLOBAL=/dev/null (or a granted file) in Request.Env, or
//     grant the file.
//   - "Permission denied" creating a socket: below ABI 9 Unix sockets are
//     denied unless a grant names one.
//   - Files cannot be created directly in a directory that holds a denied
//     path (a .env at the root): Landlock grants such a directory entry
//     by entry (Describe's Info["stricter"] and the fidelity report say
//     which).
//
// # Benchmark
//
// BenchmarkLandlockRunTrue compares `true` through a long-lived executor
// with bare /bin/sh -c true and with executor.Local; the interleaved
// sub-benchmark runs all three in every iteration and reports medians,
// 95th percentiles and ratios:
//
//	go test -run '^$' -bench BenchmarkLandlockRunTrue -count 8 ./executor/landlock
package landlock
