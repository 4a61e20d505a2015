package landlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/seccompbpf"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// features are the host's sandboxing facilities, detected once by New.
type features struct {
	// abi is the kernel's Landlock ABI (0: none, or disabled at boot).
	abi int
	// errata is the kernel's Landlock errata bit set (-1: unknown).
	errata int
	// seccomp is set when seccomp filters can be installed and this
	// package knows the architecture's system call numbers.
	seccomp bool
	// seccompWhy says why seccomp is unavailable.
	seccompWhy string
	// arch is GOARCH.
	arch string
	// mounts says how each command gets a mount namespace of its own
	// (mountsNone: it does not; mountsWhy says why).
	mounts    mountMode
	mountsWhy string
	// cgroup is the cgroup v2 directory under which each command gets a
	// cgroup of its own, killed when it ends ("": none; cgroupWhy says
	// why).
	cgroup, cgroupWhy string
	// netnsWhy says why this process cannot make private network
	// namespaces for the network allow-list ("": it can, as root);
	// childNetWhy why commands' children cannot make them in their user
	// namespaces either ("": they can).
	netnsWhy, childNetWhy string
}

// filterSpec says what the seccomp filter denies. The zero value installs
// no filter.
type filterSpec struct {
	// inet denies socket(2) for every family but AF_UNIX (network none).
	inet bool
	// loopback denies socket(2) for every family but AF_UNIX, AF_INET and
	// AF_INET6, and for those two every protocol but TCP, UDP and ICMP
	// (network none in a loopback-only namespace).
	loopback bool
	// unix denies socket(2) for AF_UNIX (pathname Unix sockets cannot be
	// restricted by Landlock below ABI 9); socketpair(2) stays allowed.
	unix bool
	// ioURing denies io_uring_setup, io_uring_enter and
	// io_uring_register: io_uring performs socket operations without
	// the system calls a filter sees.
	ioURing bool
	// kernelObjects denies the host's kernel keyrings (add_key,
	// request_key, keyctl) and System V IPC (shm*, sem*, msg*): a
	// Landlock command shares the host's user keyring and IPC namespace.
	kernelObjects bool
	// otherProcesses denies clone3 (CLONE_INTO_CGROUP would leave the
	// command's cgroup) and the resource limits and scheduling of other
	// processes (the keeper's, this process's): see
	// seccompbpf.Spec.OtherProcesses.
	otherProcesses bool
}

// mountMode says how a command gets its mount namespace.
type mountMode uint8

const (
	// mountsNone: no mount namespace; metadata changes are a gap.
	mountsNone mountMode = iota
	// mountsRoot: unshare(CLONE_NEWNS) alone (CAP_SYS_ADMIN).
	mountsRoot
	// mountsUserNS: a user namespace mapping the caller's uid and gid,
	// and a mount namespace owned by it.
	mountsUserNS
)

func (f filterSpec) empty() bool { return f.spec().Empty() }

// spec is f as the filter builder takes it.
func (f filterSpec) spec() seccompbpf.Spec {
	return seccompbpf.Spec{Inet: f.inet, Loopback: f.loopback, Unix: f.unix, IOURing: f.ioURing, KernelObjects: f.kernelObjects, OtherProcesses: f.otherProcesses}
}

