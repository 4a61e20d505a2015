// Package docker runs cordon commands in a Docker container, sandboxed by
// the same policy as every other backend: the workspace root is bound at
// its own path, what the policy denies is masked, the rest of the host is
// not there, and the container has no network unless the policy grants
// it. It talks to the Docker Engine API with the official client
// (github.com/docker/docker/client), so any engine DOCKER_HOST or the
// Docker CLI's current context names will do — a remote one included.
//
//	x, err := docker.New(docker.Config{})           // host mode
//	x, err := docker.New(docker.Config{Image: img}) // image mode, a local image
//	defer x.Close()                                  // removes the container
//	res, err := x.Run(ctx, &executor.Request{Command: "go test ./...", ...})
//
// # How it works
//
// One container per Executor (a workspace session). The first command
// derives the profile (policyderive.Derive with a cached Deriver),
// renders it as mounts (policyderive.OCIMounts, then DockerMounts),
// creates the container with those mounts and starts it; its pid 1 is a
// /bin/sh idle loop. Every later command derives again: when the mounts
// come out the same (a digest of mounts and network mode), it runs in
// the same container; when they differ — a denied file appeared, a grant
// was approved for this one command, the policy changed — a new
// container with the new mounts takes over, and the old one is removed
// as soon as nothing runs in it any more (a background process keeps
// its container). A command never runs with stale masks.
//
// Explain derives and assesses a request as Run does and returns that
// plan — the mounts exactly as the engine gets them (the command
// runner's per-container control directory shown as ControlDirShown),
// the network mode, the seccomp profile, the fidelity and strict mode's
// verdict — without starting anything; sandbox-probe derive prints it,
// and TestExplainIsRun compares it with the container's mounts read back
// from the engine. Assess returns that plan's gaps, so a workspace can
// decide sandbox auto-allow for its own policy.
//
// Commands reach the container in one of two ways:
//
//   - The command runner (the default with a local engine, on Linux: the
//     FIFOs live on the host and must be the container's): right after
//     the container starts, one exec runs a small /bin/sh loop that reads
//     request ids on its stdin. For each command the executor writes a
//     script (exactly Request.Env, cd Request.Dir, exec /bin/sh -c
//     Command) and three FIFOs (control, stdout, stderr) into a host
//     directory that is bound read-only into the container at
//     /.cordon-run, and sends the id. A supervisor in the container runs
//     the script in a new session (setsid), reports its pid and exit
//     status on the control FIFO, and kills what is left of its process
//     group. Output arrives through the FIFOs, byte-exact, stdout and
//     stderr apart. This costs a few forks instead of a runtime exec.
//   - An exec per command (a remote engine, a User other than the
//     caller's, Config.ExecPerCommand, or an environment name that is
//     not a shell identifier): /bin/sh -c WRAPPER runs the command as its
//     child; the wrapper reports its pid and the exit status on stderr
//     (the executor strips both lines, demultiplexed with stdcopy) and
//     unsets the variables the engine adds to every exec (PATH,
//     HOSTNAME, HOME, the image's ENV) unless Request.Env sets them.
//
// Either way the environment is exactly Request.Env, stdin is /dev/null,
// only descriptors 0-2 are open, the command leads a session of its own
// with no controlling terminal, and output is bounded (internal/outbuf).
// The engine's exec API cannot signal an exec, so a timeout, a cancelled
// context or Process.Kill runs a second exec that stops (SIGSTOP, in
// rounds, so nothing can fork away) and then kills the command's tree —
// every process whose parent, process group or session is in it; if that
// fails, the container is killed and the next command gets a new one.
// Close removes the executor's containers. Containers carry labels
// (LabelExecutor and the creating process's host, boot id, pid and start
// time), and New removes the containers of executors whose process has
// died, with their placeholder mount points.
//
// # Isolation settings
//
//   - mounts from policyderive.OCIMounts: the workspace root and the
//     policy's grants bound at their own paths (read-only or read-write,
//     rprivate, nosuid, nodev), masks (hidden directories as empty
//     read-only tmpfs, hidden files as /dev/null, read-only paths as
//     read-only binds, pinned ancestors), a private /tmp tmpfs; nothing
//     is ever created on the host except the placeholders' mount points
//     (an empty .git in a fresh workspace while the container lives,
//     removed when it goes);
//   - a read-only root file system, CapDrop ALL, no-new-privileges, the
//     containers/common default seccomp profile (v0.64.2, pkg/seccomp,
//     converted to the engine's JSON and sent as SecurityOpt
//     seccomp=<json>), which the executor tightens unless
//     Config.NestedUserNamespaces: unshare fails with EPERM, clone with
//     namespace flags and clone3 with ENOSYS, so commands cannot create
//     user namespaces (the containers/common profile allows them);
//   - network mode none unless the policy's network is full (then
//     Config.FullNetwork, default host: the host's network namespace, as
//     the other backends share it); under the network allow-list the
//     container keeps network mode none and each command gets a listener
//     of the executor's proxy (package netproxy) on a port of its own
//     inside the container's network namespace — which the executor
//     enters by the container's pid, so it needs a local engine and
//     CAP_SYS_ADMIN (root); elsewhere strict mode refuses the allow-list
//     (gap net-allowlist) and best effort runs with no network. The
//     proxy variables name the command's port; its listener and tunnels
//     are closed when it ends;
//   - memory (swap included) and process limits (DefaultMemory,
//     DefaultPids), private IPC, PID, mount and UTS namespaces, log
//     driver none, image health checks disabled;
//   - the user: the caller's uid:gid unless Config.User, so files written
//     in the workspace keep their owner;
//   - the engine's own socket (and /run/docker.sock, containerd's and
//     podman's) is never mounted, and /dev/null is bound over it wherever
//     a mounted tree holds it — even inside the workspace root; the
//     engine's data root is never visible either.
//
// A read grant of "/" (trusted mode) cannot be a bind over the
// container's own root: the host's top-level entries are bound one by
// one instead, except /proc, /dev, /sys, /tmp, symbolic links and, in
// image mode, the image's own system directories (stricter). The engine
// refuses a private bind whose tree holds its data root; where the host
// mount propagates (systemd hosts) the bind is made rslave and the data
// root covered by an empty tmpfs, elsewhere the bind is rebuilt from
// binds of its entries around the data root (stricter: nothing can be
// created directly in the rebuilt directories). Both show in the
// fidelity report and Describe.
//
// # Host mode
//
// Config.Image "" runs in host mode: HostImage, an image with an empty
// root file system that New imports from an empty tar archive when it is
// missing (no registry involved), with the host's System paths
// (policy.Policy.SystemPaths: /usr, /bin, /lib, /etc minus its secrets,
// ...) bound read-only, so commands use the host's shell and tools
// exactly as bwrap and landlock do. In image mode the image provides its
// own system directories; System paths that are not among
// policy.DefaultSystem (the conformance probe's directory, a user's
// /opt/tools) are bound from the host.
//
// # Remote engines
//
// The client honours DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH and
// DOCKER_API_VERSION (client.FromEnv), then, when DOCKER_HOST is unset,
// the Docker CLI's current context (DOCKER_CONTEXT or config.json's
// currentContext, with its TLS material), then Config.ClientOptions; it
// negotiates the API version (Docker 19.03, API 1.40, or later). Bind
// sources are paths on the engine's host: the workspace and the System
// paths must exist there at the same paths (a shared file system). With
// an engine reached other than through a local Unix socket every command
// is an exec of its own (the command runner's FIFOs need a shared
// kernel), the executor cannot check bind sources before creating the
// container, and the protected-path guard runs on this host's view of
// the workspace. ssh:// contexts need the socket forwarded (the client
// has no SSH transport).
//
// # Gaps
//
// Describe declares what the executor cannot enforce, with the reason;
// the conformance suite checks every other control. On a typical host:
//
//   - fs-new-files: masks cover the paths that exist when the container
//     starts. A denied or protected path created while a command runs is
//     not masked for that command; the next command's derivation sees it
//     and gets a new container that masks it, and the protected-path
//     guard (internal/protectguard) removes or restores protected paths
//     after every command.
//   - net-unix, only where the policy names a socket in a path rule or
//     the client is not Linux (it sends the engine no profile of its
//     own): a read-only mount does not stop connect(2), so Unix sockets
//     inside granted trees can be reached (except container engines').
//     Everywhere else the container's seccomp profile refuses
//     socket(AF_UNIX) and socketcall(2) (unixRules): no pathname socket
//     can be reached wherever it lives; stricter: a Unix socket server
//     inside the container cannot run, and 32-bit programs that use
//     socketcall(2) get no sockets. The profile is part of the
//     container's key.
//   - fs-read: mounts are resolved when the container starts; a directory
//     replaced by a symbolic link between derivation and start is
//     followed.
//   - process-tree, with an engine that does not run on this host's
//     kernel only (see "Process tree" below): a process that left its
//     command's tree before the kill (a double fork whose parent has
//     exited) runs on until the container is removed (Close, or new
//     mounts).
//   - Bare-name or glob denies outside the searched trees (trusted mode
//     reading "/" with denied_paths [.env*]) cannot be masked: strict
//     mode refuses with *executor.UnenforceableError; best effort runs
//     and Describe lists what was not enforced.
//
// Commands of one session share a container, a user and a PID namespace:
// they can signal one another, and can see (and disturb) each other's
// FIFOs and scripts in the read-only control directory.
//
// # Process tree
//
// When Run returns no process of the command is left. A process that
// leaves its command's tree (setsid and a double fork whose parent exits
// first) is reparented by the kernel to the container's init, the idle
// shell of the container's main process. With the engine on this host's
// kernel (a local socket, and the container's init found in this host's
// /proc with the container's id in its cgroup) the executor sweeps the
// container from the host before and after every command, the second
// time before the protected-path guard's last scan: every child of the
// container's init is killed with all its descendants
// (procgroup.KillTrees: stopped in rounds, pinned by pidfds, killed,
// waited for) but init's idle sleep (in init's session) and the
// supervisors of the runner's requests still under way. A supervisor is
// known from the host, not from what it or the command says: it is in a
// live runner's session, where no command's process can be (a session
// id is inherited or is the pid of the process that called setsid, and
// each command starts in a session of its own), and holds as descriptor
// 3 the control FIFO of a request the executor has not seen end. So a
// command that forges its report on the control FIFO and stays, or that
// replays a request id into the runner's stdin, leaves nothing once its
// request is over. Commands run as execs of their own are children of
// the engine's shim, not of init. Processes
// of running commands and background processes (Start) are in their own
// trees and are kept; one that left such a tree is killed by the next
// sweep, whichever command's. If the sweep cannot kill what it found
// (another user's processes: it needs root or the container's user) the
// container is killed (and replaced for the next command).
//
// The sweep would be moot if a command could make init or the runner run
// code for it, so the container's processes cannot reach into one
// another: the seccomp profile refuses ptrace, process_vm_readv,
// process_vm_writev and pidfd_getfd whatever the containers/common
// default allows, and /proc is mounted read-only (HostConfig
// ReadonlyPaths), which closes /proc/PID/mem for writing. Debuggers and
// strace do not work in the container (stricter). With a remote engine
// the sweep cannot see the container's processes: Describe declares the
// process-tree gap (inherent), and the first container that turns out to
// run on another kernel (an engine in a virtual machine behind a local
// socket) switches the sweep off with a warning and a note in that
// command's Result.Violations.
//
// # Requirements
//
// A Docker Engine (20.10 or later tested; API 1.40 or later) running
// Linux containers with seccomp support (best effort runs without), and
// either a local image (Config.Image; cordon never pulls) or host mode.
// Images need /bin/sh (busybox is enough); the command runner needs
// setsid in the image (busybox and util-linux have it), else commands run
// as execs. The user must be able to use the engine (its socket is root's
// or the docker group's). github.com/containers/common/pkg/seccomp
// builds without cgo and the seccomp build tag; on clients other than
// Linux it is not compiled in, and the engine's default profile applies.
//
// # Troubleshooting
//
//   - "no Docker Engine answers": start dockerd, or set DOCKER_HOST. For
//     cordon's own tests, make docker-up starts a private dockerd (its
//     own socket, data root, exec root and pid file under build/docker)
//     and set -a; . build/docker/env; set +a points DOCKER_HOST at it; make docker-down
//     stops it.
//   - "image ... is not present": no registry is reachable, so build the
//     image locally. The repository does it with scripts/docker.sh image
//     (make docker-up): a root file system made from the static busybox
//     of busybox-static (applet links, /etc/passwd, a sticky /tmp),
//     packed reproducibly and imported with docker import; its name is in
//     CORDON_DOCKER_IMAGE. docker load -i IMAGE.tar works too, and host
//     mode needs no image at all.
//   - "must use either propagation mode rslave or rshared" cannot occur:
//     see Isolation settings for how binds around the engine's data root
//     are made.
//   - A command that cannot start (the working directory is missing in
//     the container, /bin/sh is missing from the image) fails with
//     *SetupError; a container that cannot be created or started too,
//     with the engine's message.
//   - Leftover containers of a killed program are removed by the next
//     New on the same host; by hand: docker rm -f $(docker ps -aq
//     --filter label=org.cordon-sandbox.executor).
//
// # Choices
//
//   - pid 1 is the executor's own /bin/sh loop rather than docker-init:
//     a command's kill -KILL -1 kills every process it may signal, which
//     would include docker-init's only child and with it the container;
//     pid 1 itself cannot be signalled from inside, and its wait reaps
//     orphans.
//   - A command killed by signal N is reported as ExitCode -1 and Signal
//     N; shells report that and a command's own exit 128+N alike, so
//     exit 130 reads as killed by SIGINT (as with bwrap).
//   - Busybox's sh exports a PATH of its own when it starts without one;
//     when Request.Env has no PATH (and the image's shell does that) the
//     command runs as "unset PATH" followed by a newline and Command.
//   - Values in the runner's script are quoted with executor.ShellQuote
//     (single quotes, which POSIX shells take byte for byte, newlines
//     and bytes that are not UTF-8 included).
//   - A container that cannot be used any more (its exec fails before the
//     command ran) is replaced and the command retried once in the new
//     one.
package docker
