package policy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

// NetworkSpec is the `network` setting of a policy file: a scalar
//
//	network: none          # or full
//
// or the allow-list mapping, which sets NetworkAllowList:
//
//	network:
//	  allow: ["example.com", "*.example.org", "api.example.net:443"]
//	  deny:  ["upload.example.org"]
//	  unknown: deny          # deny | ask
type NetworkSpec struct {
	// Access is none, full or allowlist.
	Access Network
	// Hosts is the allow-list (Access allowlist only).
	Hosts HostRules
}

// NetworkSpecOf returns the spec of a network without an allow-list.
func NetworkSpecOf(n Network) *NetworkSpec { return &NetworkSpec{Access: n} }

// UnmarshalYAML implements yaml.Unmarshaler: a scalar names the access, a
// mapping is the allow-list; unknown keys are errors with their line.
func (ns *NetworkSpec) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*ns = NetworkSpec{}
		return unmarshalScalar(n, &ns.Access)
	case yaml.MappingNode:
		out := NetworkSpec{Access: NetworkAllowList}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			var err error
			switch k.Value {
			case "allow":
				err = v.Decode(&out.Hosts.Allow)
			case "deny":
				err = v.Decode(&out.Hosts.Deny)
			case "unknown":
				err = unmarshalScalar(v, &out.Hosts.Unknown)
			default:
				return fmt.Errorf("line %d: network: unknown field %q (want allow, deny, unknown)", k.Line, k.Value)
			}
			if err != nil {
				return fmt.Errorf("network.%s: %w", k.Value, err)
			}
		}
		*ns = out
		return nil
	}
	return fmt.Errorf("line %d: network: expected none, full or a mapping with allow, deny, unknown", n.Line)
}

// MarshalYAML implements yaml.Marshaler, the inverse of UnmarshalYAML.
func (ns NetworkSpec) MarshalYAML() (any, error) {
	if ns.Access != NetworkAllowList {
		return ns.Access.String(), nil
	}
	return ns.Hosts, nil
}

// MarshalJSON implements json.Marshaler: a string, or the allow-list
// object.
func (ns NetworkSpec) MarshalJSON() ([]byte, error) {
	if ns.Access != NetworkAllowList {
		return json.Marshal(ns.Access)
	}
	return json.Marshal(ns.Hosts)
}

// UnmarshalJSON implements json.Unmarshaler, the inverse of MarshalJSON.
func (ns *NetworkSpec) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*ns = NetworkSpec{}
		return ns.Access.UnmarshalText([]byte(s))
	}
	out := NetworkSpec{Access: NetworkAllowList}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out.Hosts); err != nil {
		return fmt.Errorf("network: %w", err)
	}
	*ns = out
	return nil
}