// plan is what Run enforces for one derived profile: the Landlock layer,
// the seccomp filter, whether /proc is granted, the trees the guard
// watches, and every gap. It is pure data, computed by assess without
// system calls beyond stat.
type plan struct {
	abi      int
	ruleset  *policyderive.LandlockRuleset
	filter   filterSpec
	procRule bool
	// fidelity is ruleset.Fidelity with this backend's mitigations and
	// additions.
	fidelity *policyderive.Fidelity
	// gaps are every looser element not mitigated, inherent ones
	// included; blocking the ones strict mode refuses. looser holds the
	// elements of gaps.
	gaps, blocking []executor.Gap
	looser         []policyderive.Element
	// guardTrees are the writable directory grants, watched by the
	// protected-path guard.
	guardTrees []string
	// kmu guards the ruleset key computed at change generation kgen
	// (kok: every directory it depends on is watched); see rulesetKey.
	kmu  sync.Mutex
	kval string
	kgen uint64
	kok  bool
	// rulePaths holds the rules' paths, above every directory above one
	// (reaches): what the ruleset key and the kept namespace depend on.
	rulePaths, above map[string]bool
	// mountTops and mountMasks are the mount namespace's writable
	// regions and the read-only masks inside them (mountRegions), before
	// newRuleset drops what does not exist.
	mountTops, mountMasks []string
	// mounts: each command gets a mount namespace in which every mount
	// outside its writable grants is read-only.
	mounts mountMode
	// cgroup: each command runs in a cgroup of its own, killed when it
	// ends.
	cgroup bool
	// netns: each command runs in a private network namespace whose only
	// listener is the allow-list proxy; netnsChild: the command's child
	// makes it, in its user namespace, and hands the listener over (not
	// root), else this process makes it (root).
	netns, netnsChild bool
	// loopback: under network none each command runs in the executor's
	// loopback-only network namespace (root); loopbackChild: its child
	// makes one of its own in its user namespace (not root). Either way
	// Landlock leaves TCP alone and the filter allows inet sockets: the
	// namespace has nothing but loopback.
	loopback, loopbackChild bool
}

