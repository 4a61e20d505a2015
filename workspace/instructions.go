package workspace

import (
	"context"
	"fmt"
	"github.com/cordon-sandbox/cordon/toolcache"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// Instructions returns the "## Workspace" section of a system prompt,
// derived from the policy and from what the executor says it enforces
// (executor.Describer; an executor without it is assumed to enforce
// nothing). It never promises more than is enforced. ctx bounds the
// Describe call.
func (w *Workspace) Instructions(ctx context.Context) string {
	caps := w.capabilities(ctx)
	return w.instructions(caps, w.autoAllowFor(ctx, caps))
}

// controlWords says in plain words what each control stops.
var controlWords = map[executor.Control]string{
	executor.ControlFSRead:        "reading files the policy does not allow",
	executor.ControlFSWrite:       "writing files the policy does not allow",
	executor.ControlFSNewFiles:    "denied and protected names created while the command runs",
	executor.ControlFSMetadata:    "inspecting paths outside the allowed areas",
	executor.ControlProtect:       "writing protected paths",
	executor.ControlNetTCP:        "TCP connections when the network is off",
	executor.ControlNetUDP:        "UDP traffic when the network is off",
	executor.ControlNetUnix:       "connecting to Unix sockets outside the allowed areas",
	executor.ControlNetAbstract:   "reaching abstract Unix sockets outside the sandbox",
	executor.ControlSignal:        "signalling processes outside the sandbox",
	executor.ControlProcessTree:   "leaving processes behind after a timeout",
	executor.ControlProcInfo:      "reading other processes' details",
	executor.ControlHostProcess:   "reaching the memory of host processes",
	executor.ControlKernelObjects: "the host's kernel keyrings and shared memory",
	executor.ControlNetAllowList:  "the network allow-list",
}

// surfaceSummary names the default protected paths in groups; the
// refusal of one names it exactly.
const surfaceSummary = "git's hooks and config (`.git/hooks`, `.git/config`, `.gitmodules`), shell start-up files (`.bashrc`, `.profile`, …), and the settings of editors, agents, hook managers and package managers (`.vscode`, `.idea`, `.claude`, `.mcp.json`, `.husky`, `.npmrc`, …)"

// pythonMarkers are root entries that say the project uses Python.
var pythonMarkers = []string{".venv", "venv", "pyproject.toml", "requirements.txt", "setup.py", "setup.cfg", "Pipfile"}

// usesPython reports whether the root looks like a Python project: one
// of pythonMarkers, or a .py file at the root.
func usesPython(root string) bool {
	for _, m := range pythonMarkers {
		if _, err := os.Lstat(filepath.Join(root, m)); err == nil {
			return true
		}
	}
	py, _ := filepath.Glob(filepath.Join(root, "*.py"))
	return len(py) > 0
}

func (w *Workspace) instructions(caps executor.Capabilities, auto AutoAllow) string {
	p := w.checker.Policy()
	root := w.Root()
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }

	line("## Workspace")
	line("")
	line("Your workspace is the directory `%s`. Relative paths in tool arguments are relative to it.", root)
	line("Commands and their output use absolute paths: a path that starts with `%s/` is the workspace path after that prefix (`%s/src/main.go` is `src/main.go`).", strings.TrimSuffix(root, "/"), strings.TrimSuffix(root, "/"))
	if h := w.Home(); h != "" {
		line("`~` means `%s`.", h)
	}
	line("")

	// Mode and file access.
	mode := w.modeName
	if mode == "custom" {
		line("Mode: custom policy.")
	} else {
		line("Mode: %s.", mode)
	}
	switch p.Write {
	case policy.Allow:
		line("Inside the workspace you may read files and create, edit and delete them.")
	case policy.Ask:
		line("Inside the workspace you may read files; changing a file needs the user's approval.")
	default:
		line("Inside the workspace you may read files but not change them.")
	}
	line("Outside the workspace, reading %s and writing %s.", decisionWords(p.ReadOutside), decisionWords(p.WriteOutside))
	// Under a sandbox the toolchain caches' rules are said in one line
	// (Toolchains, below), not listed here.
	var rules []policy.PathRule
	for i, r := range p.PathRules {
		if !(caps.Sandboxed && toolchainRule(p, i)) {
			rules = append(rules, r)
		}
	}
	if len(rules) > 0 {
		line("Path rules, in order (the first that matches a path decides):")
		for _, r := range rules {
			line("- `%s`: %s (%s)", r.Pattern, actionWord(r.Action), opsWords(r.Ops))
		}
	}
	if len(p.DeniedPaths) > 0 {
		line("Denied paths, never readable or writable (a pattern without `/` matches a file or directory name at any depth, inside or outside the workspace): %s.", codeList(p.DeniedPaths))
	}
	switch {
	case !p.Protect.Disabled && len(p.Protect.Extra) > 0:
		line("Protected paths, never writable at any depth, even if they do not exist yet: %s; also %s.", surfaceSummary, codeList(protectNames(p.Protect.Extra)))
	case !p.Protect.Disabled:
		line("Protected paths, never writable at any depth, even if they do not exist yet: %s.", surfaceSummary)
	case len(p.Protect.Extra) > 0:
		line("Protected paths, never writable at any depth, even if they do not exist yet: %s.", codeList(protectNames(p.Protect.Extra)))
	}
	switch {
	case w.asker == nil:
		line("Nobody can approve operations in this session: an operation that needs approval is refused.")
	default:
		line("Operations that need approval wait for the user's answer; the user may approve one once or for this session (then the same command words, path or host is not asked again).")
	}
	line("A refused operation returns an error naming the rule and the reason. Do not work around it by other means (another tool, another path to the same file, a command).")
	line("")

	// Shell and sandbox.
	if !p.AllowShell {
		line("Shell: none. This workspace runs no commands; use the file tools.")
	} else {
		switch p.ShellDefault {
		case policy.Allow:
			line("Shell: commands run with `/bin/sh -c`, in the workspace root unless you give a directory; commands are allowed unless a rule says otherwise.")
		case policy.Ask:
			if a := auto; a.On {
				line("Shell: commands run with `/bin/sh -c`, in the workspace root unless you give a directory; they run in the %s sandbox without asking, unless a rule, a path they name outside what the policy allows or a network destination needs the user's approval.", caps.Backend)
				if a.Exclusive {
					line("While a background process or another command runs, commands need the user's approval unless a rule allows them.")
				}
			} else {
				line("Shell: commands run with `/bin/sh -c`, in the workspace root unless you give a directory; each command needs the user's approval unless a rule allows it.")
			}
		default:
			line("Shell: commands run with `/bin/sh -c`, in the workspace root unless you give a directory; only commands a rule allows can run.")
		}
		if len(p.CommandRules) > 0 {
			parts := make([]string, len(p.CommandRules))
			for i, r := range p.CommandRules {
				parts[i] = fmt.Sprintf("`%s` %s", r.Pattern, actionWord(r.Action))
			}
			line("Command rules (a rule matches a command that starts with its words): %s.", strings.Join(parts, "; "))
		}
		line("Commands also claim the paths they name: a command that reads or writes a path the policy refuses is refused or needs approval.")
		w.sandboxLines(line, caps, p)
		if caps.Sandboxed && cacheSummary(w.caches) != "" {
			line("Toolchains: %s. Packages not already there cannot be added to them from here.", cacheSummary(w.caches))
		}
		if usesPython(root) {
			if _, explicit := w.env["PATH"]; explicit {
				line("Python: PATH is fixed by this workspace, so virtualenvs are not activated automatically.")
			} else {
				line("Python: a virtualenv at `.venv` (or `venv`) is activated for every command. Install packages into it (`python3 -m venv .venv`, then `pip install ...`), never system-wide.")
			}
		}
	}
	if p.Write != policy.Deny {
		line("Scratch files: use `tmp/` in the workspace (create it when needed) rather than `/tmp`.")
	}
	return b.String()
}

