package seatbelt

import (
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// plan is what Run enforces for one derived profile: the validated
// sandbox-exec command line without the command (the rendered SBPL text
// and parameters in it), the fidelity assessment and the trees the protected-path
// guard watches. Plans are pure data, computed by assess without system
// calls, cached by profile key and immutable.
type plan struct {
	key string
	// prefix is Argv's result up to /bin/sh.
	prefix []string
	// fidelity is the renderer's report with this backend's additions.
	fidelity *policyderive.Fidelity
	// looser are the looser elements (inherent ones included), blocking
	// the gaps strict mode refuses.
	looser   []policyderive.Element
	blocking []executor.Gap
	// guardTrees are the writable directory grants, watched by the
	// protected-path guard.
	guardTrees []string
}

// Subjects of the elements this backend adds to the renderer's report.
const (
	subjProcessTree = "process tree"
	subjProtect     = "protected paths"
	subjProcInfo    = "process information"
)

// assess renders pr as SBPL, validates the command line it makes and
// adds what is inherent to running it under sandbox-exec.
func assess(program string, pr *policyderive.Profile) (*plan, error) {
	allowList := pr.Network == policy.NetworkAllowList
	if allowList {
		// No proxy runs for seatbelt commands yet, and the rule for its
		// port would reach whatever listens there on the host: render no
		// network, and refuse the allow-list in strict mode (below).
		cp := *pr
		cp.Network = policy.NetworkNone
		pr = &cp
	}
	text, params, fid := policyderive.SBPL(pr)
	prefix, err := argvPrefix(program, text, params)
	if err != nil {
		return nil, err
	}
	add := func(e policyderive.Element) { fid.Elements = append(fid.Elements, e) }
	add(policyderive.Element{Class: policyderive.Looser, Subject: subjProcessTree, Control: executor.ControlProcessTree, Inherent: true,
		Detail: "a process that double-forks out of the command's tree (its parent exits first) survives the command and keeps the sandbox's restrictions",
		Reason: "macOS has no PID namespace: the kill on timeout finds the command's descendants in the process table by process group and parent, and the protected-path guard stops counting the process",
		Remedy: "use the docker backend"})
	add(policyderive.Element{Class: policyderive.Looser, Subject: subjProtect, Control: executor.ControlProtect, Inherent: true,
		Detail: "while the command runs, renaming a repository's .git away (mv .git x; write x/hooks/...; mv x .git) changes protected files: Seatbelt matches the path an operation names, not the file, and the renamed tree has other paths; after the command (and before every later command while a background process runs) the guard undoes such changes and reports them as violations; a host program running git in the workspace meanwhile can execute a planted hook or config",
		Reason: "the rules deny writes to paths matching .git/hooks and .git/config at any depth, and to bare-name protected files (.bashrc, ...) under any directory, but do not pin the directories above them; hard links are not a way around them as far as is known (the profile allows no file-link operation), and the guard would undo such changes too",
		Remedy: "none needed for files created under protected names; use the bwrap or docker backend for read-only mounts"})
	add(policyderive.Element{Class: policyderive.Looser, Subject: subjProcInfo, Control: executor.ControlProcInfo, Inherent: true,
		Detail: "the process table (every process's id, parent, user and name, through the kern.proc sysctls that ps uses) and host facts (hardware, kernel version, host name) are readable; inspecting other processes (process-info*: their arguments, environment, open files) is limited to the sandbox's own",
		Reason: "the profile allows sysctl-read, which a shell and most programs need to start",
		Remedy: "use the docker backend"})

	pl := &plan{key: pr.Key(), prefix: prefix, fidelity: fid, looser: fid.Looser()}
	pl.blocking = backend.Gaps(fid.Blocking())
	if allowList {
		pl.blocking = append(pl.blocking, backend.AllowListUnsupported(Backend))
	}
	pl.guardTrees = backend.WritableTrees(pr)
	return pl, nil
}
