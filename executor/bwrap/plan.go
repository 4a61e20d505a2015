//go:build linux

package bwrap

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/internal/seccompbpf"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// opKind says what one bwrap option does to the sandbox's file system.
type opKind uint8

const (
	opOther   opKind = iota // no mount: namespaces, capabilities, --chdir
	opBindRW                // --bind, --dev-bind: a read-write bind of a host path
	opBindRO                // --ro-bind: a read-only bind of a host path
	opFS                    // --tmpfs, --proc, --dev, --dir: a file system of the sandbox's own
	opSymlink               // --symlink
	opRemount               // --remount-ro
)

// option is one bwrap option with its operands, as the renderer emitted it.
type option struct {
	args []string
	kind opKind
	dest string
	// check is set when the destination lies strictly inside a host bind
	// made earlier: if it does not exist when the command starts, bwrap
	// would create it on the host (inside a read-write bind) or fail
	// (inside a read-only one), so Run looks first.
	check bool
	// placeholder is set for a mask of a path that does not exist by
	// design (Profile.MountPoints): bwrap creates its mount point, and
	// Run removes it afterwards.
	placeholder bool
	// parentRW is set when the destination's nearest enclosing mount is a
	// read-write host bind.
	parentRW bool
	// of is, for --remount-ro, the index of the option that mounted dest.
	of int
}

// arity is the number of operands of every option the renderer may emit
// (those it emits today, and the mount and namespace options it could
// reasonably add). Anything else is refused: the executor must know
// where an option mounts to keep host paths from being created.
var arity = map[string]int{
	"--unshare-all": 0, "--share-net": 0, "--unshare-user": 0, "--unshare-pid": 0, "--unshare-net": 0,
	"--unshare-ipc": 0, "--unshare-uts": 0, "--unshare-cgroup": 0, "--unshare-cgroup-try": 0,
	"--new-session": 0, "--die-with-parent": 0, "--disable-userns": 0, "--clearenv": 0,
	"--cap-drop": 1, "--proc": 1, "--dev": 1, "--tmpfs": 1, "--mqueue": 1, "--remount-ro": 1, "--chdir": 1,
	"--dir": 1, "--hostname": 1, "--unsetenv": 1, "--perms": 1, "--size": 1,
	"--bind": 2, "--ro-bind": 2, "--dev-bind": 2, "--bind-try": 2, "--ro-bind-try": 2, "--dev-bind-try": 2,
	"--symlink": 2, "--setenv": 2, "--chmod": 2,
}

var kinds = map[string]opKind{
	"--bind": opBindRW, "--dev-bind": opBindRW, "--bind-try": opBindRW, "--dev-bind-try": opBindRW,
	"--ro-bind": opBindRO, "--ro-bind-try": opBindRO,
	"--tmpfs": opFS, "--proc": opFS, "--dev": opFS, "--dir": opFS, "--mqueue": opFS,
	"--symlink": opSymlink, "--remount-ro": opRemount,
}

// plan is what Run needs for one derived profile: the options parsed from
// policyderive.Bwrap, which of them Run must look at on the host before
// each start, the fidelity assessment, and the trees the protected-path
// guard watches. Plans are cached by profile key; they are immutable.
type plan struct {
	options []option
	// checks are the indexes of options with check set.
	checks []int
	// encoded is every option NUL-terminated, for --args, used when no
	// option has to be left out.
	encoded []byte
	nargs   int
	// dataEncoded is encoded with its hidden files rewritten by dataOpts
	// (dataN of them), made once with the plan where bwrap has
	// --ro-bind-data; Run uses it when no option has to be left out.
	dataEncoded []byte
	dataN       int
	// placeholders are the masks of paths that do not exist by design,
	// by destination: bwrap creates their mount points on the host.
	placeholders map[string]policyderive.Mask

	fidelity *policyderive.Fidelity
	// blocking are the looser elements strict mode refuses.
	blocking   []executor.Gap
	looser     []policyderive.Element
	guardTrees []string
	// netns: bwrap starts in a private network namespace whose only
	// listener is the allow-list proxy (root); relay: the host program
	// to bind into the sandbox as the relay to the proxy instead (not
	// root, bwrap's own network namespace).
	netns bool
	relay string
	// seccomp is the filter bwrap installs before the command (--seccomp):
	// socket(AF_UNIX) refused, when the policy names no socket and no
	// relay needs one; nil otherwise.
	seccomp []byte
}