// assess renders pr for the host and decides what closes each gap.
func assess(pr *policyderive.Profile, f features, cfg Config) *plan {
	abi := f.abi
	if cfg.MaxABI > 0 {
		abi = min(abi, cfg.MaxABI)
	}
	if !cfg.KernelProtect {
		pr = withoutProtectMasks(pr)
	}
	netDowngraded, netChild := false, false
	if pr.Network == policy.NetworkAllowList && f.netnsWhy != "" {
		// Not root: the command's child makes the namespace, where it can.
		netChild = f.mounts == mountsUserNS && f.childNetWhy == ""
		if !netChild {
			// Landlock alone restricts TCP by port: "connect to the
			// proxy's port" would reach any host on that port. Without a
			// private network namespace the command gets no network.
			cp := *pr
			cp.Network = policy.NetworkNone
			pr, netDowngraded = &cp, true
		}
	}
	// Network none: a private loopback where a namespace can be had.
	loopback, loopChild := false, false
	if pr.Network == policy.NetworkNone && !cfg.NoLoopback && abi > 0 && f.seccomp {
		// (Without the filter nothing would bound the socket families:
		// AF_VSOCK reaches the hypervisor from any namespace.)
		loopback = f.netnsWhy == ""
		loopChild = !loopback && f.mounts == mountsUserNS && f.childNetWhy == ""
	}
	rendered := pr
	if loopback || loopChild {
		// Landlock leaves TCP alone: the namespace confines it.
		cp := *pr
		cp.Network = policy.NetworkFull
		rendered = &cp
	}
	rs := policyderive.Landlock(rendered, abi)
	fid := rs.Fidelity
	pl := &plan{abi: rs.ABI, ruleset: rs, fidelity: fid, netns: pr.Network == policy.NetworkAllowList, netnsChild: netChild,
		loopback: loopback, loopbackChild: loopChild}
	add := func(e policyderive.Element) { fid.Elements = append(fid.Elements, e) }
	if loopback || loopChild {
		how := "a private network namespace shared by this executor's commands whose only interface is loopback"
		if loopChild {
			how = "a private network namespace per command, made in its user namespace, whose only interface is loopback"
		}
		for i := range fid.Elements {
			if e := &fid.Elements[i]; e.Subject == "network" && e.Control == executor.ControlNetTCP {
				e.Detail = "none: " + how + ": servers on 127.0.0.1 and ::1 work, nothing outside the namespace is reachable"
			}
		}
	}
	if netDowngraded {
		add(policyderive.Element{Class: policyderive.Stricter, Subject: "network allow-list", Control: executor.ControlNetAllowList,
			Detail: "commands get no network at all: the allow-list's proxy cannot be offered",
			Reason: "Landlock restricts TCP by port only, so the allow-list needs a private network namespace for each command: " + f.netnsWhy + netChildWhy(f),
			Remedy: "run as root (a private network namespace needs CAP_SYS_ADMIN), or use the bwrap backend as root"})
	}

	if rs.ABI == 0 {
		for _, c := range []executor.Control{executor.ControlFSWrite, executor.ControlProtect, executor.ControlSignal, executor.ControlNetAbstract} {
			subject, ft := "landlock "+string(c), policyderive.Feature("")
			if c == executor.ControlNetAbstract {
				subject, ft = "abstract unix sockets", policyderive.FeatureAbstractUnix // closed by denying socket(AF_UNIX)
			}
			add(policyderive.Element{Class: policyderive.Looser, Subject: subject, Control: c, Feature: ft,
				Detail: "not restricted: there is no Landlock", Reason: "the kernel does not support Landlock (or it is disabled)",
				Remedy: "use Linux ≥ 5.13 with landlock in the lsm= boot parameter, another backend, or opt into best effort"})
		}
		if pr.Network != policy.NetworkFull {
			add(policyderive.Element{Class: policyderive.Looser, Subject: "network tcp", Control: executor.ControlNetTCP, Feature: policyderive.FeatureNetTCP,
				Detail: "TCP is not restricted", Reason: "there is no Landlock",
				Remedy: "a seccomp filter denying socket(2) for families other than AF_UNIX"})
			add(policyderive.Element{Class: policyderive.Looser, Subject: "network udp", Control: executor.ControlNetUDP, Feature: policyderive.FeatureNetUDP,
				Detail: "UDP is not restricted", Reason: "there is no Landlock",
				Remedy: "a seccomp filter denying socket(2) for families other than AF_UNIX"})
			add(policyderive.Element{Class: policyderive.Looser, Subject: "network other sockets", Control: executor.ControlNetTCP, Feature: policyderive.FeatureNetOther,
				Detail: "no socket is restricted", Reason: "there is no Landlock",
				Remedy: "a seccomp filter denying socket(2) for families other than AF_UNIX"})
		}
		add(policyderive.Element{Class: policyderive.Looser, Subject: "unix sockets", Control: executor.ControlNetUnix, Feature: policyderive.FeatureUnixSockets,
			Detail: "connecting to pathname Unix sockets anywhere is not restricted", Reason: "there is no Landlock",
			Remedy: "a seccomp filter denying socket(AF_UNIX)"})
	}

	// /proc/self names the process that opens it, and the ruleset is
	// built once per profile, before any command exists, so the
	// command's own /proc/<pid> cannot be granted alone.
	if pp := rs.PerProcessRules(); len(pp) > 0 && rs.ABI > 0 {
		pl.procRule = true
		for _, e := range fid.Keyed(policyderive.FeaturePerProcess) {
			e.Detail = "granted as part of /proc, which is readable as a whole (see proc)"
		}
		add(policyderive.Element{Class: policyderive.Looser, Subject: "proc", Control: executor.ControlProcInfo, Inherent: true,
			Detail: "/proc is readable as a whole, not only /proc/self: the command lines, status and statistics of every process on the host, and system-wide /proc files, can be read",
			Reason: "Landlock rules name inodes and the ruleset is applied before the command exists, so its own /proc/<pid> cannot be granted alone; Landlock's ptrace scoping still denies environ, mem, maps, fd and the cwd/root/exe links of processes outside the sandbox",
			Remedy: "use the bwrap backend (its own PID namespace and /proc)"})
	}

	// Under the allow-list the private network namespace closes what
	// Landlock leaves open: nothing but the proxy listens in it.
	if pl.netns {
		how := "a private network namespace: only loopback, where nothing but the proxy listens"
		fid.Mitigate(policyderive.FeatureNetTCP, how)
		fid.Mitigate(policyderive.FeatureNetUDP, how)
		fid.Mitigate(policyderive.FeatureNetOther, how)
	}
	// The seccomp filter closes what Landlock cannot at this ABI.
	socketGrant := namesSocket(pr)
	if f.seccomp {
		pl.filter.ioURing = true
		pl.filter.kernelObjects = true
		pl.filter.otherProcesses = true
		if loopback || loopChild {
			pl.filter.loopback = true
		}
		if pr.Network == policy.NetworkNone && !loopback && !loopChild {
			pl.filter.inet = true
			how := "seccomp filter: socket(2) is denied for every family but AF_UNIX"
			fid.Mitigate(policyderive.FeatureNetTCP, how)
			fid.Mitigate(policyderive.FeatureNetUDP, how)
			fid.Mitigate(policyderive.FeatureNetOther, how)
		}
		if rs.ABI < 9 && !socketGrant {
			pl.filter.unix = true
			how := "seccomp filter: socket(AF_UNIX) is denied"
			fid.Mitigate(policyderive.FeatureUnixSockets, how)
			fid.Mitigate(policyderive.FeatureAbstractUnix, how)
			add(policyderive.Element{Class: policyderive.Stricter, Subject: "unix socket creation", Control: executor.ControlNetUnix,
				Detail: "programs cannot create Unix sockets at all, even inside the workspace (socketpair(2) still works)",
				Reason: fmt.Sprintf("Landlock restricts connecting to pathname Unix sockets from ABI 9 (this is ABI %d) and seccomp cannot see connect's path, so socket(AF_UNIX) is denied", rs.ABI)})
		}
	}
	// An unrestricted pathname Unix socket is a gap of this kernel, not of
	// Landlock: ABI 9 closes it, so strict mode refuses it.
	for _, e := range fid.Keyed(policyderive.FeatureUnixSockets) {
		if e.Class == policyderive.Looser && e.Mitigated == "" {
			e.Inherent = false
			if socketGrant {
				e.Reason += "; a grant names a socket, so socket(AF_UNIX) cannot be denied either"
			} else if !f.seccomp {
				e.Reason += "; no seccomp filter: " + f.seccompWhy
			}
		}
	}
	if !f.seccomp && rs.ABI > 0 {
		for i := range fid.Elements {
			if e := &fid.Elements[i]; e.Class == policyderive.Looser && e.Mitigated == "" && (e.Feature == policyderive.FeatureNetUDP || e.Feature == policyderive.FeatureNetOther || e.Feature == policyderive.FeatureNetTCP) {
				e.Reason += "; no seccomp filter: " + f.seccompWhy
			}
		}
	}

	if f.mounts != mountsNone && rs.ABI > 0 {
		pl.mounts = f.mounts
		how := "a mount namespace of each command's own in which every mount outside its writable grants is read-only: chmod, chown, utimes and extended attributes fail there (EROFS)"
		if f.mounts == mountsUserNS {
			how += "; as a non-root user, in a user namespace of its own that maps only the caller's uid and gid (files of other users show as nobody)"
		}
		fid.Mitigate(policyderive.FeatureMetadata, how)
		add(policyderive.Element{Class: policyderive.Looser, Subject: "metadata visibility", Control: executor.ControlFSMetadata, Inherent: true,
			Detail: "stat, access, chdir and readlink work on ungranted paths: the command can see that ~/.ssh/id_rsa exists, and its size and times, not read it",
			Reason: "Landlock does not mediate these operations",
			Remedy: "use the bwrap backend, where ungranted paths do not exist"})
	} else if f.mountsWhy != "" {
		for _, e := range fid.Keyed(policyderive.FeatureMetadata) {
			if e.Class == policyderive.Looser {
				e.Reason += "; no mount namespace, which would make everything outside the writable grants read-only: " + f.mountsWhy
			}
		}
	}
	if !f.seccomp {
		add(policyderive.Element{Class: policyderive.Looser, Subject: "kernel objects", Control: executor.ControlKernelObjects,
			Detail: "the command shares the host's kernel keyrings and System V IPC: it can read and add keys in the user's keyring and attach the host's shared memory, message queues and semaphores",
			Reason: "Landlock does not mediate keyrings or System V IPC and no seccomp filter can be installed here: " + f.seccompWhy,
			Remedy: "use the bwrap backend (its own user and IPC namespaces) or a kernel with seccomp filters"})
	}
	if !cfg.KernelProtect {
		add(policyderive.Element{Class: policyderive.Looser, Subject: "protected paths", Control: executor.ControlProtect, Inherent: true,
			Detail: "writes to protected paths (.git/hooks, .git/config, ...) are not denied while the command runs: after it (and before every later command while a background process runs) they are undone — new ones removed, changed ones restored — and reported as violations; a host program running git in the workspace meanwhile can execute a planted hook or config",
			Reason: "Landlock cannot deny writes below a writable directory without taking creation rights away from every directory above it, which would break git commit and every build at the root; Config.KernelProtect chooses that split instead",
			Remedy: "set Config.KernelProtect, or use the bwrap backend (read-only mounts)"})
	}
	tree := policyderive.Element{Class: policyderive.Looser, Subject: "process tree", Control: executor.ControlProcessTree, Inherent: true,
		Detail: "a process that double-forks out of the command's tree (its parent exits first) survives the command and keeps the sandbox's restrictions",
		Reason: "there is no PID namespace: the kill on timeout finds the command's descendants by their parents, and the protected-path guard stops counting the process",
		Remedy: "use the bwrap backend, or run where this process may make cgroup v2 child cgroups (root, or a delegated subtree)"}
	if f.cgroup != "" {
		pl.cgroup = true
		tree.Mitigated = "a cgroup v2 of each command's own, killed with cgroup.kill when the command ends, before the guard runs: no process of it survives"
	} else if orphans.on.Load() {
		tree.Mitigated = "this process is a child subreaper (Config.ReapOrphans): a process that leaves the command's tree becomes its child and is killed when any command ends, before the guard runs"
	} else if f.cgroupWhy != "" {
		tree.Reason += "; no cgroup of its own: " + f.cgroupWhy
	}
	add(tree)

	pl.looser = fid.Looser()
	pl.gaps = backend.Gaps(pl.looser)
	pl.blocking = backend.Gaps(fid.Blocking())
	if netDowngraded {
		pl.blocking = append(pl.blocking, backend.AllowListNoNamespace(errors.New(f.netnsWhy+netChildWhy(f))))
	}
	pl.guardTrees = backend.WritableTrees(pr)
	pl.rulePaths, pl.above = map[string]bool{}, map[string]bool{}
	for _, r := range rs.FS {
		pl.rulePaths[r.Path] = true
		for d := abspath.Parent(r.Path); !pl.above[d]; d = abspath.Parent(d) {
			pl.above[d] = true
			if d == "/" {
				break
			}
		}
	}
	if f.mounts != mountsNone {
		pl.mountTops, pl.mountMasks = mountRegions(pr, rs)
	}
	return pl
}

