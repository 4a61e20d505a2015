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
	}
	return p, name, nil
}
