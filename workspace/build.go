package workspace

import (
	"github.com/cordon-sandbox/cordon/policy"
)

// buildPolicy turns the policy options into a Policy through policy.Spec,
// so the options obey exactly the policy file's rules (an explicit policy
// excludes mode and the shorthands; readonly has no command rules), and
// names the mode for the instructions.
func buildPolicy(c *config) (*policy.Policy, string, error) {
	spec := &policy.Spec{
		Mode:         c.mode,
		Readable:     c.readable,
		Writable:     c.writable,
		DeniedPaths:  c.denied,
		PathRules:    c.pathRules,
		CommandRules: c.commandRules,
		Network:      c.network,
	}
	name := policy.Coding.String()
	if c.mode != nil {
		name = c.mode.String()
	}
	if e := c.explicit; e != nil {
		name = "custom"
		spec.Policy = &policy.PolicySpec{
			Write:        e.Write,
			ReadOutside:  e.ReadOutside,
			WriteOutside: e.WriteOutside,
			PathRules:    e.PathRules,
			DeniedPaths:  e.DeniedPaths,
			AllowShell:   e.AllowShell,
			ShellDefault: e.ShellDefault,
			CommandRules: e.CommandRules,
		}
		spec.Protect = e.Protect
		if e.System != nil {
			spec.System = policy.SystemPaths(e.System)
		}
		if spec.Network == nil {
			spec.Network = &policy.NetworkSpec{Access: e.Network, Hosts: e.Hosts.Clone()}
		}
	}
	if len(c.layers) > 0 {
		return buildLayers(c, spec)
	}
	p, err := spec.Build()
	if err != nil {
		opt := "policy options"
		if c.explicit != nil {
			opt = "WithPolicy"
		}
		return nil, "", &OptionError{Option: opt, Reason: "invalid policy", Err: err}
	}
	if c.explicit != nil {
		p.CommandDecider = c.explicit.CommandDecider
		p.Origins = append([]policy.Origin(nil), c.explicit.Origins...)
		if c.explicit.Secrets != nil {
			p.Secrets = append([]string{}, c.explicit.Secrets...)
		}
	}
	return p, name, nil
}

// buildLayers builds the policy of WithPolicyLayers, the workspace's own
// policy options (when any is set) being one more options layer.
func buildLayers(c *config, spec *policy.Spec) (*policy.Policy, string, error) {
	stack := append(policy.Stack(nil), c.layers...)
	if c.mode != nil || c.explicit != nil || c.network != nil || len(c.readable)+len(c.writable)+len(c.denied)+len(c.pathRules)+len(c.commandRules) > 0 {
		stack = append(stack, policy.Layer{Kind: policy.LayerOptions, File: "options", Spec: spec})
	}
	p, err := stack.Build()
	if err != nil {
		return nil, "", &OptionError{Option: "WithPolicyLayers", Value: stack.Describe(), Reason: "invalid policy", Err: err}
	}
	if c.explicit != nil {
		p.CommandDecider = c.explicit.CommandDecider
		if c.explicit.Secrets != nil {
			p.Secrets = append([]string{}, c.explicit.Secrets...)
		}
	}
	return p, presetName(p), nil
}

// presetName names the mode whose decisions p has, or "custom".
func presetName(p *policy.Policy) string {
	for _, m := range []policy.Mode{policy.Coding, policy.Readonly, policy.Trusted} {
		q := m.Policy()
		if p.Write == q.Write && p.ReadOutside == q.ReadOutside && p.WriteOutside == q.WriteOutside &&
			p.AllowShell == q.AllowShell && p.ShellDefault == q.ShellDefault && p.Network == q.Network {
			return m.String()
		}
	}
	return "custom"
}