// sandboxLines describes the OS sandbox, or its absence, and the network.
func (w *Workspace) sandboxLines(line func(string, ...any), caps executor.Capabilities, p *policy.Policy) {
	name := caps.Backend
	if name == "" {
		name = "unknown"
	}
	enforced := map[executor.Control]bool{}
	if caps.Sandboxed {
		for _, c := range caps.Enforced {
			enforced[c] = true
		}
	}
	if !caps.Sandboxed || len(caps.Enforced) == 0 {
		line("Sandbox: none. Commands are not sandboxed by the operating system (executor `%s`): the policy is checked against each command line before it runs, but nothing limits what the command does once it runs. Keep everything a command does within the rules above.", name)
	} else {
		line("Sandbox: commands run in an OS sandbox (`%s`) derived from this policy: what the policy refuses, the operating system refuses too (`Permission denied`, `Read-only file system`).", name)
		if len(caps.Gaps) > 0 {
			gaps := make([]string, len(caps.Gaps))
			for i, g := range caps.Gaps {
				wd := controlWords[g.Control]
				if wd == "" {
					wd = "an isolation this host lacks"
				}
				gaps[i] = fmt.Sprintf("%s (%s)", wd, g.Reason)
			}
			line("Not enforced on this host: %s. Keep within the rules there too.", strings.Join(gaps, "; "))
		}
		line("Inside the sandbox `/tmp` may be private to each command.")
	}
	switch {
	case p.Network == policy.NetworkFull:
		line("Network: allowed.")
	case p.Network == policy.NetworkAllowList && enforced[executor.ControlNetAllowList]:
		allow := "none"
		if len(p.Hosts.Allow) > 0 {
			allow = strings.Join(p.Hosts.Allow, ", ")
		}
		unknown := "refused"
		if p.Hosts.Unknown == policy.Ask {
			unknown = "asked of the user, once per host and port"
		}
		line("Network: only these hosts, through the proxy that HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name: %s. Other hosts are %s; a refused connection gets 403 (or SOCKS code 2) with a line naming the rule. Nothing else is reachable, DNS and loopback included: use the proxy variables (most tools do).", allow, unknown)
	case p.Network == policy.NetworkAllowList:
		line("Network: an allow-list by policy (%s), but this executor does not enforce it; do not use the network beyond those hosts.", strings.Join(p.Hosts.Allow, ", "))
	case enforced[executor.ControlNetTCP] && enforced[executor.ControlNetUDP] && strings.HasPrefix(caps.Info["loopback"], "none"):
		line("Network: none. Commands cannot reach the network and cannot open network sockets, loopback included: a test server on 127.0.0.1 cannot run here.")
	case enforced[executor.ControlNetTCP] && enforced[executor.ControlNetUDP]:
		line("Network: none. Nothing outside the sandbox is reachable, the host's loopback included; a server a command starts on 127.0.0.1 works within the sandbox.")
	case enforced[executor.ControlNetTCP]:
		line("Network: none. TCP connections are blocked; other traffic (UDP) is not blocked here, so do not use the network.")
	default:
		line("Network: none by policy, but not enforced here; do not use the network.")
	}
}

