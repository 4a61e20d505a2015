package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LayerKind is the place of a policy layer in a Stack.
type LayerKind uint8

// The layer kinds. Their precedence, highest first, is managed, options,
// user, project (see Stack); the managed and project layers' settings are
// also ceilings.
const (
	// LayerManaged is an organisation's policy (typically root-owned,
	// ManagedPolicyPath): no other layer, mode or approval weakens it.
	LayerManaged LayerKind = iota
	// LayerOptions is what the user chose for this run: the CLI's
	// --policy files, a library's explicit options.
	LayerOptions
	// LayerProject is the policy file in the workspace root
	// (ProjectPolicyPath); it arrives with the repository, so it may only
	// restrict: its rules come last, its mode and network are ceilings,
	// and it may not allow.
	LayerProject
	// LayerUser is the user's own policy (UserPolicyPath).
	LayerUser
)

// String returns "managed", "options", "project" or "user".
func (k LayerKind) String() string {
	switch k {
	case LayerManaged:
		return "managed"
	case LayerOptions:
		return "options"
	case LayerProject:
		return "project"
	case LayerUser:
		return "user"
	}
	return "LayerKind(" + strconv.Itoa(int(k)) + ")"
}

// ruleOrder is the order of the layers' rules: the project's last, so
// that it restricts only where no rule of the user decides.
var ruleOrder = []LayerKind{LayerManaged, LayerOptions, LayerUser, LayerProject}

// Layer is one policy file of a Stack.
type Layer struct {
	Kind LayerKind
	// File names the layer's source in errors and rule names (a path, or
	// "options").
	File string
	Spec *Spec
}

// Stack is a policy built from layers. Precedence, highest first:
// managed, options, user, project; layers of one kind keep their order,
// the later one higher (a later --policy file overrides an earlier one).
//
//   - Rules (denied_paths, path_rules, readable, writable, command_rules)
//     of all layers are combined in the order managed, options, user,
//     project; the first rule that matches decides, so a managed rule
//     always wins and a project's rule applies only where no rule of the
//     user's decides. Every rule is named with its layer and file
//     ("managed /etc/cordon/policy.yaml: denied_paths[0]").
//   - Settings (mode and its decisions, network, system, protect: none)
//     come from the highest of options and user that sets them; a
//     project's mode and network are ceilings, like the managed ones.
//   - The managed layer is a ceiling: the decisions it sets (its mode's or
//     explicit policy's write, read_outside, write_outside, shell,
//     shell_default, and its network) are the loosest any layer gets, and
//     a managed policy keeps the default protected paths. Its deny and ask
//     rules come first, so no layer, mode or remembered approval weakens
//     them.
//   - The project layer may only restrict: mode trusted, an explicit
//     policy, network other than none, system, protect: none and every
//     allow rule are errors naming the file and the setting.
//   - The managed ceiling covers the defaults, not allow rules: a lower
//     layer's explicit allow rule (readable: ["~/docs"]) still allows; a
//     managed policy that must forbid a path denies it by rule.
//
// A Stack of one layer builds exactly what that layer's Spec builds.
type Stack []Layer

// StackError reports a layer that does not build.
type StackError struct {
	Kind LayerKind
	File string
	Err  error
}

func (e *StackError) Error() string {
	var le *LoadError
	if errors.As(e.Err, &le) && le.File == e.File {
		return e.Kind.String() + " policy " + e.Err.Error() // the file and line are in it
	}
	return e.Kind.String() + " policy " + e.File + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *StackError) Unwrap() error { return e.Err }

// ErrProjectLoosens reports a project layer that would widen access.
var ErrProjectLoosens = errors.New("a project policy (a file in the workspace, which arrives with the repository) may only restrict; set this in your user policy or with --policy")