// UnknownOptionError reports a renderer argument the executor does not
// know how to place; the renderer and the executor are out of step.
type UnknownOptionError struct {
	Option string
}

func (e *UnknownOptionError) Error() string {
	return fmt.Sprintf("bwrap executor: policyderive.Bwrap emitted %q, which this executor does not know", e.Option)
}

// newPlan renders pr and parses the arguments. disableUserns adds
// --disable-userns after --unshare-user.
func newPlan(pr *policyderive.Profile, disableUserns bool) (*plan, error) {
	var netWhy error
	relay := ""
	if pr.Network == policy.NetworkAllowList {
		if netWhy = netallow.Check(); netWhy != nil {
			// Not root: bwrap makes the command's network namespace
			// (--unshare-net, lo up) and the host program runs in it as
			// the relay to the proxy's Unix socket (Init); without the
			// relay the command gets no network at all.
			cp := *pr
			cp.Network = policy.NetworkNone
			pr = &cp
			if exe, err := relayExe(); err == nil {
				relay, netWhy = exe, nil
			} else {
				netWhy = fmt.Errorf("%v; and %w", netWhy, err)
			}
		}
	}
	args, fid := policyderive.Bwrap(pr)
	if relay != "" {
		fid.Elements = append(fid.Elements, policyderive.Element{Class: policyderive.Exact, Subject: "network allow-list", Control: executor.ControlNetAllowList,
			Detail: "bwrap's own network namespace (only loopback); inside it the host program (bwrap.Init) listens on 127.0.0.1:3128 and relays every connection to the executor's proxy over a Unix socket bound into the sandbox: nothing else is reachable"})
	}
	if netWhy != nil {
		fid.Elements = append(fid.Elements, policyderive.Element{Class: policyderive.Stricter, Subject: "network allow-list", Control: executor.ControlNetAllowList,
			Detail: "commands get no network at all: the allow-list's proxy cannot be offered",
			Reason: "bwrap must be started in a private network namespace whose only listener is the proxy: " + netWhy.Error(),
			Remedy: "run as root (a private network namespace needs CAP_SYS_ADMIN)"})
	}
	seccomp, err := unixFilter(pr, relay, fid)
	if err != nil {
		return nil, err
	}
	placeholders := map[string]policyderive.Mask{}
	for _, m := range pr.Placeholders() {
		placeholders[m.Path] = m
	}
	ops, err := parseOptions(args, placeholders, disableUserns)
	if err != nil {
		return nil, err
	}
	pl := &plan{options: ops, fidelity: fid, placeholders: map[string]policyderive.Mask{}, netns: pr.Network == policy.NetworkAllowList, relay: relay, seccomp: seccomp}
	for i, op := range ops {
		if op.check {
			pl.checks = append(pl.checks, i)
		}
		if op.placeholder {
			pl.placeholders[op.dest] = placeholders[op.dest]
		}
	}
	pl.encoded, pl.nargs = encode(pl.options, nil)
	assess(pl, pr)
	if netWhy != nil {
		pl.blocking = append(pl.blocking, backend.AllowListNoNamespace(netWhy))
	}
	return pl, nil
}

// parseOptions splits the renderer's arguments into options and marks
// each destination that lies strictly inside an earlier host bind (check)
// and the placeholders among them.
func parseOptions(args []string, placeholders map[string]policyderive.Mask, disableUserns bool) ([]option, error) {
	var ops []option
	for i := 0; i < len(args); {
		name := args[i]
		n, ok := arity[name]
		if !ok || i+n >= len(args) {
			return nil, &UnknownOptionError{Option: name}
		}
		op := option{args: args[i : i+1+n : i+1+n], kind: kinds[name], of: -1}
		if op.kind != opOther {
			op.dest = args[i+n]
		}
		ops = append(ops, op)
		if name == "--unshare-user" && disableUserns {
			ops = append(ops, option{args: []string{"--disable-userns"}, of: -1})
		}
		i += 1 + n
	}
	for i := range ops {
		op := &ops[i]
		if op.kind == opOther {
			continue
		}
		if op.kind == opRemount {
			op.of = lastMount(ops[:i], op.dest, true)
			continue
		}
		c := lastMount(ops[:i], op.dest, false)
		if c < 0 {
			continue // in the sandbox's own root (a tmpfs): creating it is harmless
		}
		cover := ops[c]
		op.parentRW = cover.kind == opBindRW
		if (cover.kind == opBindRW || cover.kind == opBindRO) && op.dest != cover.dest {
			op.check = true
			_, ok := placeholders[op.dest]
			op.placeholder = ok && op.kind == opFS
		}
	}
	return ops, nil
}

