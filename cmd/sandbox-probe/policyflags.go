package main

import (
	"context"
	"strings"

	"errors"
	"fmt"
	"github.com/cordon-sandbox/cordon/toolcache"
	"github.com/cordon-sandbox/cordon/workspace"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cordon-sandbox/cordon/policy"
)

// policyFlags are --policy, --no-default-policies, --root and --home,
// shared by the subcommands that judge or sandbox commands in a
// workspace.
type policyFlags struct {
	files      []string
	noDefaults bool
	// noToolchains is --no-toolchain-caches.
	noToolchains bool
	// dryRun: the subcommand runs nothing (explain, derive), so the
	// toolchain build cache is named, not made.
	dryRun     bool
	root, home string
	cmd        *cobra.Command
}

// given reports that --policy named a file.
func (f *policyFlags) given() bool { return len(f.files) > 0 }

func (f *policyFlags) add(cmd *cobra.Command, withRoot bool) {
	f.cmd = cmd
	cmd.Flags().StringArrayVar(&f.files, "policy", nil, "policy `FILE` (YAML or JSON; see the README's policy file reference), the options layer; repeat it for more (a later file overrides an earlier one); default: the coding preset, refined by the standard policy files")
	cmd.Flags().BoolVar(&f.noToolchains, "no-toolchain-caches", false, "grant commands no toolchain cache (the Go module and build caches, npm's, pip's and cargo's; see the README's \"Toolchains\")")
	cmd.Flags().BoolVar(&f.noDefaults, "no-default-policies", false, "read no standard policy file (the managed "+policy.ManagedPolicyPath+", the user's ~/.config/cordon/policy.yaml, the root's "+policy.ProjectPolicyPath+")")
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
	// discovered is set when a standard policy file (managed, user,
	// project) was read: explain and run then name source on stderr.
	discovered bool
	// root is absolute and resolved; home is "" when unknown.
	root, home string
	// caches are the toolchain caches policy has rules for; cacheErr
	// says which were not granted and why.
	caches   []toolcache.Cache
	cacheErr error
}

// options returns the workspace options that carry the policy, the home
// and the toolchain caches.
func (w *workspaceSpec) options() []workspace.Option {
	return []workspace.Option{workspace.WithPolicy(w.policy), workspace.WithHome(w.home), workspace.WithToolchainCaches(w.caches...)}
}

// loadPolicy loads the policy layers of the workspace at root: the
// standard files that exist (unless --no-default-policies) and the
// --policy files; the coding preset when there are none. Errors are setup
// errors (exit status 2) naming the layer, file and line.
func (f *policyFlags) loadPolicy(root, home string) (*policy.Policy, string, bool, error) {
	stack, err := policy.LoadStack(f.files, root, home, !f.noDefaults)
	if err == nil && len(stack) == 0 {
		return policy.Coding.Policy(), "coding preset", false, nil
	}
	discovered := false
	for _, l := range stack {
		discovered = discovered || l.Kind != policy.LayerOptions
	}
	var p *policy.Policy
	if err == nil {
		p, err = stack.Build()
	}
	if err != nil {
		var se *policy.StackError
		if errors.As(err, &se) && se.Kind == policy.LayerOptions && len(stack) <= 1 {
			err = se.Err // a lone --policy file: its own error names it
		}
		return nil, "", false, setupError(fmt.Errorf("policy: %w", err))
	}
	if len(stack) == 1 {
		return p, stack[0].File, discovered, nil
	}
	return p, stack.Describe(), discovered, nil
}

// announce names the policy on w when a standard file was read, so a
// policy found rather than given is never a surprise.
func (w *workspaceSpec) announce(out io.Writer) {
	if w.discovered {
		fmt.Fprintf(out, "sandbox-probe: policy: %s\n", w.source)
	}
	w.announceCaches(out)
}

// announceCaches names the toolchain caches that were not granted, and
// why, one line each.
func (w *workspaceSpec) announceCaches(out io.Writer) {
	if w.cacheErr == nil {
		return
	}
	for _, line := range strings.Split(w.cacheErr.Error(), "\n") {
		fmt.Fprintf(out, "sandbox-probe: %s\n", line)
	}
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
	home := f.homeDir()
	p, source, discovered, err := f.loadPolicy(resolved, home)
	if err != nil {
		return nil, err
	}
	ws := &workspaceSpec{policy: p, source: source, discovered: discovered, root: resolved, home: home}
	if !f.noToolchains && p.AllowShell {
		caches, err := toolcache.Detect(context.Background(), toolcache.Options{Root: resolved, Home: home, Writable: toolcache.WritableBy(p, resolved, home), DryRun: f.dryRun})
		ws.caches, ws.cacheErr = caches, err
		ws.policy = toolcache.Extend(p, caches)
	}
	return ws, nil
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
