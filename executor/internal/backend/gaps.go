package backend

import (
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// Gap turns a fidelity element into the gap an executor reports: what is
// not enforced, why, and for a looser element strict mode refuses, what
// to do to proceed.
func Gap(e policyderive.Element) executor.Gap {
	reason := e.Subject + ": " + e.Detail
	if e.Reason != "" {
		reason += " (" + e.Reason + ")"
	}
	if e.Class == policyderive.Looser && e.Remedy != "" && !e.Inherent {
		reason += "; to proceed: " + e.Remedy
	}
	return executor.Gap{Control: e.Control, Reason: reason, Concurrent: e.Concurrent}
}

// Gaps turns elements into gaps, one each.
func Gaps(els []policyderive.Element) []executor.Gap {
	out := make([]executor.Gap, 0, len(els))
	for _, e := range els {
		out = append(out, Gap(e))
	}
	return out
}

// GroupedGaps turns elements into one gap per control, for Describe:
// elements that share a control and a reason (one per rule of a
// protect list, say) are named together with their detail once.
func GroupedGaps(els []policyderive.Element) []executor.Gap {
	type group struct {
		control executor.Control
		els     []policyderive.Element
	}
	// A control's gap is concurrent-only when every element of it is.
	concurrent := map[executor.Control]bool{}
	for _, e := range els {
		c, seen := concurrent[e.Control]
		concurrent[e.Control] = e.Concurrent && (c || !seen)
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, e := range els {
		k := string(e.Control) + "\x00" + e.Reason
		if byKey[k] == nil {
			byKey[k] = &group{control: e.Control}
			groups = append(groups, byKey[k])
		}
		byKey[k].els = append(byKey[k].els, e)
	}
	var out []executor.Gap
	index := map[executor.Control]int{}
	for _, g := range groups {
		reason := Gap(g.els[0]).Reason
		if len(g.els) > 1 {
			var subjects []string
			for _, e := range g.els {
				subjects = append(subjects, e.Subject)
			}
			first := g.els[0]
			detail := first.Detail
			if first.Rule != "" {
				detail = strings.Replace(detail, strings.TrimPrefix(first.Subject, first.Rule+" "), "them", 1)
			}
			reason = strings.Join(subjects, ", ") + ": " + detail
			if first.Reason != "" {
				reason += " (" + first.Reason + ")"
			}
		}
		if i, ok := index[g.control]; ok {
			out[i].Reason += "; " + reason
			continue
		}
		index[g.control] = len(out)
		out = append(out, executor.Gap{Control: g.control, Reason: reason, Concurrent: concurrent[g.control]})
	}
	return out
}

// StricterNotes lists what a rendering forbids beyond the policy, for
// Describe's Info["stricter"].
func StricterNotes(f *policyderive.Fidelity) string {
	var out []string
	for _, e := range f.Stricter() {
		s := e.Subject + ": " + e.Detail
		if e.Reason != "" {
			s += " (" + e.Reason + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// WritableTrees returns the existing directories pr grants writes to
// (pseudo-devices and files left out), and its private temporary
// directory (Profile.TmpDir) when it has one: the trees the
// protected-path guard watches.
func WritableTrees(pr *policyderive.Profile) []string {
	var out []string
	for _, a := range pr.Write {
		if a.Dir && a.Exists && a.Special == policyderive.SpecialNone {
			out = append(out, a.Path)
		}
	}
	if pr.TmpDir != "" {
		// The executor's private temporary directory outlives the
		// command: a git directory planted there and named by a .git
		// file or commondir in the root would be run by the host's git.
		out = append(out, pr.TmpDir)
	}
	return out
}

// AllowListUnsupported is the gap of a backend that does not offer the
// network allow-list: strict mode refuses such policies, best effort runs
// them with no network.
func AllowListUnsupported(backend string) executor.Gap {
	return executor.Gap{Control: executor.ControlNetAllowList,
		Reason: "the " + backend + " backend does not offer the network allow-list yet (landlock and bwrap do, as root): strict mode refuses a policy with network.allow; best effort runs it with no network"}
}

// AllowListNoNamespace is the gap of a backend whose commands cannot get
// a private network namespace here (why): Landlock and bwrap alone could
// only restrict by port, which would reach any host on the proxy's port,
// so strict mode refuses the allow-list and best effort runs it with no
// network.
func AllowListNoNamespace(why error) executor.Gap {
	return executor.Gap{Control: executor.ControlNetAllowList,
		Reason: "the network allow-list needs a private network namespace per command, and none can be made here (" + why.Error() + "); to proceed: run as root, or opt into best effort (the command then gets no network at all)"}
}

// UnixSocketsRefused turns fid's declared Unix-socket gap into what a
// seccomp filter refusing socket(AF_UNIX), installed by how, enforces:
// masks hide the sockets the derivation finds, but no mount stops
// connect(2) to a socket in a System tree, in trusted mode's read of the
// whole disk or created while the command runs; without AF_UNIX sockets
// none can be reached. It adds what that costs as a stricter element;
// compat says what becomes of 32-bit (compat) system calls, which could
// reach socket(2) the filter does not see.
func UnixSocketsRefused(fid *policyderive.Fidelity, how, compat string) {
	for i, e := range fid.Elements {
		if e.Control == executor.ControlNetUnix && e.Class == policyderive.Looser {
			fid.Elements[i] = policyderive.Element{Class: policyderive.Exact, Subject: "unix sockets", Control: executor.ControlNetUnix,
				Detail: how + " refuses socket(AF_UNIX): no pathname Unix socket can be connected to, wherever it lives"}
		}
	}
	fid.Elements = append(fid.Elements, policyderive.Element{Class: policyderive.Stricter, Subject: "unix sockets", Control: executor.ControlNetUnix,
		Detail: "commands cannot create Unix sockets (socket(AF_UNIX) fails; socketpair works), so a server on a Unix socket inside the sandbox cannot run either; " + compat,
		Reason: "connect(2) to a socket is not a file access a mount can stop; a filter cannot see the address, only the family",
		Remedy: "name the socket a command needs in a path rule (the filter is then left out and the sockets the derivation finds stay hidden)"})
}