// withoutProtectMasks returns pr without the read-only masks and
// placeholders of protect rules: the guard enforces those (see
// Config.KernelProtect).
func withoutProtectMasks(pr *policyderive.Profile) *policyderive.Profile {
	drop := func(m policyderive.Mask) bool { return m.Reason == "protected" && m.Kind == policyderive.ReadOnly }
	if !slices.ContainsFunc(pr.Masks, drop) {
		return pr
	}
	q := *pr
	q.Masks = slices.DeleteFunc(slices.Clone(pr.Masks), drop)
	return &q
}

// namesSocket reports whether a grant of the profile is a Unix socket, or
// the policy names a socket found in the searched trees (Profile.Sockets).
func namesSocket(pr *policyderive.Profile) bool {
	var paths []string
	for _, l := range [][]policyderive.Access{pr.Read, pr.Write} {
		for _, a := range l {
			if a.Exists && !a.Dir && a.Special == policyderive.SpecialNone {
				paths = append(paths, a.Path)
			}
		}
	}
	for _, g := range pr.Grants {
		paths = append(paths, g.Path)
	}
	paths = append(paths, pr.Sockets...)
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&fs.ModeSocket != 0 {
			return true
		}
	}
	return false
}

// netChildWhy says why commands' children cannot make their network
// namespaces either, for a reason.
func netChildWhy(f features) string {
	switch {
	case f.mounts != mountsUserNS:
		return "; and commands get no user namespace of their own here"
	case f.childNetWhy != "":
		return "; and a command's child cannot make one in its user namespace: " + f.childNetWhy
	}
	return ""
}
