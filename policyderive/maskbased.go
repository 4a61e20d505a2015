package policyderive

import (
	"fmt"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
)

// maskElements returns the fidelity elements every mask-based rendering
// (Landlock, bwrap, OCI) shares: the derivation's notes, the rules the
// mask search could not apply, the rules not searched in System trees,
// and the paths created while the command runs.
func maskElements(pr *Profile, backend string) []Element {
	var out []Element
	out = append(out, pr.Notes...)
	for _, u := range pr.Unsearched {
		out = append(out, Element{
			Class: Looser, Subject: fmt.Sprintf("%s %q", u.Rule, u.Pattern), Control: opControl(u.Op), Rule: u.Rule,
			Detail: fmt.Sprintf("%s of paths matching %q in %s outside the searched trees (%s) is not denied", u.Op, u.Pattern, u.Grant, strings.Join(pr.Scope, ", ")),
			Reason: fmt.Sprintf("%s masks existing paths it finds; a bare-name or glob pattern is searched for only in the root, the home directory and explicit grants", backend),
			Remedy: "narrow the grant (readable/writable paths instead of a whole-tree default), use the seatbelt backend (patterns), or opt into best effort",
		})
	}
	for _, r := range pr.Rules {
		if r.Path == "" && !r.Never && r.Action == policy.Allow {
			out = append(out, Element{
				Class: Stricter, Subject: fmt.Sprintf("%s %q", r.Source, r.Pattern), Control: policy.ControlFSRead, Rule: r.Source,
				Detail: "the allow rule opens nothing beyond the other grants",
				Reason: fmt.Sprintf("%s grants trees, and a bare-name or glob pattern names no tree", backend),
			})
		}
		if r.Path != "" || r.Never || r.Action == policy.Allow {
			continue
		}
		subject := fmt.Sprintf("%s %q", r.Source, r.Pattern)
		if r.Read && r.Form != "relative" && len(pr.System) > 0 && systemOverlap(pr, r) {
			out = append(out, Element{
				Class: Looser, Subject: subject, Control: policy.ControlFSRead, Rule: r.Source, Inherent: true,
				Detail: fmt.Sprintf("paths matching %q inside System trees (%s) stay readable", r.Pattern, strings.Join(systemTrees(pr), ", ")),
				Reason: "System trees are trusted read-only system files and are not searched",
			})
		}
		if newPathsPossible(pr, r) {
			control := policy.ControlFSNewFiles
			out = append(out, Element{
				Class: Looser, Subject: subject, Control: control, Rule: r.Source, Inherent: true,
				Detail: fmt.Sprintf("paths matching %q created while the command runs are not masked", r.Pattern),
				Reason: fmt.Sprintf("%s masks the paths that exist when the command starts; the workspace derives again before each command and re-scans protected paths after it", backend),
				Remedy: "use the seatbelt backend (patterns) for exact coverage",
			})
		}
	}
	return out
}

// systemOverlap reports whether a non-relative pattern could match inside
// a System tree that the profile grants.
func systemOverlap(pr *Profile, r Rule) bool {
	if r.Form == "name" {
		return true
	}
	for _, s := range pr.Scope {
		if abspath.Within(r.Base, s) {
			return false // the glob's base was searched, System trees below it included
		}
	}
	for _, s := range pr.System {
		if abspath.Within(s, r.Base) || abspath.Within(r.Base, s) {
			return true
		}
	}
	return false
}

// newPathsPossible reports whether a non-literal rule could match a path
// the command creates: a write grant where the pattern can match.
func newPathsPossible(pr *Profile, r Rule) bool {
	for _, w := range pr.Write {
		if !w.Exists || w.Special != SpecialNone {
			continue
		}
		switch r.Form {
		case "name":
			return true
		case "relative":
			if abspath.Within(w.Path, pr.Root) || abspath.Within(pr.Root, w.Path) {
				return true
			}
		default:
			if abspath.Within(w.Path, r.Base) || abspath.Within(r.Base, w.Path) {
				return true
			}
		}
	}
	return pr.TmpDir != "" && r.Form == "name"
}

// grantElements reports each grant and mask as exact, and every grant
// skipped because its path does not exist.
func grantElements(f *Fidelity, pr *Profile, mountBackend bool) {
	for _, a := range pr.Read {
		subj := "read " + a.Path
		switch {
		case !a.Exists:
			f.exact(subj, policy.ControlFSRead, a.Source, "not granted: it does not exist (never created)")
		case a.Special == SpecialDevice && mountBackend:
			f.exact(subj, policy.ControlFSRead, a.Source, "provided by the sandbox's own /dev")
		case a.Special == SpecialProc && mountBackend:
			f.exact(subj, policy.ControlFSRead, a.Source, "provided by the sandbox's own /proc")
		default:
			f.exact(subj, policy.ControlFSRead, a.Source, "readable (and executable)")
		}
	}
	for _, a := range pr.Write {
		subj := "write " + a.Path
		switch {
		case !a.Exists:
			f.exact(subj, policy.ControlFSWrite, a.Source, "not granted: it does not exist (never created)")
		case a.Special == SpecialDevice && mountBackend:
			f.exact(subj, policy.ControlFSWrite, a.Source, "provided by the sandbox's own /dev")
		default:
			f.exact(subj, policy.ControlFSWrite, a.Source, "writable")
		}
	}
	for _, m := range pr.Masks {
		subj := "mask " + m.Path
		control := policy.ControlFSRead
		if m.Kind == ReadOnly {
			control = policy.ControlFSWrite
		}
		if m.Reason == "protected" {
			control = policy.ControlProtect
		}
		switch {
		case !m.Exists:
			f.stricter(subj, control, m.Rule, fmt.Sprintf("placeholder for %s: an empty read-only directory, so %s cannot be created", m.For, m.Path), fmt.Sprintf("%s does not exist yet (creating it needs a policy that allows it)", m.For))
		case m.Kind == Hide:
			f.exact(subj, control, m.Rule, fmt.Sprintf("hidden (%s %s)", m.Reason, kindName(m)))
		default:
			f.exact(subj, control, m.Rule, fmt.Sprintf("read-only (%s %s)", m.Reason, kindName(m)))
		}
	}
}

func kindName(m Mask) string {
	if m.Dir {
		return "directory"
	}
	return "file"
}

// systemTrees returns the System paths outside /dev and /proc.
func systemTrees(pr *Profile) []string {
	var out []string
	for _, s := range pr.System {
		if !abspath.Within(s, "/dev") && !abspath.Within(s, "/proc") {
			out = append(out, s)
		}
	}
	return out
}
