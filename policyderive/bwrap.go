package policyderive

import (
	"fmt"

	"github.com/cordon-sandbox/cordon/policy"
)

// Bwrap renders the profile as bubblewrap arguments (without the bwrap
// program itself, the environment and the command):
//
//	--unshare-all [--share-net] --unshare-user --new-session --die-with-parent --cap-drop ALL
//	[--ro-bind / / | --bind / /]  --proc /proc  --dev /dev  --tmpfs /tmp
//	grants, pins and masks by depth  --remount-ro for each tmpfs mask  --chdir CWD
//
// The backend appends the environment and the command:
// `--clearenv --setenv K V ... -- /bin/sh -c CMD`, or runs bwrap with
// exactly the request's environment (which keeps values out of the
// argument list, visible in ps) and appends `-- /bin/sh -c CMD`.
//
// Grants, pins and masks are ordered by depth, so a deeper mount shadows
// the ones above it: read-only binds (System paths, read grants), then
// at equal depth writable binds, pins (`--bind P P`, so that directories
// holding masks cannot be renamed or removed), read-only masks
// (`--ro-bind P P`), hidden directories (`--tmpfs P`, remounted
// read-only after everything is mounted, so grants inside them can still
// be mounted) and hidden files (`--ro-bind /dev/null P`). Grants that do
// not exist are skipped, never created; placeholders are the only mount
// points bwrap creates on the host (Profile.MountPoints).
func Bwrap(pr *Profile) ([]string, *Fidelity) {
	f := &Fidelity{Backend: "bwrap"}
	args := []string{"--unshare-all"}
	switch pr.Network {
	case policy.NetworkFull:
		args = append(args, "--share-net")
		f.exact("network", policy.ControlNetTCP, "", "full: the host network is shared")
		f.looser("abstract unix sockets", policy.ControlNetAbstract, "", "abstract Unix sockets of host processes can be reached", "they belong to the network namespace, which network full shares", "use network none", true)
	case policy.NetworkAllowList:
		// The executor starts bwrap inside a private network namespace
		// whose only listener is its proxy; bwrap shares that one.
		args = append(args, "--share-net")
		f.exact("network", policy.ControlNetTCP, "", AllowListNetwork)
		f.exact("abstract unix sockets", policy.ControlNetAbstract, "", "unreachable: a private network namespace")
	default:
		f.exact("network", policy.ControlNetTCP, "", "none: a new network namespace with only loopback, TCP and UDP included")
		f.exact("abstract unix sockets", policy.ControlNetAbstract, "", "unreachable: a new network namespace")
	}
	args = append(args, "--unshare-user", "--new-session", "--die-with-parent", "--cap-drop", "ALL")
	f.exact("signals", policy.ControlSignal, "", "a new PID namespace: host processes cannot be signalled")

	ops, rootKind, hasRoot := mountPlan(pr, true, true)
	if hasRoot {
		if rootKind == mountRW {
			args = append(args, "--bind", "/", "/")
		} else {
			args = append(args, "--ro-bind", "/", "/")
		}
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	f.exact("tmp", policy.ControlFSWrite, "", "private /tmp (tmpfs)")
	var remount []string
	for _, op := range ops {
		switch op.kind {
		case mountRO, mountMaskRO:
			args = append(args, "--ro-bind", op.path, op.path)
		case mountLink:
			args = append(args, "--symlink", op.target, op.path)
		case mountRW, mountPin:
			args = append(args, "--bind", op.path, op.path)
		case mountMaskDir:
			args = append(args, "--tmpfs", op.path)
			remount = append(remount, op.path)
		case mountMaskFile:
			args = append(args, "--ro-bind", "/dev/null", op.path)
		}
	}
	for _, p := range remount {
		args = append(args, "--remount-ro", p)
	}
	args = append(args, "--chdir", pr.Cwd)

	grantElements(f, pr, true)
	mountElements(f, pr)
	f.Elements = append(f.Elements, maskElements(pr, "bwrap")...)
	return args, f
}

// mountElements reports what every mount backend shares: pins, the
// metadata and socket behaviour of binds, the start-time resolution.
func mountElements(f *Fidelity, pr *Profile) {
	for _, p := range pr.Pinned {
		f.stricter("pin "+p, policy.ControlFSWrite, "", fmt.Sprintf("%s cannot be renamed or removed (it is a mount point)", p), "it holds a mask, which must stay at the path it guards")
	}
	f.exact("metadata", policy.ControlFSMetadata, "", "ungranted paths do not exist in the sandbox; read-only binds refuse chmod and chown")
	f.looser("unix sockets", policy.ControlNetUnix, "", "pathname Unix sockets in System trees, in read grants outside the searched trees (trusted mode's whole-disk read) and created while the command runs can be connected to (no mount stops connect(2)); the sockets found in the searched trees (the root, the granted home, explicit grants) and under /run are hidden unless a path rule or grant names them", "mounts restrict file access, not socket connections", "use network none and narrow read grants, or the landlock backend with ABI ≥ 9", true)
	f.add(Element{Class: Looser, Subject: "start-time resolution", Control: policy.ControlFSRead, Inherent: true, Concurrent: true,
		Detail: "paths are resolved when the sandbox starts: a directory replaced by a symbolic link between derivation and start (by a background process, for instance) is followed",
		Reason: "mounts name paths, not open files", Remedy: "derive right before starting (the workspace does), and keep background processes to a minimum"})
}
