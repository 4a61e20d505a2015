package policyderive

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// Class says how faithfully a backend renders one element of a profile.
type Class uint8

const (
	// Exact: the backend permits exactly what the policy permits for the
	// element.
	Exact Class = iota
	// Stricter: the backend forbids more than the policy (say what). Sound,
	// but a command may fail where the policy would let it run.
	Stricter
	// Looser: the backend permits something the policy forbids (say what).
	// Strict callers refuse to run (see Fidelity.Err).
	Looser
)

// String returns "exact", "stricter" or "looser".
func (c Class) String() string {
	switch c {
	case Exact:
		return "exact"
	case Stricter:
		return "stricter"
	case Looser:
		return "looser"
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// MarshalText implements encoding.TextMarshaler.
func (c Class) MarshalText() ([]byte, error) {
	if c > Looser {
		return nil, fmt.Errorf("invalid fidelity class %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, accepting "exact",
// "stricter" and "looser": invalid fidelity class "close".
func (c *Class) UnmarshalText(b []byte) error {
	switch string(b) {
	case "exact":
		*c = Exact
	case "stricter":
		*c = Stricter
	case "looser":
		*c = Looser
	default:
		return fmt.Errorf("invalid fidelity class %q", b)
	}
	return nil
}

// Element is one line of a fidelity report: how a backend renders one
// element of the profile (a grant, a mask, a rule, the network, ...).
type Element struct {
	Class Class `json:"class"`
	// Subject names the profile element: "write /work/repo",
	// "mask /work/repo/.git/hooks", `denied_paths[0] ".env*"`, "network".
	Subject string `json:"subject"`
	// Control is the isolation control concerned (policy.ControlFSRead, ...).
	Control policy.Control `json:"control"`
	// Rule is the policy rule the element comes from (`denied_paths[0]`
	// style Source of policy.Rule), if any.
	Rule string `json:"rule,omitempty"`
	// Detail says what the backend does: for stricter and looser
	// elements, what it forbids or permits beyond the policy.
	Detail string `json:"detail"`
	// Reason says why.
	Reason string `json:"reason,omitempty"`
	// Remedy says how to proceed, for looser elements.
	Remedy string `json:"remedy,omitempty"`
	// Inherent marks a looser element that is inherent to the backend's
	// mechanism in every configuration and narrowed by the workspace
	// (paths created while a command runs are masked for the next one,
	// protected paths are re-scanned after each command). Backends declare
	// such elements as gaps in Describe; Err does not refuse them.
	Inherent bool `json:"inherent,omitempty"`
	// Concurrent marks a looser element only a process running alongside
	// the command can reach (another command or a background process of
	// the same workspace racing its start), never the command alone: while
	// nothing else of the workspace runs, the control holds. The
	// workspace's sandbox auto-allow relies on it.
	Concurrent bool `json:"concurrent,omitempty"`
	// Layer, in a Kubernetes rendering, names the layer that enforces
	// the element: LayerPod, LayerSandbox or LayerCluster.
	Layer string `json:"layer,omitempty"`
	// Mitigated, when set, says what closed a looser element (for
	// instance "seccomp filter"): the backend enforces it by other means
	// and the element no longer counts as looser.
	Mitigated string `json:"mitigated,omitempty"`
	// Feature, when set, is the key by which a backend finds the element
	// to adjust or mitigate it (Fidelity.Mitigate, Fidelity.Keyed).
	Feature Feature `json:"feature,omitempty"`
}

// Feature keys the elements of a rendering that a backend adjusts or
// closes by other means: typed constants, so that the renderer and the
// backend cannot disagree on a spelling (a subject is prose, and may
// change).
type Feature string

// The keyed elements.
const (
	// FeatureNetTCP: Landlock's TCP restriction (ABI 4).
	FeatureNetTCP Feature = "net-tcp"
	// FeatureNetUDP: Landlock's UDP restriction (ABI 10).
	FeatureNetUDP Feature = "net-udp"
	// FeatureNetOther: sockets Landlock never restricts (MPTCP, SCTP,
	// ICMP, raw).
	FeatureNetOther Feature = "net-other"
	// FeatureUnixSockets: connecting to pathname Unix sockets (Landlock
	// ABI 9).
	FeatureUnixSockets Feature = "unix-sockets"
	// FeatureAbstractUnix: abstract Unix sockets (Landlock's scopes, ABI 6).
	FeatureAbstractUnix Feature = "abstract-unix"
	// FeatureMetadata: stat, chmod, chown, utimes and extended attributes
	// outside grants, which Landlock does not restrict.
	FeatureMetadata Feature = "metadata"
	// FeaturePerProcess: a read grant the sandboxed process adds itself
	// (LandlockRuleset.PerProcessRules).
	FeaturePerProcess Feature = "per-process"
	// FeatureHostRoot: a container's view of the host's /, which it
	// cannot bind over its own root (the OCI rendering).
	FeatureHostRoot Feature = "host-root"
	// FeatureProcRule: a derivation note, a read-denying rule under /proc
	// that no backend enforces (every Linux rendering reports it; macOS
	// has no /proc).
	FeatureProcRule Feature = "proc-rule"
)

// String formats the element on one line.
func (e Element) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Class, e.Subject)
	if e.Rule != "" && !strings.Contains(e.Subject, e.Rule) {
		fmt.Fprintf(&b, " (%s)", e.Rule)
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, " — %s", e.Reason)
	}
	if e.Layer != "" {
		fmt.Fprintf(&b, " [layer: %s]", e.Layer)
	}
	if e.Mitigated != "" {
		fmt.Fprintf(&b, " [mitigated: %s]", e.Mitigated)
	}
	if e.Inherent {
		b.WriteString(" [inherent]")
	}
	if e.Concurrent {
		b.WriteString(" [concurrent only]")
	}
	if e.Class == Looser && e.Remedy != "" && e.Mitigated == "" {
		fmt.Fprintf(&b, "; to proceed: %s", e.Remedy)
	}
	return b.String()
}

// Fidelity is a renderer's report: one Element per element of the
// profile, in rendering order.
type Fidelity struct {
	// Backend is "landlock", "bwrap", "seatbelt" or "oci".
	Backend  string    `json:"backend"`
	Elements []Element `json:"elements"`
}

func (f *Fidelity) add(e Element) { f.Elements = append(f.Elements, e) }

func (f *Fidelity) exact(subject string, control policy.Control, rule, detail string) {
	f.add(Element{Class: Exact, Subject: subject, Control: control, Rule: rule, Detail: detail})
}

func (f *Fidelity) stricter(subject string, control policy.Control, rule, detail, reason string) {
	f.add(Element{Class: Stricter, Subject: subject, Control: control, Rule: rule, Detail: detail, Reason: reason})
}

func (f *Fidelity) looser(subject string, control policy.Control, rule, detail, reason, remedy string, inherent bool) {
	f.add(Element{Class: Looser, Subject: subject, Control: control, Rule: rule, Detail: detail, Reason: reason, Remedy: remedy, Inherent: inherent})
}

// Looser returns the looser elements not mitigated, inherent ones
// included.
func (f *Fidelity) Looser() []Element {
	var out []Element
	for _, e := range f.Elements {
		if e.Class == Looser && e.Mitigated == "" {
			out = append(out, e)
		}
	}
	return out
}

// Stricter returns the stricter elements.
func (f *Fidelity) Stricter() []Element {
	var out []Element
	for _, e := range f.Elements {
		if e.Class == Stricter {
			out = append(out, e)
		}
	}
	return out
}

// Blocking returns the looser elements that strict mode refuses: not
// mitigated and not inherent.
func (f *Fidelity) Blocking() []Element {
	var out []Element
	for _, e := range f.Looser() {
		if !e.Inherent {
			out = append(out, e)
		}
	}
	return out
}

// Keyed returns pointers to the elements keyed ft, for a backend to
// adjust.
func (f *Fidelity) Keyed(ft Feature) []*Element {
	var out []*Element
	for i := range f.Elements {
		if f.Elements[i].Feature == ft {
			out = append(out, &f.Elements[i])
		}
	}
	return out
}

// key keys the element added last.
func (f *Fidelity) key(ft Feature) { f.Elements[len(f.Elements)-1].Feature = ft }

// Mitigate marks every looser element keyed ft as closed by how (for
// instance the landlock backend's seccomp filter closing FeatureNetOther),
// and reports whether there was one.
func (f *Fidelity) Mitigate(ft Feature, how string) bool {
	found := false
	for i := range f.Elements {
		if e := &f.Elements[i]; e.Class == Looser && e.Feature == ft {
			e.Mitigated = how
			found = true
		}
	}
	return found
}

// Err returns a *LooserError listing the Blocking elements, or nil when
// there are none. Strict callers fail with it; best-effort callers run
// and show Looser instead.
func (f *Fidelity) Err() error {
	b := f.Blocking()
	if len(b) == 0 {
		return nil
	}
	return &LooserError{Backend: f.Backend, Elements: b}
}

// String formats the report, one element per line.
func (f *Fidelity) String() string {
	var b strings.Builder
	for _, e := range f.Elements {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// ErrLooser is wrapped by *LooserError.
var ErrLooser = errors.New("rendering is looser than the policy")

// LooserError reports a rendering that would permit what the policy
// forbids. It wraps ErrLooser.
type LooserError struct {
	Backend  string
	Elements []Element
}

func (e *LooserError) Error() string {
	parts := make([]string, len(e.Elements))
	for i, el := range e.Elements {
		parts[i] = el.String()
	}
	return fmt.Sprintf("%s: %v: %s", e.Backend, ErrLooser, strings.Join(parts, "; "))
}

// Unwrap returns ErrLooser.
func (e *LooserError) Unwrap() error { return ErrLooser }
