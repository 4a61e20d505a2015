package policy

import (
	"encoding"
	"fmt"

	"gopkg.in/yaml.v3"
)

// unmarshalScalar decodes a YAML scalar through UnmarshalText, adding the
// line to the error so policy files point at the offending value.
func unmarshalScalar(n *yaml.Node, u encoding.TextUnmarshaler) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: expected a scalar", n.Line)
	}
	if err := u.UnmarshalText([]byte(n.Value)); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

// UnmarshalYAML implements yaml.Unmarshaler with line numbers in errors.
func (d *Decision) UnmarshalYAML(n *yaml.Node) error { return unmarshalScalar(n, d) }

// UnmarshalYAML implements yaml.Unmarshaler with line numbers in errors.
func (o *Op) UnmarshalYAML(n *yaml.Node) error { return unmarshalScalar(n, o) }

// UnmarshalYAML implements yaml.Unmarshaler with line numbers in errors.
func (m *Mode) UnmarshalYAML(n *yaml.Node) error { return unmarshalScalar(n, m) }

// UnmarshalYAML implements yaml.Unmarshaler with line numbers in errors.
func (nw *Network) UnmarshalYAML(n *yaml.Node) error { return unmarshalScalar(n, nw) }