// Build combines the layers into one Policy and validates it.
func (s Stack) Build() (*Policy, error) {
	if len(s) == 0 {
		return (&Spec{}).Build()
	}
	// Highest precedence first; stable within a kind, the later first.
	layers := make([]Layer, 0, len(s))
	for _, k := range ruleOrder {
		for i := len(s) - 1; i >= 0; i-- {
			if s[i].Kind == k {
				layers = append(layers, s[i])
			}
		}
	}
	built := make([]*Policy, len(layers))
	for i, l := range layers {
		if l.Spec == nil {
			return nil, &StackError{Kind: l.Kind, File: l.File, Err: errors.New("no spec")}
		}
		if l.Kind == LayerProject {
			if err := checkProject(l.Spec); err != nil {
				return nil, &StackError{Kind: l.Kind, File: l.File, Err: &LoadError{File: l.File, Err: err}}
			}
		}
		p, err := l.Spec.Build()
		if err != nil {
			return nil, &StackError{Kind: l.Kind, File: l.File, Err: &LoadError{File: l.File, Err: err}}
		}
		built[i] = p
	}
	if len(layers) == 1 {
		return built[0], nil
	}

	setsMode := func(sp *Spec) bool { return sp.Mode != nil || sp.Policy != nil }
	// Settings from the highest non-managed layer that sets them.
	var base *Policy
	var managed *Policy
	var managedSpec *Spec
	var ceilings []*Policy // the project's mode: it may only restrict
	for i, l := range layers {
		switch {
		case l.Kind == LayerManaged:
			if managed == nil {
				managed, managedSpec = built[i], l.Spec
			}
		case l.Kind == LayerProject:
			if setsMode(l.Spec) {
				ceilings = append(ceilings, built[i])
			}
		case base == nil && setsMode(l.Spec):
			base = built[i]
		}
	}
	if base == nil {
		base = Coding.Policy()
	}
	out := &Policy{
		Write: base.Write, ReadOutside: base.ReadOutside, WriteOutside: base.WriteOutside,
		AllowShell: base.AllowShell, ShellDefault: base.ShellDefault,
		Network: base.Network, Hosts: base.Hosts.Clone(),
	}
	networkSet, systemSet, protectSet := false, false, false
	for i, l := range layers {
		if l.Kind == LayerManaged || l.Kind == LayerProject {
			continue // the project may only set network: none, a ceiling below
		}
		sp := l.Spec
		if !networkSet && sp.Network != nil {
			out.Network, out.Hosts, networkSet = built[i].Network, built[i].Hosts.Clone(), true
		}
		if !systemSet && sp.System != nil {
			out.System, systemSet = append([]string{}, sp.System...), true
		}
		if !protectSet && (sp.Protect.Disabled || len(sp.Protect.Extra) > 0) {
			out.Protect.Disabled, protectSet = sp.Protect.Disabled, true
		}
	}
	// The project's ceiling: its mode restricts, never loosens.
	for _, l := range layers {
		if l.Kind == LayerProject && l.Spec.Network != nil {
			out.Network, out.Hosts = NetworkNone, HostRules{}
		}
	}
	for _, c := range ceilings {
		out.Write = stricter(out.Write, c.Write)
		out.ReadOutside = stricter(out.ReadOutside, c.ReadOutside)
		out.WriteOutside = stricter(out.WriteOutside, c.WriteOutside)
		out.AllowShell = out.AllowShell && c.AllowShell
		out.ShellDefault = stricter(out.ShellDefault, c.ShellDefault)
	}
	// The managed ceiling.
	if managed != nil {
		if setsMode(managedSpec) {
			out.Write = stricter(out.Write, managed.Write)
			out.ReadOutside = stricter(out.ReadOutside, managed.ReadOutside)
			out.WriteOutside = stricter(out.WriteOutside, managed.WriteOutside)
			out.AllowShell = out.AllowShell && managed.AllowShell
			out.ShellDefault = stricter(out.ShellDefault, managed.ShellDefault)
		}
		if setsMode(managedSpec) || managedSpec.Network != nil {
			switch {
			case networkRank(managed.Network) < networkRank(out.Network):
				out.Network, out.Hosts = managed.Network, managed.Hosts.Clone()
			case managed.Network == NetworkAllowList && out.Network == NetworkAllowList:
				// Others may refuse more hosts, never allow more.
				deny := out.Hosts.Deny
				out.Hosts = managed.Hosts.Clone()
				out.Hosts.Deny = append(out.Hosts.Deny, deny...)
				out.Hosts.Unknown = stricter(out.Hosts.Unknown, managed.Hosts.Unknown)
			}
		}
		if managedSpec.System != nil {
			out.System = append([]string{}, managed.System...)
		}
		out.Protect.Disabled = false
	}
	if !out.AllowShell {
		out.ShellDefault = Deny
	}
	// Rules, the higher layer first, each named with its layer.
	for i, l := range layers {
		p := built[i]
		name := l.Kind.String() + " " + l.File + ": "
		out.Origins = append(out.Origins,
			Origin{List: "denied_paths", Start: len(out.DeniedPaths), End: len(out.DeniedPaths) + len(p.DeniedPaths), Name: name},
			Origin{List: "path_rules", Start: len(out.PathRules), End: len(out.PathRules) + len(p.PathRules), Name: name},
			Origin{List: "command_rules", Start: len(out.CommandRules), End: len(out.CommandRules) + len(p.CommandRules), Name: name},
			Origin{List: "protect", Start: len(out.Protect.Extra), End: len(out.Protect.Extra) + len(p.Protect.Extra), Name: name},
		)
		out.DeniedPaths = append(out.DeniedPaths, p.DeniedPaths...)
		out.PathRules = append(out.PathRules, cloneRules(p.PathRules)...)
		if out.AllowShell {
			out.CommandRules = append(out.CommandRules, p.CommandRules...)
		}
		out.Protect.Extra = append(out.Protect.Extra, p.Protect.Extra...)
	}
	// Every layer's network.deny holds under the allow-list.
	if out.Network == NetworkAllowList {
		have := map[string]bool{}
		for _, d := range out.Hosts.Deny {
			have[d] = true
		}
		for _, p := range built {
			for _, d := range p.Hosts.Deny {
				if !have[d] {
					have[d] = true
					out.Hosts.Deny = append(out.Hosts.Deny, d)
				}
			}
		}
	}
	// Protect extras are numbered after the defaults.
	if !out.Protect.Disabled {
		for i := range out.Origins {
			if out.Origins[i].List == "protect" {
				out.Origins[i].Start += len(DefaultProtected)
				out.Origins[i].End += len(DefaultProtected)
			}
		}
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// Origin names the layer a run of a policy's rules came from: items
// [Start, End) of List ("denied_paths", "path_rules", "command_rules",
// "protect" counted with the defaults).
type Origin struct {
	List       string
	Start, End int
	// Name prefixes the rule's name: "managed /etc/cordon/policy.yaml: ".
	Name string
	// Label, when set, is the whole name of every item of the run, for
	// rules no file holds (the workspace's toolchain caches:
	// "toolchain cache: go module cache (go env GOMODCACHE)").
	Label string
}

// source names item i of list: "denied_paths[0]", or with its layer
// "user /home/u/.config/cordon/policy.yaml: denied_paths[0]" (the index
// counted within the layer).
func (p *Policy) source(list string, i int) string {
	for _, o := range p.Origins {
		if o.List == list && i >= o.Start && i < o.End {
			if o.Label != "" {
				return o.Label
			}
			return o.Name + list + "[" + strconv.Itoa(i-o.Start) + "]"
		}
	}
	return list + "[" + strconv.Itoa(i) + "]"
}

// stricter returns the stricter of two decisions.
func stricter(a, b Decision) Decision {
	if b.Stricter(a) {
		return b
	}
	return a
}

func networkRank(n Network) int {
	switch n {
	case NetworkNone:
		return 0
	case NetworkAllowList:
		return 1
	}
	return 2
}

// checkProject refuses what a project layer may not set.
func checkProject(s *Spec) error {
	bad := func(field, why string) error {
		return &SpecError{Field: field, Err: fmt.Errorf("%w (%s)", ErrProjectLoosens, why)}
	}
	if s.Policy != nil {
		return bad("policy", "an explicit policy replaces the mode's limits")
	}
	if s.Mode != nil && *s.Mode == Trusted {
		return bad("mode", "trusted reads the whole disk and opens the network")
	}
	if s.Network != nil && s.Network.Access != NetworkNone {
		return bad("network", "it would let commands reach hosts the repository names")
	}
	if s.System != nil {
		return bad("system", "it changes what commands may read outside the root")
	}
	if s.Protect.Disabled {
		return bad("protect", "it would let commands plant files the host runs later")
	}
	// No allow rule at all: inside the root it would widen a user's or
	// an organisation's readonly mode, and a command allow rule would run
	// the repository's code unasked (with executor.Local, on the host).
	if len(s.Readable) > 0 {
		return bad("readable[0]", "a project may not allow; it may deny or ask")
	}
	if len(s.Writable) > 0 {
		return bad("writable[0]", "a project may not allow; it may deny or ask")
	}
	for i, r := range s.PathRules {
		if r.Action == Allow {
			return bad(fmt.Sprintf("path_rules[%d]", i), "a project may not allow; it may deny or ask")
		}
	}
	for i, r := range s.CommandRules {
		if r.Action == Allow {
			return bad(fmt.Sprintf("command_rules[%d]", i), "a project may not allow a command: it would run the repository's code without asking")
		}
	}
	return nil
}

// Standard policy locations (the README's "Policy layers").
const (
	// ManagedPolicyPath is the managed layer on Linux and other Unix
	// systems (macOS: /Library/Application Support/cordon/policy.yaml).
	ManagedPolicyPath = "/etc/cordon/policy.yaml"
	// ProjectPolicyPath is the project layer, relative to the root. It is
	// on the protected surface (".cordon"), so a command never rewrites
	// the policy that confines it.
	ProjectPolicyPath = ".cordon/policy.yaml"
)

// UserPolicyPath returns the user layer's file:
// $XDG_CONFIG_HOME/cordon/policy.yaml, else ~/.config/cordon/policy.yaml
// ("" when neither is known).
func UserPolicyPath(home string) string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "cordon", "policy.yaml")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "cordon", "policy.yaml")
}