// lastMount returns the index of the last option in ops that mounts at or
// above dest (exactly at dest when exact), or -1.
func lastMount(ops []option, dest string, exact bool) int {
	for i := len(ops) - 1; i >= 0; i-- {
		o := ops[i]
		if o.kind == opOther || o.kind == opRemount || o.kind == opSymlink {
			continue
		}
		if exact && o.dest == dest || !exact && abspath.Within(dest, o.dest) {
			return i
		}
	}
	return -1
}

// encode joins the options' arguments NUL-terminated, leaving out those
// whose index is in skip; a --remount-ro of a skipped option goes too.
func encode(ops []option, skip map[int]bool) ([]byte, int) {
	n := 0
	size := 0
	for _, o := range ops {
		for _, a := range o.args {
			size += len(a) + 1
		}
	}
	b := make([]byte, 0, size)
	for i, o := range ops {
		if skip[i] || o.kind == opRemount && skip[o.of] {
			continue
		}
		for _, a := range o.args {
			b = append(b, a...)
			b = append(b, 0)
			n++
		}
	}
	return b, n
}

// assess turns the renderer's fidelity report into gaps, and adds what
// the executor itself contributes.
func assess(pl *plan, pr *policyderive.Profile) {
	fid := pl.fidelity
	add := func(e policyderive.Element) { fid.Elements = append(fid.Elements, e) }
	add(policyderive.Element{Class: policyderive.Exact, Subject: "process tree", Control: executor.ControlProcessTree,
		Detail: "a PID namespace: when the command's shell exits or is killed, bwrap's init and every process of the sandbox die with it (--die-with-parent), double-forked daemons included"})
	add(policyderive.Element{Class: policyderive.Exact, Subject: "proc", Control: executor.ControlProcInfo,
		Detail: "a fresh /proc of the sandbox's PID namespace: host processes are not listed"})
	if slices.ContainsFunc(pr.Rules, func(r policyderive.Rule) bool { return r.List == "protect" }) {
		add(policyderive.Element{Class: policyderive.Exact, Subject: "protected paths", Control: executor.ControlProtect,
			Detail: "existing protected paths are bound read-only (directories as directories, their parents pinned); protected paths created during the command are removed or restored after it by the protected-path guard"})
	}
	pl.looser = fid.Looser()
	pl.blocking = backend.Gaps(fid.Blocking())
	pl.guardTrees = backend.WritableTrees(pr)
}

// unixFilter returns the seccomp program that refuses socket(AF_UNIX),
// and turns fid's declared Unix-socket gap into what it enforces: masks
// hide the sockets the derivation finds, but no mount stops connect(2)
// to a socket in a System tree, in trusted mode's read of the whole disk
// or created while the command runs. Without AF_UNIX sockets none can be
// reached; socketpair(2) still works. A policy that names a socket, and
// the allow-list relay (which reaches the proxy through one), keep the
// sockets and the declared gap; so does an architecture the filter
// builder does not know.
func unixFilter(pr *policyderive.Profile, relay string, fid *policyderive.Fidelity) ([]byte, error) {
	if len(pr.Sockets) > 0 || relay != "" || !seccompbpf.Supported(runtime.GOARCH) {
		return nil, nil
	}
	// io_uring too: its socket and connect operations do not pass
	// through the system calls a filter sees.
	prog, err := seccompbpf.Build(seccompbpf.Spec{Unix: true, IOURing: true}, runtime.GOARCH)
	if err != nil {
		return nil, err
	}
	backend.UnixSocketsRefused(fid, "a seccomp filter (bwrap --seccomp)", "32-bit (compat) programs do not run (every compat system call fails with ENOSYS), and io_uring is refused (EPERM)")
	return seccompbpf.Bytes(prog), nil
}
