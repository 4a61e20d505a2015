// Package policy is cordon's ACL: the allow / ask / deny decisions a
// workspace applies to file operations and shell commands, and the data
// every OS sandbox backend is derived from (see package policyderive).
//
// # Decisions and modes
//
// A Decision is Allow, Ask or Deny; combining decisions keeps the
// strictest (Deny > Ask > Allow). The zero Decision is Deny and the zero
// Policy denies everything. Three presets (Mode) cover the usual cases:
//
//	mode      write in root  read outside  write outside  shell  network
//	readonly  deny           deny          deny           none   none
//	coding    allow          ask           deny           ask    none
//	trusted   allow          allow         ask            allow  full
//
// Reads inside the root are always allowed unless a rule says otherwise.
// A Spec (the policy file form) refines a preset with shorthands:
// readable (allow read), writable (allow read and write), denied_paths,
// path_rules and command_rules; the combined rule list is path_rules, then
// writable, then readable. An explicit policy replaces the preset and
// cannot be combined with mode or the shorthands; readonly with
// command_rules is an error.
//
// # Network
//
// Policy.Network is NetworkNone, NetworkFull or NetworkAllowList; the
// allow-list's entries are Policy.Hosts (HostRules: allow, deny, unknown).
// In a policy file `network:` is "none", "full" or a mapping with allow,
// deny and unknown (see NetworkSpec). Checker.DecideHost judges a host and
// port — deny first, then allow, then unknown (deny or ask) — naming the
// rule (`network.allow[2] "*.example.org"`); Checker.AllowsAddress tells
// the proxy's resolved-address guard whether an address entry names a
// loopback or private address. Host names are normalised with IDNA's
// lookup profile (golang.org/x/net/idna: UTS #46 mapping, punycode, DNS
// lengths checked) so that "Bücher.example." and "xn--bcher-kva.example"
// are one name.
//
// # Path decisions
//
// Checker.DecidePath resolves a path first: a leading "~" is expanded with
// the configured home (an unknown home is never "/": "~" paths are errors
// and "~" patterns match nothing), a relative path is made absolute against
// the root (or the base given to DecidePathAt), symlinks are followed in
// every existing component and "." / ".." are processed physically, left
// to right, as the kernel does; a missing tail is appended lexically. The
// resolved path is inside the root or outside it.
//
// Rules are then tried in order: denied_paths (every op, always deny), the
// host's system secrets such as /etc/shadow (every op, see SystemSecrets),
// the protected paths (write deny, see Protect), then the first path_rules
// entry whose pattern matches and whose ops include the op, then the
// default (inside: read allow, write = Policy.Write; outside:
// ReadOutside / WriteOutside). The Verdict names the deciding rule
// (`denied_paths[0] ".env*"`, `protect[0] "**/.git/hooks"`,
// `path_rules[2] "secrets/"`, `default: read outside root`), the resolved
// path and where it is.
//
// # Patterns
//
// A trailing "/" is ignored; an empty pattern is an error.
//
//   - Starting with "/" or "~": absolute. It matches the resolved path and
//     its whole subtree. Its literal prefix is itself resolved through
//     symlinks when the policy is compiled, so "/etc/x" still matches where
//     /etc is a link.
//   - Containing "/" otherwise ("secrets/keys", "**/.git/hooks"): relative
//     to the root, matching the root-relative path and its subtree; it
//     never matches outside the root.
//   - Without "/" (".env*", "secrets"): a bare name, matching when any
//     segment of the path matches — the segments of the root-relative path
//     inside the root, of the absolute path outside it — so ".env*" bites
//     outside the root too.
//
// Globs follow gitignore / doublestar: "*" and "?" match within one
// segment, "[...]" is a class, "**" spans segments, "{a,b}" alternates.
// Unlike the reference design cordon was specified from, "*" never crosses
// "/". Paths are matched as bytes, so names that are not UTF-8 still match.
// Malformed patterns ("[", "a[", a lone trailing "\") are rejected when the
// policy is built, naming the list, index and pattern (*PatternError).
// NUL bytes in paths, patterns and commands are errors.
//
// # The command gate
//
// Checker.DecideCommand parses a command with a real shell parser and
// judges every simple command in it and every path it names (see
// CommandVerdict for the full list). It sees commands in every shell
// construct, in substitutions, in sh -c and eval strings (parsed
// recursively, 64 levels at most), behind wrappers (env, nohup, timeout,
// xargs, sudo, ...) and after quote removal, so "r"m, \rm and $'\x72m' are
// all rm. Rules match word prefixes ("git push" matches "git push origin",
// not "git pushx"); across segments and path claims the strictest verdict
// wins. Anything it cannot know — a parse error, a non-literal command name,
// an exceeded cap, a path it cannot resolve — is at least Ask, and code it
// cannot read (python -c, a shell reading stdin, awk programs, git -c) is
// at least Ask whenever that code could bypass a command rule. Redirect
// targets, path-looking arguments and writers' operands are path claims,
// judged like DecidePath after "~" and $HOME expansion and cd tracking.
// The gate is not a sandbox: it only ever adds
// restrictions and explains them. A determined program can always do
// something the gate did not see (a script that writes another script);
// what stops it is the OS sandbox derived from the same policy by package
// policyderive and enforced by the executor backends.
//
// # Protected paths
//
// Protect write-denies, at any depth and including paths that do not exist
// yet, files that run later outside the sandbox: git hooks and config,
// shell profiles, editor settings, MCP config (DefaultProtected). They are
// ordinary rules (`protect[i]`) placed before path_rules, so explanations
// show them; normal git use (objects, refs, index) keeps working.
// `.cordon`, which holds the project policy layer, is one of them.
//
// # Layers
//
// A Stack builds one Policy from layers: managed (an organisation's
// file), options (what the user chose for this run), user
// (UserPolicyPath) and project (ProjectPolicyPath in the root). Rules are
// combined in the order managed, options, user, project and the first
// match decides; settings come from the highest of options and user that
// sets them; the managed layer's decisions and network are ceilings, its
// rules come first, and the project layer (it arrives with the
// repository) may only restrict: its mode is a ceiling and every allow is
// an error. Rule names then carry their layer and file (Policy.Origins);
// code that must tell rules apart uses Rule.List, never the name.
// LoadStack reads the standard files; one that exists but does not load is
// an error naming the layer, file and line.
package policy