// LoadSpecFile reads and parses the policy file at path.
func LoadSpecFile(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &LoadError{File: path, Err: err}
	}
	defer f.Close()
	s, err := LoadSpec(f)
	var le *LoadError
	if errors.As(err, &le) {
		le.File = path
	}
	return s, err
}

// LoadStack loads a workspace's policy layers: unless defaults is false,
// the standard files that exist (ManagedPolicyPath, UserPolicyPath(home),
// ProjectPolicyPath in root), then files as the options layer, in order
// (a later file overrides an earlier one). A standard file that exists
// but cannot be read or parsed is an error, never skipped. Errors name
// the layer, the file and the line.
func LoadStack(files []string, root, home string, defaults bool) (Stack, error) {
	var s Stack
	add := func(kind LayerKind, path string, optional bool) error {
		if optional {
			if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
				return nil
			}
		}
		// A regular file only (no FIFO to hang on, no device); the
		// project's, which the repository supplies, not through a link.
		st, err := os.Stat(path)
		if kind == LayerProject {
			st, err = os.Lstat(path)
		}
		if err == nil && !st.Mode().IsRegular() {
			return &StackError{Kind: kind, File: path, Err: fmt.Errorf("not a regular file (%s)", st.Mode().Type())}
		}
		spec, err := LoadSpecFile(path)
		if err != nil {
			return &StackError{Kind: kind, File: path, Err: err}
		}
		s = append(s, Layer{Kind: kind, File: path, Spec: spec})
		return nil
	}
	if defaults {
		std := []struct {
			kind LayerKind
			path string
		}{{LayerManaged, managedPolicyPath()}, {LayerUser, UserPolicyPath(home)}, {LayerProject, filepath.Join(root, ProjectPolicyPath)}}
		for _, l := range std {
			if l.path == "" {
				continue
			}
			if err := add(l.kind, l.path, true); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range files {
		if err := add(LayerOptions, f, false); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Describe lists the layers, highest precedence first, for messages:
// "managed /etc/cordon/policy.yaml, options p.yaml".
func (s Stack) Describe() string {
	var parts []string
	for _, k := range ruleOrder {
		for i := len(s) - 1; i >= 0; i-- {
			if s[i].Kind == k {
				parts = append(parts, k.String()+" "+s[i].File)
			}
		}
	}
	return strings.Join(parts, ", ")
}

// ApprovalStorePath returns the user layer's file as the place for
// "always" approvals of a workspace at root, or "" when there is none or
// it lies inside the root (where a command could rewrite it).
func ApprovalStorePath(root, home string) string {
	p := UserPolicyPath(home)
	if p == "" {
		return ""
	}
	for _, r := range []string{root, resolvedOr(root)} {
		if rel, err := filepath.Rel(r, p); err == nil && filepath.IsLocal(rel) {
			return ""
		}
	}
	return p
}

func resolvedOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
