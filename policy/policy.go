package policy

import (
	"fmt"
	"runtime"
)

// Mode is a preset policy. Shorthands (Spec.Readable, Spec.Writable, ...)
// refine a preset.
//
//	mode      write in root  read outside  write outside  shell  network
//	readonly  deny           deny          deny           none   none
//	coding    allow          ask           deny           ask    none
//	trusted   allow          allow         ask            allow  full
//
// The zero value is Coding, the default.
type Mode uint8

const (
	// Coding lets the agent write inside the root; reads outside, and every
	// command, need approval. It is the default.
	Coding Mode = iota
	// Readonly lets the agent read inside the root only, with no shell.
	Readonly
	// Trusted lets the agent read anywhere and run any command; writes
	// outside the root need approval.
	Trusted
)

// String returns "coding", "readonly" or "trusted".
func (m Mode) String() string {
	switch m {
	case Coding:
		return "coding"
	case Readonly:
		return "readonly"
	case Trusted:
		return "trusted"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// MarshalText implements encoding.TextMarshaler.
func (m Mode) MarshalText() ([]byte, error) {
	if m > Trusted {
		return nil, fmt.Errorf("invalid mode %d", uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, accepting "readonly",
// "coding" and "trusted": invalid mode "yolo".
func (m *Mode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "coding":
		*m = Coding
	case "readonly":
		*m = Readonly
	case "trusted":
		*m = Trusted
	default:
		return &TextError{Kind: "mode", Value: string(b), Valid: []string{"readonly", "coding", "trusted"}}
	}
	return nil
}

// Policy returns the preset policy of the mode, with default System and
// Protect settings.
func (m Mode) Policy() *Policy {
	switch m {
	case Readonly:
		return &Policy{Write: Deny, ReadOutside: Deny, WriteOutside: Deny, AllowShell: false, ShellDefault: Deny, Network: NetworkNone}
	case Trusted:
		return &Policy{Write: Allow, ReadOutside: Allow, WriteOutside: Ask, AllowShell: true, ShellDefault: Allow, Network: NetworkFull}
	default:
		return &Policy{Write: Allow, ReadOutside: Ask, WriteOutside: Deny, AllowShell: true, ShellDefault: Ask, Network: NetworkNone}
	}
}

// PathRule decides operations on paths matching Pattern.
//
// Pattern forms (a trailing "/" is ignored; an empty pattern is an error):
//   - starting with "/" or "~": absolute; matches the resolved path and its
//     subtree. The pattern's existing prefix is itself symlink-resolved.
//   - containing "/" otherwise: relative to the root; matches the root-relative
//     path and its subtree; never matches outside the root.
//   - without "/" (a bare name such as ".env*"): matches when any segment of
//     the path matches, inside the root and outside it.
//
// Globs: "*" and "?" match within one segment, "[...]" is a class and "**"
// spans segments. Unlike the reference design, "*" never crosses "/".
type PathRule struct {
	Pattern string   `json:"pattern" yaml:"pattern"`
	Action  Decision `json:"action" yaml:"action"`
	// Ops lists the operations the rule applies to; empty means both.
	Ops []Op `json:"ops,omitempty" yaml:"ops,omitempty"`
}

// AppliesTo reports whether the rule covers op.
func (r PathRule) AppliesTo(op Op) bool {
	if len(r.Ops) == 0 {
		return true
	}
	for _, o := range r.Ops {
		if o == op {
			return true
		}
	}
	return false
}

// CommandRule decides command segments whose first words equal Pattern's
// words ("git push" matches "git push origin", not "git pushx").
type CommandRule struct {
	Pattern string   `json:"pattern" yaml:"pattern"`
	Action  Decision `json:"action" yaml:"action"`
}

// Protect selects the protected paths: files that run later outside the
// sandbox (git hooks and config, shell profiles, editor settings) and are
// write-denied at any depth, including paths that do not exist yet.
//
// The zero value protects DefaultProtected.
type Protect struct {
	// Disabled turns protection off (protect: none).
	Disabled bool
	// Extra adds patterns to the defaults (protect: [...]).
	Extra []string
}

// SurfaceEntry is one entry of the host-run surface: a path whose content
// a program on the host later executes or obeys without the user choosing
// to run the project's code.
type SurfaceEntry struct {
	// Pattern is a protect pattern: with a "/" root-relative at any
	// depth, else a bare name at any depth, inside and outside the root.
	Pattern string
	// Tool is the host program that reads it.
	Tool string
	// Mechanism is how it makes that program run something.
	Mechanism string
}

// HostRunSurface is the host-run surface protected by default, in one
// place: each entry with the tool that reads it and the mechanism it
// protects against. Git directories are protected by structure on top of
// these names (every git directory the root contains, whatever its name,
// with an allow-list of the data git writes; see the README's security
// model). `protect: [...]` adds patterns; `protect: none` removes all.
var HostRunSurface = []SurfaceEntry{
	{"**/.git/hooks", "git", "hooks run by commit, checkout, merge, push"},
	{"**/.git/config", "git", "core.fsmonitor, core.hooksPath, aliases, filters, pager, sshCommand"},
	{".gitmodules", "git", "submodule URLs and update commands"},
	{".gitconfig", "git", "a user config in a directory used as HOME"},
	{".bashrc", "bash", "runs at every interactive shell"},
	{".bash_profile", "bash", "runs at every login shell"},
	{".zshrc", "zsh", "runs at every interactive shell"},
	{".zprofile", "zsh", "runs at every login shell"},
	{".profile", "sh", "runs at every login shell"},
	{".envrc", "direnv", "runs on cd into the directory"},
	{".vscode", "VS Code", "tasks (runOn folderOpen), settings that name programs"},
	{".idea", "JetBrains IDEs", "run configurations, startup tasks"},
	{".mcp.json", "MCP clients (Claude Code, …)", "MCP servers started as commands"},
	{".claude", "Claude Code", "hooks and MCP servers in settings.json"},
	{".cursor", "Cursor", "MCP servers in mcp.json, rules"},
	{".gemini", "Gemini CLI", "MCP servers and tool commands in settings.json"},
	{".codex", "Codex CLI", "MCP servers and config"},
	{".continue", "Continue", "MCP servers and commands in config"},
	{".windsurf", "Windsurf", "MCP servers and workflows"},
	{".devcontainer", "Dev Containers", "postCreate/postStart commands on folder open"},
	{".pre-commit-config.yaml", "pre-commit", "hooks run by git commit"},
	{".husky", "husky", "hook scripts run by git (core.hooksPath)"},
	{".lefthook.yml", "lefthook", "hooks run by git"},
	{"lefthook.yml", "lefthook", "hooks run by git"},
	{".yarnrc.yml", "yarn", "yarnPath: the yarn binary every yarn command runs"},
	{".npmrc", "npm", "script-shell, node-options and other settings npm obeys"},
	{"mise.toml", "mise", "tasks and hooks run on cd"},
	{".mise.toml", "mise", "tasks and hooks run on cd"},
	{".aider.conf.yml", "aider", "lint and test commands it runs"},
	{".cordon", "cordon", "the project policy layer (.cordon/policy.yaml): a command may not rewrite the policy that confines it"},
}

// DefaultProtected lists the patterns of HostRunSurface, in order.
var DefaultProtected = surfacePatterns()

func surfacePatterns() []string {
	out := make([]string, len(HostRunSurface))
	for i, e := range HostRunSurface {
		out[i] = e.Pattern
	}
	return out
}

// Patterns returns the protected patterns in order: the defaults (unless
// disabled), then Extra.
func (p Protect) Patterns() []string {
	var out []string
	if !p.Disabled {
		out = append(out, DefaultProtected...)
	}
	return append(out, p.Extra...)
}

// DefaultSystem returns the absolute paths that commands may read and execute
// at the OS level for a shell to work at all on this operating system. They
// are OS-level grants only: the ACL still judges file tools and path claims.
func DefaultSystem() []string {
	if runtime.GOOS == "darwin" {
		return []string{"/System", "/Library", "/usr", "/bin", "/sbin", "/private/etc", "/private/var/db/timezone", "/opt/homebrew", "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty"}
	}
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store", "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/proc/self"}
}

// SystemSecrets returns the files under the system paths that hold host
// secrets (password hashes, SSH host keys, sudo rules, TLS private keys).
// They are denied for every op, in every mode, right after denied_paths
// (source `system_secrets[i]`), so "/etc" is granted minus its secrets and
// even trusted mode, which reads "/", cannot read them. Policy.Secrets
// overrides the list.
func SystemSecrets() []string {
	if runtime.GOOS == "darwin" {
		return []string{"/private/etc/master.passwd", "/private/etc/sudoers", "/private/etc/sudoers.d", "/private/etc/ssh/ssh_host_rsa_key", "/private/etc/ssh/ssh_host_ecdsa_key", "/private/etc/ssh/ssh_host_ed25519_key", "/private/var/db/sudo"}
	}
	return []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key", "/etc/ssl/private", "/etc/security/opasswd", "/etc/krb5.keytab"}
}

// Policy is the ACL a workspace enforces and the OS sandbox is derived from.
// It is plain data; NewChecker validates and compiles it.
//
// The zero value denies everything: no writes, no reads outside the root, no
// shell, no network, default System and Protect.
type Policy struct {
	// Write decides writes inside the root.
	Write Decision
	// ReadOutside decides reads outside the root.
	ReadOutside Decision
	// WriteOutside decides writes outside the root.
	WriteOutside Decision
	// PathRules are tried in order after DeniedPaths and the protected
	// paths; the first rule that matches and covers the op decides.
	PathRules []PathRule
	// DeniedPaths are patterns denied for every op, before any rule.
	DeniedPaths []string
	// AllowShell enables commands. When false every command is denied and
	// ShellDefault is normalised to Deny.
	AllowShell bool
	// ShellDefault decides a command segment no rule matches.
	ShellDefault Decision
	// CommandRules are tried in order per segment; the first match decides.
	CommandRules []CommandRule
	// CommandDecider, if set, is consulted for every segment before
	// CommandRules; it returns false to fall through.
	CommandDecider func(segment string) (Decision, bool)

	// Network is the OS-level network access (cordon's addition).
	Network Network
	// Hosts is the allow-list used when Network is NetworkAllowList; it
	// must be empty otherwise.
	Hosts HostRules
	// System lists absolute paths commands may read and execute at the OS
	// level; nil means DefaultSystem().
	System []string
	// Protect selects the write-protected paths (cordon's addition).
	Protect Protect
	// Secrets lists host secret files denied for every op before any
	// other rule; nil means SystemSecrets(), an empty list none.
	Secrets []string
	// Origins name the layers rules came from when the policy was built
	// from a Stack of several layers; rule names then carry them.
	Origins []Origin
}

// SecretPaths returns Secrets, or SystemSecrets() when Secrets is nil.
func (p *Policy) SecretPaths() []string {
	if p.Secrets == nil {
		return SystemSecrets()
	}
	return p.Secrets
}

// SystemPaths returns System, or DefaultSystem() when System is nil.
func (p *Policy) SystemPaths() []string {
	if p.System == nil {
		return DefaultSystem()
	}
	return p.System
}

// Clone returns a deep copy of p (CommandDecider is shared).
func (p *Policy) Clone() *Policy {
	q := *p
	q.PathRules = cloneRules(p.PathRules)
	q.DeniedPaths = append([]string(nil), p.DeniedPaths...)
	q.CommandRules = append([]CommandRule(nil), p.CommandRules...)
	if p.System != nil {
		q.System = append([]string{}, p.System...)
	}
	q.Protect.Extra = append([]string(nil), p.Protect.Extra...)
	q.Hosts = p.Hosts.Clone()
	if p.Secrets != nil {
		q.Secrets = append([]string{}, p.Secrets...)
	}
	q.Origins = append([]Origin(nil), p.Origins...)
	return &q
}

func cloneRules(rs []PathRule) []PathRule {
	if rs == nil {
		return nil
	}
	out := make([]PathRule, len(rs))
	for i, r := range rs {
		r.Ops = append([]Op(nil), r.Ops...)
		out[i] = r
	}
	return out
}

// Grant is a path the user approved for one command: an ask that became an
// allow. Grants open the OS sandbox for exactly that command.
type Grant struct {
	// Path is absolute and resolved.
	Path string `json:"path"`
	// Op is the approved operation; a Write grant implies Read.
	Op Op `json:"op"`
}
