package policy

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Spec is the policy file form (see the README's policy file reference), also filled by the
// workspace's options: a Mode refined by shorthands, or an explicit Policy.
// Build turns it into a Policy.
//
// The zero Spec builds the coding preset.
type Spec struct {
	// Mode selects the preset; nil means Coding.
	Mode *Mode `yaml:"mode,omitempty" json:"mode,omitempty"`
	// Readable paths become PathRule{p, allow, [read]}.
	Readable []string `yaml:"readable,omitempty" json:"readable,omitempty"`
	// Writable paths become PathRule{p, allow, [read, write]}.
	Writable []string `yaml:"writable,omitempty" json:"writable,omitempty"`
	// DeniedPaths are denied for every op.
	DeniedPaths []string `yaml:"denied_paths,omitempty" json:"denied_paths,omitempty"`
	// PathRules come first in the combined rule list, before Writable and
	// Readable.
	PathRules    []PathRule    `yaml:"path_rules,omitempty" json:"path_rules,omitempty"`
	CommandRules []CommandRule `yaml:"command_rules,omitempty" json:"command_rules,omitempty"`
	// Network overrides the preset's network (none for an explicit
	// policy): "none", "full", or the allow-list mapping.
	Network *NetworkSpec `yaml:"network,omitempty" json:"network,omitempty"`
	// Protect: "default", "none" or a list of extra patterns.
	Protect Protect `yaml:"protect,omitempty" json:"protect,omitempty"`
	// System: "default" (nil) or a list of absolute paths replacing the
	// defaults.
	System SystemPaths `yaml:"system,omitempty" json:"system,omitempty"`
	// Policy is an explicit policy replacing the preset; it excludes Mode
	// and the shorthands.
	Policy *PolicySpec `yaml:"policy,omitempty" json:"policy,omitempty"`
}

// PolicySpec is an explicit policy in a policy file. Omitted decisions are
// deny and an omitted allow_shell is false: an explicit policy grants only
// what it says.
type PolicySpec struct {
	Write        Decision      `yaml:"write" json:"write"`
	ReadOutside  Decision      `yaml:"read_outside" json:"read_outside"`
	WriteOutside Decision      `yaml:"write_outside" json:"write_outside"`
	PathRules    []PathRule    `yaml:"path_rules,omitempty" json:"path_rules,omitempty"`
	DeniedPaths  []string      `yaml:"denied_paths,omitempty" json:"denied_paths,omitempty"`
	AllowShell   bool          `yaml:"allow_shell" json:"allow_shell"`
	ShellDefault Decision      `yaml:"shell_default" json:"shell_default"`
	CommandRules []CommandRule `yaml:"command_rules,omitempty" json:"command_rules,omitempty"`
}

// SystemPaths is the `system` setting: nil means DefaultSystem().
type SystemPaths []string

// Errors wrapped by *SpecError.
var (
	// ErrPolicyWithShorthands reports `policy` combined with mode or a shorthand.
	ErrPolicyWithShorthands = errors.New("an explicit policy cannot be combined with mode or shorthands")
	// ErrReadonlyCommands reports command_rules in readonly mode, which has no shell.
	ErrReadonlyCommands = errors.New("readonly mode has no shell, so command_rules cannot apply")
)

// SpecError reports a Spec that cannot be built; Field names the setting.
type SpecError struct {
	Field string
	Err   error
}

func (e *SpecError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *SpecError) Unwrap() error { return e.Err }

// Build combines the spec into a Policy and validates it. The combined
// rule list is PathRules, then Writable grants, then Readable grants.
func (s *Spec) Build() (*Policy, error) {
	var p *Policy
	if s.Policy != nil {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"mode", s.Mode != nil},
			{"readable", len(s.Readable) > 0},
			{"writable", len(s.Writable) > 0},
			{"denied_paths", len(s.DeniedPaths) > 0},
			{"path_rules", len(s.PathRules) > 0},
			{"command_rules", len(s.CommandRules) > 0},
		} {
			if f.set {
				return nil, &SpecError{Field: f.name, Err: ErrPolicyWithShorthands}
			}
		}
		e := s.Policy
		p = &Policy{
			Write: e.Write, ReadOutside: e.ReadOutside, WriteOutside: e.WriteOutside,
			PathRules: cloneRules(e.PathRules), DeniedPaths: append([]string(nil), e.DeniedPaths...),
			AllowShell: e.AllowShell, ShellDefault: e.ShellDefault,
			CommandRules: append([]CommandRule(nil), e.CommandRules...),
			Network:      NetworkNone,
		}
	} else {
		mode := Coding
		if s.Mode != nil {
			mode = *s.Mode
		}
		if mode > Trusted {
			return nil, &SpecError{Field: "mode", Err: fmt.Errorf("%w %d", ErrInvalidValue, mode)}
		}
		if mode == Readonly && len(s.CommandRules) > 0 {
			return nil, &SpecError{Field: "command_rules", Err: ErrReadonlyCommands}
		}
		p = mode.Policy()
		p.PathRules = cloneRules(s.PathRules)
		for _, w := range s.Writable {
			p.PathRules = append(p.PathRules, PathRule{Pattern: w, Action: Allow, Ops: []Op{Read, Write}})
		}
		for _, r := range s.Readable {
			p.PathRules = append(p.PathRules, PathRule{Pattern: r, Action: Allow, Ops: []Op{Read}})
		}
		p.DeniedPaths = append([]string(nil), s.DeniedPaths...)
		p.CommandRules = append([]CommandRule(nil), s.CommandRules...)
	}
	if s.Network != nil {
		p.Network = s.Network.Access
		p.Hosts = s.Network.Hosts.Clone()
	}
	p.Protect = Protect{Disabled: s.Protect.Disabled, Extra: append([]string(nil), s.Protect.Extra...)}
	if s.System != nil {
		p.System = append([]string{}, s.System...)
	}
	if !p.AllowShell {
		p.ShellDefault = Deny
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// UnmarshalYAML accepts "default", "none" or a list of extra patterns.
func (p *Protect) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Value {
		case "default":
			*p = Protect{}
		case "none":
			*p = Protect{Disabled: true}
		default:
			return fmt.Errorf("line %d: invalid protect %q (want default, none or a list of patterns)", n.Line, n.Value)
		}
		return nil
	case yaml.SequenceNode:
		var extra []string
		if err := n.Decode(&extra); err != nil {
			return err
		}
		*p = Protect{Extra: extra}
		return nil
	}
	return fmt.Errorf("line %d: invalid protect (want default, none or a list of patterns)", n.Line)
}

// MarshalYAML writes "default", "none" or the list of extra patterns.
func (p Protect) MarshalYAML() (any, error) {
	switch {
	case p.Disabled && len(p.Extra) == 0:
		return "none", nil
	case len(p.Extra) == 0:
		return "default", nil
	}
	return p.Extra, nil
}

// UnmarshalYAML accepts "default" or a list of absolute paths.
func (s *SystemPaths) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value != "default" {
			return fmt.Errorf("line %d: invalid system %q (want default or a list of absolute paths)", n.Line, n.Value)
		}
		*s = nil
		return nil
	case yaml.SequenceNode:
		var paths []string
		if err := n.Decode(&paths); err != nil {
			return err
		}
		if paths == nil {
			paths = []string{}
		}
		*s = paths
		return nil
	}
	return fmt.Errorf("line %d: invalid system (want default or a list of absolute paths)", n.Line)
}

// String returns the spec as YAML.
func (s *Spec) String() string {
	b, err := yaml.Marshal(s)
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}
