//go:build linux

package conformance_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// miniBwrap is a deliberately small bubblewrap sandbox, written here only
// so the suite's denial path (a real kernel boundary, twins that succeed
// under the allowing policy) is itself tested. It is not executor/bwrap:
// it masks only what exists when the command starts and does not pin the
// ancestors of masks, and it says so in Describe.
type miniBwrap struct{ bwrap string }

func (m miniBwrap) Describe(context.Context) executor.Capabilities {
	return executor.Capabilities{Backend: "mini-bwrap", Sandboxed: true, Gaps: []executor.Gap{
		{Control: executor.ControlFSNewFiles, Reason: "masks cover only paths that exist when the command starts"},
		{Control: executor.ControlProtect, Reason: "ancestors of protected mounts are not pinned, so .git can be renamed away"},
		{Control: executor.ControlNetUnix, Reason: "Unix sockets inside the root are bound with it and can be connected to"},
		{Control: executor.ControlFSRead, Reason: "other names (hard links) of denied files are not masked, nor files of System trees that other users may not read"},
		{Control: executor.ControlNetAllowList, Reason: "no allow-list proxy: such policies are refused"},
	}}
}

func (m miniBwrap) Run(ctx context.Context, req *executor.Request) (*executor.Result, error) {
	p := req.Policy
	if p.Network == policy.NetworkAllowList {
		return nil, &executor.UnenforceableError{Backend: "mini-bwrap", Gaps: []executor.Gap{{Control: executor.ControlNetAllowList, Reason: "no allow-list proxy"}}}
	}
	args := []string{m.bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--clearenv"}
	if p.Network == policy.NetworkFull {
		args = append(args, "--share-net")
	}
	for _, kv := range req.Env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	exists := func(path string) bool { _, err := os.Lstat(path); return err == nil }
	if p.ReadOutside == policy.Allow {
		args = append(args, "--ro-bind", "/", "/")
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	for _, s := range p.SystemPaths() {
		if !strings.HasPrefix(s, "/dev") && !strings.HasPrefix(s, "/proc") && exists(s) {
			args = append(args, "--ro-bind", s, s)
		}
	}
	bind := "--ro-bind"
	if p.Write == policy.Allow {
		bind = "--bind"
	}
	args = append(args, bind, req.Root, req.Root)
	for _, r := range p.PathRules {
		if r.Action == policy.Allow && filepath.IsAbs(r.Pattern) && exists(r.Pattern) {
			b := "--ro-bind"
			if r.AppliesTo(policy.Write) {
				b = "--bind"
			}
			args = append(args, b, r.Pattern, r.Pattern)
		}
	}
	mask := func(path string) {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			args = append(args, "--tmpfs", path, "--remount-ro", path)
		} else if err == nil {
			args = append(args, "--ro-bind", "/dev/null", path)
		}
	}
	var names []string
	for _, d := range p.DeniedPaths {
		if filepath.IsAbs(d) {
			mask(d)
		} else {
			names = append(names, d)
		}
	}
	var protect []string
	for _, pat := range p.Protect.Patterns() {
		protect = append(protect, strings.TrimPrefix(pat, "**/"))
	}
	// Masks and protected binds only where commands can see anything:
	// binding a protected file of an invisible home would expose it.
	visible := []string{req.Root}
	if p.ReadOutside == policy.Allow {
		visible = append(visible, req.Home)
	}
	for _, top := range visible {
		_ = filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			for _, n := range names {
				if ok, _ := filepath.Match(n, d.Name()); ok {
					mask(path)
				}
			}
			for _, pat := range protect {
				if strings.HasSuffix(path, "/"+pat) {
					args = append(args, "--ro-bind", path, path)
				}
			}
			return nil
		})
	}
	args = append(args, "--chdir", req.Dir, "--", "/bin/sh", "-c", req.Command)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	r := *req
	r.Command = "exec " + strings.Join(quoted, " ")
	return executor.NewLocal().Run(ctx, &r)
}

// TestMiniBwrapDenies runs the suite against a real, if small, kernel
// sandbox: the suite must report denials (with successful twins), the
// functional cases must pass inside PID, network and mount namespaces, and
// the declared gaps show where the sandbox really leaks.
func TestMiniBwrapDenies(t *testing.T) {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap is not installed")
	}
	if out, err := exec.Command(bw, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "--", "/bin/true").CombinedOutput(); err != nil {
		t.Skipf("bwrap cannot create namespaces here: %v: %s", err, out)
	}
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return miniBwrap{bw}, nil },
		// bwrap reports a child killed by signal N as exit 128+N (a real
		// backend must map it back), and this sandbox has no Starter.
		conformance.Skip("exit-signal", "background", "session-memory"))
	require.NoError(t, err)
	logReport(t, rep)
	// What this small sandbox really leaks (and declares); renaming .git
	// away and back is denied because the read-only mounts move with it.
	// It has no guard, so what the host-run surface's repair closes after
	// a command (git by structure, tool settings never mounted) leaks.
	gaps := map[string]bool{
		"denied-new-file": true, "protect-new-repo": true, "protect-rename-recreate": true,
		"git-redirect-commondir": true, "git-redirect-gitdir-file": true, "git-redirect-modules": true, "git-nested-repo": true, "git-redirect-worktrees": true, "git-separate-git-dir": true, "git-init-root-fsmonitor": true, "tool-settings": true,
		"socket-in-root": true, "socket-unlisted-dir": true, "socket-trusted-read": true, "hardlink-denied": true, "system-private": true,
	}
	for _, c := range conformance.Cases() {
		if c.Control == executor.ControlNetAllowList {
			gaps[c.ID] = true // refused: no proxy
		}
	}
	for _, c := range rep.Cases {
		if gaps[c.ID] {
			assert.Equal(t, conformance.Gap, c.Outcome, "%s leaks in the mini sandbox and declares it: %s %v", c.ID, c.Reason, c.Evidence)
			continue
		}
		assert.True(t, c.Passed, "%s: %s: %s\n%v\n%v", c.ID, c.Outcome, c.Reason, c.Evidence, c.Twin)
		if c.Expected == conformance.Denied {
			assert.NotEmpty(t, c.Twin, "%s: a denial has twin evidence", c.ID)
		}
	}
	assert.True(t, rep.OK())
}
