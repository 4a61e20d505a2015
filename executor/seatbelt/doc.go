// Package seatbelt runs commands under macOS's Seatbelt sandbox, the
// kernel's mandatory access control that Apple's own services run under,
// through /usr/bin/sandbox-exec. The profile is derived per command from
// the same policy the workspace's file tools and command gate use, so
// that what the policy forbids the kernel forbids too.
//
//	x, err := seatbelt.New(seatbelt.Config{})
//	if err != nil {
//		return err // *executor.UnavailableError off macOS, or where sandbox-exec cannot sandbox
//	}
//	defer x.Close()
//	res, err := x.Run(ctx, &executor.Request{Command: "go test ./...", Dir: root, Root: root, Home: home,
//		Policy: policy.Coding.Policy(), Env: env})
//
// On every system but macOS, New fails with *executor.UnavailableError
// wrapping errors.ErrUnsupported. Argv, the command line builder, is
// portable, and so is the rendering (policyderive.SBPL) and its model
// tests: the profile is checked on Linux too.
//
// # How it works
//
// For each request Run derives the profile (policyderive.Deriver.Derive
// with Request.Policy, Root, Home, Dir and Grants; mask searches are
// cached), adds the executor's private temporary directory, and renders
// it with policyderive.SBPL into profile text and parameters — once per
// profile key, then cached. It then runs exactly
//
//	/usr/bin/sandbox-exec -p PROFILE -D KEY=VALUE ... /bin/sh -c COMMAND
//
// through the shared process plumbing (internal/procgroup): forked from
// the launcher thread with every descriptor but 0-2 closed on exec, in a
// new session and process group without a controlling terminal, stdin
// /dev/null, in Request.Dir, with exactly Request.Env (sandbox-exec
// passes its environment to the shell untouched), stdout and stderr
// captured apart with head and tail kept. sandbox-exec compiles the
// profile, applies it to itself and executes /bin/sh, so the shell has
// sandbox-exec's process id: a timeout or a cancelled context stops the
// process group and every descendant found in the process table, then
// kills them, and reports TimedOut. The sandbox is inherited by every
// process the shell starts and cannot be lifted from inside.
//
// Only /usr/bin/sandbox-exec is ever run — never one found on PATH, which
// the user or an agent may control. It lies on macOS's sealed system
// volume. New checks that it is an executable file and runs one trial,
// /bin/sh -c : under the profile of a coding-mode workspace; if that
// fails, a second trial under a profile that allows everything tells a
// sandbox-exec that cannot apply profiles here (ErrCannotApply: cordon
// already runs inside a sandbox) from a profile this macOS release does
// not let the shell start under (ErrTrial).
//
// After each command the protected-path guard (internal/protectguard)
// walks the writable grants and undoes every protected path the command
// created or changed (see Gaps for how that can happen despite the
// profile); its repairs are in Result.Violations. Background processes
// (Start) are repaired when they exit and before every later command.
//
// Strict mode is the default: when the rendering is looser than the
// policy in a way that is not inherent to Seatbelt (policyderive's
// Fidelity.Blocking), Run fails with *executor.UnenforceableError listing
// the gaps, unless Config.BestEffort is set. Today's renderer reports no
// such element: every gap below is inherent and declared by Describe.
//
// # What the profile contains
//
// policyderive.SBPL renders the policy's decision procedure directly,
// not as masks; Seatbelt evaluates the last matching rule, so the rules
// come lowest priority first:
//
//   - (version 1) and (deny default): everything not allowed below is
//     denied — files, network, Mach services, IPC, process inspection.
//   - A base that lets /bin/sh run: process-fork, signals and
//     process-info* for processes of the same sandbox only, sysctl-read,
//     file-read-metadata (stat), and /private/var/select/sh (which shell
//     /bin/sh is).
//   - Reads and execution (file-read* process-exec), then writes
//     (file-write*): the defaults (outside the root: the System paths
//     readable, the rest as the policy's read_outside and write_outside
//     say, an ask being a deny; inside the root: readable, writable as
//     the policy's write says), the private temporary directory, then
//     every effective path rule from the last to the first — denied
//     paths, host secrets, protected paths and path_rules — as allows
//     and denies, and the approved Grants within ask rules. Literal
//     patterns are subpath filters on parameters; bare-name and glob
//     patterns are regexes (letters matched in either case, since macOS
//     file systems usually ignore case), so they also cover paths created
//     while the command runs: .env files, .git/hooks and .git/config at
//     any depth, whether or not they existed when the command started.
//   - /dev/null, /dev/zero, /dev/random, /dev/urandom and /dev/fd/N.
//   - network*: denied under network none, Unix sockets included; under
//     network full, IP networking allowed and Unix sockets denied except
//     the DNS resolver's.
//
// sandbox-probe derive --backend seatbelt prints the profile, its
// parameters and the fidelity report; Executor.Args returns the exact
// command line Run would execute.
//
// # Parameters
//
// No path is written into the profile text: each reaches it as a -D
// KEY=VALUE parameter (ROOT, TMP, SYSTEM_n, RULE_n, GRANT_n) that the
// profile names with (param "KEY"), or, inside a regex, with every
// metacharacter escaped (bytes a Seatbelt regex cannot hold widen the
// deny, a stricter element of the fidelity report). Argv passes the
// profile, each KEY=VALUE and the command as separate execve arguments,
// so spaces, quotes, parentheses, "=" and non-UTF-8 bytes in paths need
// no quoting and cannot change the profile's structure; a NUL byte (which
// execve cannot carry), a malformed or repeated key, and a parameter the
// profile references but nobody gave are refused with *ArgvError before
// anything runs. The command is one argument of /bin/sh -c and never
// part of the profile. The profile and its parameters are visible in the
// host's process list (paths, not secrets); the environment is not.
//
// # Gaps
//
// Describe declares these as gaps (all inherent: strict mode runs):
//
//   - fs-metadata: stat and the existence of files are visible everywhere
//     except under deny rules (a shell must stat its way along paths);
//     contents are not. Changing metadata (chmod, chown, utimes) is a
//     write and is denied outside write grants.
//   - protect: Seatbelt judges an operation by the path it names, not by
//     the file, and the profile does not pin the directories above
//     protected paths. Renaming a repository's .git away, writing hooks
//     or config in the renamed tree and renaming it back changes
//     protected files while the command runs. The guard undoes it when
//     the command ends; in between, a host program that runs git there
//     can execute a planted hook. (Hard links should not be a way around
//     the rules — the profile allows no file-link operation — and the
//     guard would undo such changes too; this is not verified here.)
//   - process-tree: there is no PID namespace. A process that
//     double-forks away from the command's tree (its parent exits first)
//     is re-parented to launchd, escapes the kill on timeout and keeps
//     running — sandboxed, since the sandbox cannot be shed.
//   - proc-info: sysctl-read is allowed (shells and most programs need
//     it), so the process table (ids, parents, users, names) and host
//     facts are readable; inspecting other processes' arguments,
//     environment and files (process-info*) is not.
//
// Also true, and in Describe's Info: network filtering has two settings
// here, none and full; Seatbelt filters IP traffic by local or remote
// address and port only, never by host name, so a host allow-list would
// need a proxy. macOS has no abstract Unix sockets (that control does
// not apply) and no no_new_privs: setuid programs still run, confined by
// the inherited sandbox. No Mach service may be looked up, so programs
// that ask a system daemon (user names through opendirectoryd, the
// keychain, preferences, some of Apple's developer tool shims) fail or
// fall back — stricter than the policy, never looser. Apple marks
// sandbox-exec(1) and the profile language deprecated and leaves them
// undocumented, but still ships both and uses Seatbelt for its own
// services; should a release remove /usr/bin/sandbox-exec, New fails
// with ErrNotInstalled.
//
// # Requirements
//
// macOS with /usr/bin/sandbox-exec (every release ships it), and a
// process not already inside a Seatbelt sandbox: sandboxes do not nest,
// so cordon cannot use this backend when it is itself started by an app
// or agent that sandboxes its children (New fails with ErrCannotApply;
// tests skip with that reason unless CORDON_REQUIRE names seatbelt). No
// privileges are needed.
//
// # Choices
//
// Where the design is silent:
//
//   - Run tells a sandbox that was never set up from a command that
//     failed: when a command fails with stderr starting with
//     "sandbox-exec: ", /bin/sh -c : is run under the same profile,
//     directory and environment; if that fails too, Run returns
//     *SetupError with sandbox-exec's message instead of a Result. The
//     check costs nothing for commands that succeed, and a command that
//     merely prints such a line gets its Result. Start does not check.
//   - The executor has a private temporary directory (TempDir) that
//     every command may write, since the host's /tmp and per-user
//     temporary directory are not granted; the workspace points TMPDIR at
//     it. Close removes it.
//   - No "--" precedes /bin/sh: -p and -D consume their arguments
//     whatever they hold, and /bin/sh is an absolute path, which ends
//     sandbox-exec's options.
//
// # Troubleshooting
//
// "sandbox_apply: Operation not permitted" (ErrCannotApply, or
// *SetupError): the calling process is already sandboxed (an IDE, an
// agent's own sandbox, a terminal started from a sandboxed app); run
// cordon from an unsandboxed shell. ErrTrial: /bin/sh cannot start under
// cordon's base profile on this macOS release; the error's message and
// the denial log tell what was denied (report both with the release that
// sandbox-probe detect shows). To see every denial as it happens:
//
//	/usr/bin/log stream --style compact --predicate 'eventMessage CONTAINS "deny("'
//
// git fails with a global configuration it cannot read: coding mode
// keeps ~/.gitconfig unreadable (it is outside the root); set
// GIT_CONFIG_GLOBAL=/dev/null in the request's environment, or grant it
// readable. Tools that write caches in the home directory (go build, npm)
// need those directories granted writable (policy writable:
// ["~/Library/Caches/go-build"]) or pointed into the workspace or
// TMPDIR. Programs that need a Mach service fail under (deny default)
// (see Gaps); use another backend for them. "Argument list too long":
// the profile and its parameters go on the command line, whose size
// macOS bounds (kern.argmax); a policy with thousands of rules exceeds
// it.
package seatbelt
