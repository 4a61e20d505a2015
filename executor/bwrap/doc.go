// Package bwrap runs commands under bubblewrap (bwrap): each command gets
// its own user, PID, mount, network, IPC, UTS and cgroup namespaces, a
// file system built from read-only and read-write binds of exactly what
// the policy grants, with masks over what it denies, and no capabilities.
//
//	x, err := bwrap.New(bwrap.Config{})   // *executor.UnavailableError names cause and fix
//	res, err := x.Run(ctx, &executor.Request{Command: "go test ./...", Dir: root, Root: root,
//		Home: home, Policy: p, Env: env})
//
// # How it works
//
// New finds bwrap (Config.Path, else "bwrap" on PATH), reads its version
// and the options its --help lists, reads the sysctls that restrict user
// namespaces, and runs a trial sandbox with the options every command
// gets (bwrap --unshare-all --unshare-user --disable-userns
// --new-session --die-with-parent --cap-drop ALL --ro-bind / / --proc
// /proc --dev /dev --tmpfs /tmp --clearenv -- /bin/sh -c :). When that
// fails, narrower trials name the cause (see Troubleshooting). Detection
// runs once per executor and takes about 10 ms (three bwrap runs).
//
// For every Request, Run derives the profile with policyderive (a
// Deriver with its mask-search cache, so an unchanged tree costs a
// fraction of a millisecond), renders it with policyderive.Bwrap — the
// rendered, parsed plan is cached by the profile's key — and assesses its
// fidelity: any looser element that is not inherent to mounts makes Run
// fail with *executor.UnenforceableError listing it, unless
// Config.BestEffort is set (then it runs, logs a warning, and Describe
// lists the gap). Before the start it looks at every mount destination
// that lies inside a host bind (see No host path is created), and the
// protected-path guard (internal/protectguard) records the protected
// paths of the writable trees.
//
// The command line is
//
//	bwrap --args 3 --json-status-fd 4 -- /bin/sh -c CMD
//
// with the options and the environment (--clearenv, then --setenv K V
// per entry of Request.Env) behind --args on a pipe: values stay out of
// the host's process list (/proc/PID/cmdline is readable by every user),
// and no single option is limited by execve's 128 KiB per argument. bwrap
// itself runs with an empty environment, so a variable like LD_PRELOAD in
// Request.Env reaches only the sandboxed command, never bwrap outside the
// sandbox. --json-status-fd tells whether bwrap executed the command: when
// it did not (a mount failed, /bin/sh could not be executed inside), Run
// returns *SetupError with bwrap's message instead of a Result with exit
// status 1. Executor.Args returns the same sandbox as one command line.
//
// bwrap is started through internal/procgroup from the process-wide
// launcher thread (internal/launcher.Default), which sets no_new_privs
// and is never closed. That matters for --die-with-parent: bwrap sets
// PR_SET_PDEATHSIG, which fires when the thread that forked bwrap exits,
// not when the process does; forking from an arbitrary goroutine's
// thread would kill sandboxes whenever the Go runtime retires that
// thread. The launcher also marks every other descriptor close-on-exec,
// so bwrap gets exactly 0-2, the --args pipe and the status pipe, and
// bwrap closes the last two before the command runs.
//
// After the command, the executor waits (at most a second) for the
// sandbox's init to be gone — bwrap's init is killed by --die-with-parent
// when bwrap exits, and every process of the PID namespace with it — then
// removes placeholder mount points and has the guard repair protected
// paths, reporting repairs in Result.Violations.
//
// A command killed by signal N reaches bwrap as status 128+N, which Run
// reports as ExitCode -1 and Signal N, like the other executors. bwrap
// reports a command's own `exit 130` the same way, so that is reported as
// a death by SIGINT too: the distinction is lost inside bwrap.
//
// # Flags
//
//   - --unshare-all: user, PID, mount, network, IPC, UTS, cgroup
//     namespaces; --share-net when the policy's network is full, and
//     under the network allow-list, where the executor (as root) starts
//     bwrap inside a private network namespace of the command's own
//     whose only listener is its proxy (package netproxy, on
//     127.0.0.1:3128; the proxy variables point there). bwrap is forked
//     from a launcher thread that entered the namespace and lives until
//     the command is reaped (--die-with-parent follows the thread). Not
//     root: bwrap makes its own network namespace (--unshare-net) and the
//     host program runs in it as the relay (Init): it listens on
//     127.0.0.1:3128, runs the command as its child and relays each
//     connection to the proxy over a Unix socket bound into the sandbox,
//     exiting with the command's status. The relay is an execute-only
//     (0111) copy of the program, made once per executor, so the command
//     cannot read the program. Without Init strict mode refuses the
//     allow-list (gap net-allowlist) and best effort runs with no network.
//   - --unshare-user also as root: uid 0 inside maps to the caller, and
//     with --cap-drop ALL root keeps no capability in the sandbox.
//   - --disable-userns (bwrap ≥ 0.8; Config.NestedUserNamespaces turns
//     it off): commands cannot create user namespaces of their own,
//     keeping that kernel attack surface out of reach (stricter: nested
//     sandboxes and rootless containers fail).
//   - --new-session: no controlling terminal, so TIOCSTI cannot inject
//     into the user's terminal.
//   - --die-with-parent: see above.
//   - --cap-drop ALL; no_new_privs comes from the launcher thread and
//     bwrap sets it too.
//   - --clearenv, --setenv: exactly Request.Env.
//   - --proc /proc, --dev /dev, --tmpfs /tmp: a procfs of the sandbox's
//     PID namespace, a minimal /dev (null, zero, full, random, urandom,
//     tty, a private devpts), a private /tmp.
//   - --chdir Request.Dir, then -- /bin/sh -c Request.Command.
//
// # Mount order
//
// As policyderive.Bwrap renders it: the base ("/" bound read-only or
// read-write when the policy grants it whole, as in trusted mode), /proc,
// /dev, /tmp; then grants, pins and masks ordered by depth so a deeper
// mount shadows the ones above it — read-only System binds (/usr, /etc,
// /opt, the merged-/usr symlinks), the root bound read-write (coding,
// trusted) or read-only (readonly), directories between the root and a
// mask bound onto themselves (pins: they cannot be renamed or removed,
// so `mv .git x` cannot carry a hook mask away), protected paths bound
// read-only (.git/hooks and .git/config as they are, directories as
// directories), denied files covered read-only by an empty file of mode
// 0000 (Run rewrites policyderive.Bwrap's `--ro-bind /dev/null P` as
// `--perms 0000 --ro-bind-data FD P`, one /dev/null descriptor per file,
// up to 256: a read fails with "Permission denied", as a model expects,
// where /dev/null would read as empty; Explain keeps the /dev/null form,
// which a command line can carry) and denied
// directories by an empty tmpfs, remounted read-only after everything is
// mounted. That realises the derivation's order — base, /dev, writable binds
// shallowest first, protected paths, masks — while a grant inside a mask
// can still open it again. The workspace root is mounted at its own path.
//
// # No host path is created
//
// bwrap creates the mount point of a destination that does not exist,
// and inside a writable bind of the workspace that would create it on the
// host. policyderive renders only existing grants and masks, but a path
// can vanish between derivation and start, so before each start the
// executor lstats every destination that lies inside an earlier host
// bind and leaves out the mounts whose destination is gone (a mask of a
// deleted file protects nothing), and derives once more when it did.
// The one mount point created on purpose is the placeholder: a
// write-denied path that does not exist yet (a denied or protected
// literal such as build/out/secret, .git/hooks in a repository without
// one) gets an empty read-only directory at its first missing component
// (a missing .git gets none: git init works, and the guard sanitizes the
// new repository after the command). Its
// mount point exists on the host while sandboxes use it; a process-wide
// count removes it (rmdir, without following symbolic links) when the
// last sandbox of this process using it has ended, and only if this
// process created it, so a directory someone filled meanwhile stays.
// The live mount points are an input of the derivation
// (policyderive.Deriver.DeriveWith): a derivation while the mount point
// exists (a concurrent command, a background process) would see an empty
// .git and mask inside it; it derives the same placeholder instead, so
// concurrent sandboxes share one mount point, and it derives again when
// the set changed before its placeholders are acquired. A path removed
// in the instant between the check and bwrap's mount makes bwrap fail
// its setup when it lies in a read-only bind (a socket under /run in
// trusted mode): Run then plans and starts once more from the tree as
// it is (Start reports the failure). Remaining: in a writable bind bwrap
// creates such a path, and another process (not this one) running a
// sandbox on the same workspace is not counted.
//
// # What is enforced
//
// Checked by the conformance suite (go test ./executor/bwrap, as root and
// as uid 65534):
//   - fs-read, fs-write: only granted paths exist in the sandbox; writes
//     only in read-write binds; the home directory, other users' files
//     and everything outside the grants are absent, whatever the route
//     (symbolic links, "..", /proc/self/root, /proc/1/root: /proc is the
//     sandbox's own).
//   - fs-metadata: ungranted paths do not exist; chmod, chown, utimes and
//     link on read-only binds and masks fail with EROFS or EXDEV; a
//     masked path's stat shows the mask (an empty file or directory), not
//     the real size, mode or times.
//   - protect: existing protected paths are read-only with pinned
//     parents; new ones are removed or restored after the command by the
//     guard (see Gaps).
//   - net-tcp, net-udp, net-abstract-unix: a network namespace with only
//     loopback under network none.
//   - signal, proc-info, process-tree: a PID namespace: host processes
//     cannot be seen or signalled; when the command's shell exits or
//     times out, bwrap's init and every process of the sandbox die,
//     double-forked daemons included.
//   - The process hygiene of every executor: new session, stdin
//     /dev/null, exact environment, descriptors 0-2 only, no_new_privs,
//     bounded output, tree kill on timeout.
//
// # Gaps
//
// Describe declares, for a coding-mode profile, what mounts cannot do:
//   - fs-new-files: a path matching a bare-name or glob deny or protect
//     pattern (.env*, **/.git/hooks) that is created while the command
//     runs is not masked: mounts cover what exists at the start. The
//     workspace derives again before every command, so the next command
//     is covered, and the guard removes new protected paths (a repository
//     initialised deeper inside) or restores changed ones when the command
//     ends; in between a host program running git there could execute a
//     planted hook. Background processes are repaired when they exit and
//     before every later command.
//   - net-unix, only where the policy names a socket in a path rule or
//     the allow-list relay runs (not root): a pathname Unix socket inside
//     a read-only grant can then be connected to (a read-only mount does
//     not stop connect(2)). Sockets under /run are hidden, /tmp is
//     private, and sockets outside the grants do not exist in the
//     sandbox. Everywhere else a seccomp filter (--seccomp, built by
//     internal/seccompbpf, the landlock executor's builder) refuses
//     socket(AF_UNIX), so no pathname socket can be reached wherever it
//     lives; stricter: a Unix socket server inside the sandbox cannot run
//     (socketpair works) and 32-bit (compat) programs do not run.
//   - fs-read: paths are resolved when the sandbox starts; a directory
//     replaced by a symbolic link between derivation and start (by a
//     background process, say) is followed by bwrap's mount. Also, where
//     a deny pattern has reads, paths matching it inside System trees
//     (/usr, /etc) are not searched and stay readable.
//   - Profiles beyond the mounts' reach are refused in strict mode (not
//     declared as host gaps, since they depend on the policy): a
//     bare-name or glob deny in a tree wider than the searched scope
//     (trusted mode reading "/" with denied_paths: [".env*"]), and a
//     sandbox needing more than MaxArgs (9000) bwrap arguments. With
//     network full, abstract Unix sockets of host processes are reachable
//     (they belong to the shared network namespace).
//
// Stricter than the policy (the command may fail where the policy would
// let it run): pinned directories cannot be renamed or removed; the
// placeholder keeps a denied path's missing parent from being created;
// /tmp is private
// even where the policy lets commands read the host's /tmp (trusted
// mode), so the host's /tmp content is invisible apart from grants bound
// back over it (a workspace under /tmp is); nested user namespaces are
// disabled.
//
// # Requirements
//
// Linux, bubblewrap 0.4 or later (0.8 for --disable-userns), and user
// namespaces: as root they always work; other users need unprivileged
// user namespaces (user.max_user_namespaces > 0, on Ubuntu 23.10 and
// later an AppArmor profile that allows bwrap to create them, on old
// Debian kernels kernel.unprivileged_userns_clone=1). A setuid bwrap does
// not help: cordon starts bwrap with no_new_privs, which disables setuid.
// Mounting a fresh /proc must be possible (it is not in some containers).
// New fails with *executor.UnavailableError naming the cause and the fix;
// tests skip with that reason unless CORDON_REQUIRE names bwrap.
//
// # Troubleshooting
//
// Ubuntu 24.04 restricts unprivileged user namespaces with AppArmor
// (kernel.apparmor_restrict_unprivileged_userns=1), and bwrap then fails
// with "setting up uid map: Permission denied" or "No permissions to
// create new namespace". Either give bwrap a profile that allows them:
//
//	# /etc/apparmor.d/bwrap
//	abi <abi/4.0>,
//	include <tunables/global>
//	profile bwrap /usr/bin/bwrap flags=(unconfined) {
//	  userns,
//	}
//
// and load it with apparmor_parser -r /etc/apparmor.d/bwrap, or lift the
// restriction for every program with sysctl -w
// kernel.apparmor_restrict_unprivileged_userns=0 (persist it in
// /etc/sysctl.d/). user.max_user_namespaces = 0 disables user namespaces
// for everyone: sysctl -w user.max_user_namespaces=15000.
//
// Inside a container, creating user namespaces is usually blocked by the
// container's seccomp or AppArmor profile (run it with --security-opt
// seccomp=unconfined --security-opt apparmor=unconfined, or
// --privileged), and mounting a fresh /proc fails when the container's
// /proc has masked or read-only submounts (Docker masks /proc/kcore,
// /proc/sys and others): run it with --security-opt
// systempaths=unconfined (Docker ≥ 20.10) or --privileged. cordon never
// falls back to binding the host's /proc, which would show every host
// process. Elsewhere, use the landlock backend.
//
// Running as root, the sandbox is uid 0 mapped to the host's uid 0
// without capabilities: root-owned files that only their owner may read
// (/etc/shadow, host keys under /etc/ssh) stay readable where a System
// path grants them. Run agents as an ordinary user.
//
// # Choices made here
//
//   - Config.ExtraBinds are approved grants (policy.Grant) for every
//     command: they open paths the policy asks about, never paths it
//     denies, and the masks of the derivation apply inside them — raw
//     extra binds would break the soundness invariant.
//   - Options go through --args always: measured against the same
//     options on the command line (BenchmarkBwrapRunTrue, executor vs
//     executor-inline) the pipe costs nothing measurable, and it keeps
//     environment values out of ps.
//   - A sandbox bwrap cannot set up is an error (*SetupError), not a
//     result; for background processes (Start) it shows as exit status 1
//     with bwrap's message in the output.
//   - Feature detection runs per executor, not per process, so a fixed
//     host (a sysctl changed) is seen by the next New.
package bwrap