func decisionWords(d policy.Decision) string {
	switch d {
	case policy.Allow:
		return "is allowed"
	case policy.Ask:
		return "needs the user's approval"
	}
	return "is not allowed"
}

func actionWord(d policy.Decision) string {
	switch d {
	case policy.Allow:
		return "allowed"
	case policy.Ask:
		return "needs approval"
	}
	return "denied"
}

func opsWords(ops []policy.Op) string {
	if len(ops) == 0 || (slices.Contains(ops, policy.Read) && slices.Contains(ops, policy.Write)) {
		return "read and write"
	}
	return ops[0].String()
}

func codeList(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return strings.Join(out, ", ")
}

// protectNames shows protected patterns as the names they protect.
func protectNames(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strings.TrimPrefix(p, "**/")
	}
	return out
}

// cacheSummary lists the toolchain caches in words: "the go module cache
// is readable, a go build cache of this workspace's own is writable".
func cacheSummary(caches []toolcache.Cache) string {
	parts := make([]string, 0, len(caches))
	for _, c := range caches {
		if c.NoRule {
			continue
		}
		if c.Write {
			parts = append(parts, fmt.Sprintf("a %s %s of this workspace's own is writable", c.Tool, c.Kind))
		} else {
			parts = append(parts, fmt.Sprintf("the %s %s is readable", c.Tool, c.Kind))
		}
	}
	return strings.Join(parts, ", ")
}

// toolchainRule reports whether path_rules[i] of p is a toolchain cache's
// (package toolcache names each by its Origin's label).
func toolchainRule(p *policy.Policy, i int) bool {
	for _, o := range p.Origins {
		if o.List == "path_rules" && i >= o.Start && i < o.End {
			return strings.HasPrefix(o.Label, toolcache.LabelPrefix)
		}
	}
	return false
}
