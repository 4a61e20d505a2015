package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cordon-sandbox/cordon/policy"
)

// policyFlags are --policy, --root and --home, shared by the subcommands
// that judge or sandbox commands in a workspace.
type policyFlags struct {
	file, root, home string
	cmd              *cobra.Command
}

func (f *policyFlags) add(cmd *cobra.Command, withRoot bool) {
	f.cmd = cmd
	cmd.Flags().StringVar(&f.file, "policy", "", "policy `FILE` (YAML or JSON; see the README's policy file reference); default: the coding preset")
	if withRoot {
		cmd.Flags().StringVar(&f.root, "root", "", "workspace root; default: the current directory")
	}
	cmd.Flags().StringVar(&f.home, "home", "", `home directory "~" stands for; default: $HOME (--home "" means unknown)`)
}

// workspaceSpec is a loaded policy and the workspace it applies to.
type workspaceSpec struct {
	policy *policy.Policy
	// source is the policy file, or "coding preset".
	source string
	// root is absolute and resolved; home is "" when unknown.
	root, home string
}

// loadPolicy loads --policy, or the coding preset without it. Errors are
// setup errors (exit status 2).
func (f *policyFlags) loadPolicy() (*policy.Policy, string, error) {
	if f.file == "" {
		return policy.Coding.Policy(), "coding preset", nil
	}
	p, err := policy.LoadFile(f.file)
	if err != nil {
		return nil, "", setupError(fmt.Errorf("policy: %w", err))
	}
	return p, f.file, nil
}

// homeDir returns --home, else the user's home directory ("" when unknown).
func (f *policyFlags) homeDir() string {
	if f.cmd != nil && f.cmd.Flags().Changed("home") {
		if f.home == "" {
			return ""
		}
		if abs, err := filepath.Abs(f.home); err == nil {
			return abs
		}
		return f.home
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}

// load loads the policy and resolves the root (default: the current
// directory), which must be a directory.
func (f *policyFlags) load() (*workspaceSpec, error) {
	p, source, err := f.loadPolicy()
	if err != nil {
		return nil, err
	}
	root := f.root
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, setupError(fmt.Errorf("--root %q: %w", root, err))
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, setupError(fmt.Errorf("--root %q: %w", root, unwrapPathError(err)))
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, setupError(fmt.Errorf("--root %q: %w", root, unwrapPathError(err)))
	}
	if !fi.IsDir() {
		return nil, setupError(fmt.Errorf("--root %q: not a directory", root))
	}
	return &workspaceSpec{policy: p, source: source, root: resolved, home: f.homeDir()}, nil
}

// checker compiles the policy for the workspace.
func (w *workspaceSpec) checker() (*policy.Checker, error) {
	c, err := policy.NewChecker(w.policy, w.root, w.home)
	if err != nil {
		return nil, setupError(fmt.Errorf("policy %s: %w", w.source, err))
	}
	return c, nil
}

// inRoot resolves a path given relative to the workspace root (the
// convention of the workspace's tools) as the policy does: "~" is the
// workspace's home, symbolic links are followed. "" is the root.
func (w *workspaceSpec) inRoot(c *policy.Checker, p string) (string, error) {
	if p == "" {
		return w.root, nil
	}
	r, err := c.Resolve(w.root, p)
	if err != nil {
		return "", usageErrorf("--cwd %q: %v", p, err)
	}
	return r, nil
}

// unwrapPathError drops the *fs.PathError's repetition of the path.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
