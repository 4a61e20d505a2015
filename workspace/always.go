package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/cordon-sandbox/cordon/policy"
)

// ScopeAlways approves the same request in every later session too: the
// answer is persisted as an allow rule in the user policy layer (see
// WithApprovalStore) and holds for the rest of this session. It is
// offered for a command whose asking segments' words can be written as
// command rules and that names no file (a rule cannot pin a file's
// content), and for a file tool's path; never for a network host.
const ScopeAlways Scope = ScopeSession + 1

// persistable is a grant scope an "always" answer can write down.
type persistable interface {
	// rules returns the allow rules that cover the ask, or false when
	// they cannot be written exactly.
	rules() (cmds []policy.CommandRule, paths []policy.PathRule, ok bool)
}

func (c *cmdScope) rules() ([]policy.CommandRule, []policy.PathRule, bool) {
	// A rule matches the words after assignments and wrappers: written
	// for "PATH=./bin ls" it would allow every ls, more than was asked.
	if c.named || !c.plain || len(c.claims) > 0 || len(c.words) == 0 {
		return nil, nil, false
	}
	var out []policy.CommandRule
	for _, ws := range c.words {
		for _, w := range ws {
			if w == "" || strings.ContainsAny(w, " \t\n\r\x00") {
				return nil, nil, false
			}
		}
		out = append(out, policy.CommandRule{Pattern: strings.Join(ws, " "), Action: policy.Allow})
	}
	return out, nil, true
}

func (p pathScope) rules() ([]policy.CommandRule, []policy.PathRule, bool) {
	if p.g.tool == "shell" || strings.ContainsAny(p.g.path, "*?[]{}\\\n\x00") || !filepath.IsAbs(p.g.path) {
		return nil, nil, false
	}
	ops := []policy.Op{policy.Read}
	if p.g.op == policy.Write {
		ops = []policy.Op{policy.Read, policy.Write}
	}
	return nil, []policy.PathRule{{Pattern: p.g.path, Action: policy.Allow, Ops: ops}}, true
}

// approvalStore appends "always" answers to the user layer's file.
type approvalStore struct {
	path string
	mu   sync.Mutex
}

// ErrStoreNotMapping reports a user policy file whose top level is not a
// mapping, which an approval cannot be added to.
var ErrStoreNotMapping = errors.New("the policy file's top level is not a mapping")

// add appends the rules to the file (created 0600 in a 0700 directory
// when missing), keeping its comments and layout, and replaces it
// atomically.
func (st *approvalStore) add(cmds []policy.CommandRule, paths []policy.PathRule) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	var doc yaml.Node
	data, err := os.ReadFile(st.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if len(data) > policy.MaxPolicySize {
			return policy.ErrPolicyTooLarge
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return err
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return ErrStoreNotMapping
	}
	seq := func(key string) (*yaml.Node, error) {
		for i := 0; i+1 < len(top.Content); i += 2 {
			if top.Content[i].Value == key {
				v := top.Content[i+1]
				if v.Kind != yaml.SequenceNode {
					return nil, fmt.Errorf("%s is not a list", key)
				}
				return v, nil
			}
		}
		v := &yaml.Node{Kind: yaml.SequenceNode}
		top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
		return v, nil
	}
	if len(cmds) > 0 {
		s, err := seq("command_rules")
		if err != nil {
			return err
		}
		for _, r := range cmds {
			var n yaml.Node
			if err := n.Encode(r); err != nil {
				return err
			}
			n.Style = yaml.FlowStyle
			s.Content = append(s.Content, &n)
		}
	}
	if len(paths) > 0 {
		s, err := seq("path_rules")
		if err != nil {
			return err
		}
		for _, r := range paths {
			var n yaml.Node
			if err := n.Encode(r); err != nil {
				return err
			}
			n.Style = yaml.FlowStyle
			s.Content = append(s.Content, &n)
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
	// The result must still load: never leave a file that breaks the
	// next session.
	if _, err := policy.LoadSpec(strings.NewReader(string(out))); err != nil {
		return fmt.Errorf("the updated file would not load: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(st.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(st.path), ".policy-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), st.path)
}
