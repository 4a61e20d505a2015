// Package workspace gives an AI agent a directory to work in: file tools,
// a shell and background processes, every operation gated by one
// allow/ask/deny policy (package policy) and every command run by an
// Executor (package executor) — the plain local one by default, an OS
// sandbox derived from the same policy when one is configured:
//
//	ws, err := workspace.Local(root, workspace.WithExecutor(bwrap.New(cfg)))
//	if err != nil { ... } // bwrap.New's error comes back here, wrapped
//	s, err := ws.Open(ctx)
//	defer s.Close()
//	text, err := s.ReadText(ctx, "README.md", 1, 40)
//
// # Workspaces and sessions
//
// Local builds a Workspace: the root (resolved once), the policy compiled
// for it (a preset chosen by WithMode and refined by the shorthands
// WithReadable, WithWritable, WithDeniedPaths, WithPathRules and
// WithCommandRules, or an explicit WithPolicy — exclusive with them, as in a
// policy file), the home directory "~" stands for (WithHome; "" means
// unknown, never "/"), the executor, the approver, the environment options
// and the limits. Invalid options are *OptionError.
//
// Open starts a Session, the unit that owns background processes. A
// Session is safe for concurrent use. Close kills every background process
// (its whole process group), waits until each is reaped and cancels
// foreground commands still running; every later call returns
// *ClosedError.
//
// # Decisions and approvals
//
// Every file operation and every command is judged by the policy first;
// the workspace re-derives nothing itself. A deny is a *policy.DeniedError
// (errors.Is(err, fs.ErrPermission)) that names the rule and carries the
// reason the model should read. An ask calls the Asker given with
// WithAsker (or the Approver of WithApprover, whose answers hold once)
// with an *ApprovalRequest (the op, the path or the command and its
// verdict); a refusal, or an ask with no approver, is a
// *policy.DeniedError with Decision policy.Ask ("needs approval").
//
// The waterfall, first step that decides: the policy's rules (of every
// layer, WithPolicyLayers: a managed layer's deny and ask rules first),
// a deny, the session's grants, the sandbox's auto-allow, the policy's
// allow, then the asker. Scoped answers (Answer.Scope): ScopeOnce;
// ScopeSession, remembered by the Session and covering exactly
// ApprovalRequest.Covers — each asking command segment as written, in the
// same directory, while every file the command names keeps its content
// (hashed with SHA-256 when it asks; output redirections excepted; a
// command with words known only at run time is never covered), a
// resolved path and op for one tool, a host and port; ScopeAlways, which
// also appends the covering allow rule to the user policy file
// (WithApprovalStore; gopkg.in/yaml.v3's node API keeps the file's
// comments). Session grants end with the session.
//
// Sandbox auto-allow (WithSandboxAutoAllow, on by default): a command
// whose only ask is shell_default runs without asking when the session's
// executor enforces the policy strictly — derived at Open from Describe
// and from the executor's assessment of this policy (executor.Assessor),
// never assumed, never with executor.Local, best effort or network full.
// Gaps only a concurrent process reaches make it exclusive (the run gate,
// golang.org/x/sync/semaphore: an auto-allowed command runs only while
// nothing else of the workspace runs, others wait for it). See AutoAllow
// and the README for what it trades.
//
// Run's result carries a violation report (RunResult.Refusals, Notice):
// guard repairs, proxy refusals, and the file accesses the sandbox refused
// as the command's error output names them, judged as written and never
// resolved on the host.
//
// When a command is approved,
// its path claims that were asks become policy.Grants in the
// executor.Request, so an OS sandbox opens exactly those paths for exactly
// that command; the request also carries the Policy, Root and Home, and
// the backend derives its profile from them for every command.
// EditText needs both read and write; ListFiles and Grep judge the
// directory they start from and skip (Grep) or omit (ListFiles) entries
// the policy denies; entries that need approval are not entered, unless
// the same rule's ask was approved for the starting directory.
//
// DecidePath and DecideCommand return verdicts without acting, for
// explain-style UIs.
//
// # File tools and race safety
//
// ReadText, WriteText, EditText, ListFiles and Grep open exactly the file
// the policy judged. The path is resolved (symlinks
// followed) and judged; then the resolved path is opened without following
// any symbolic link in any component — openat2 with RESOLVE_NO_SYMLINKS on
// Linux, a component-by-component openat walk with O_NOFOLLOW where
// openat2 is missing and on macOS — and, where /proc is mounted, the
// descriptor's real path (/proc/self/fd/N) must equal the judged path. A
// link swapped in after the decision makes the operation fail with
// *PathChangedError (ErrPathChanged) instead of being followed. Directory
// walks (ListFiles, Grep) open every subdirectory relative to its verified
// parent descriptor with O_NOFOLLOW and never follow links; Grep opens
// each file relative to its directory's verified descriptor with
// O_NOFOLLOW ("open the parent, then the final component"),
// which saves a /proc lookup per file. Files are opened with O_NONBLOCK
// and their type checked on the descriptor, so a FIFO never blocks a tool.
//
// Writes are atomic: the content goes to a temporary file
// (".name.cordon-XXXX.tmp") created in the verified parent directory,
// which is fsynced and renamed over the target (renameat relative to the
// directory descriptor), then the directory is fsynced. Readers see the
// old or the new content, concurrent writers never interleave (the last
// rename wins), and a crash or failure mid-write leaves the original
// intact (a crash may leave the temporary file behind). The original's
// mode is kept, and its owner where permitted; a new file gets 0666 minus
// the umask; missing parent directories are created. Replacing a file by
// rename breaks hard links to it. Within one Workspace, writes and edits
// of the same path are serialised; EditText also refuses to write if the
// file was replaced by another process since it was read (*ConflictError).
//
// Hard links: the policy judges names, and a file with several links is
// one file under several names. ReadText, EditText and Grep check a file
// with more than one link: when another of its names in the root is not
// readable under the policy (`ln docs/notes.md docs/.env.production`,
// then a secret written into .env.production in place), ReadText and
// EditText fail with a *policy.DeniedError whose Reason names the denied
// name, and Grep drops the file's matches (counted in SkippedDenied). The
// other names are found by searching the root for the inode
// (policyderive.OtherNames, once per read, once per chunk of grepped files
// with matches); names outside the root are not searched. A file that is
// a private System file (a root-only key such as /etc/docker/key.json,
// linked into the root by its owner) is refused the same way, the Reason
// naming its System path: the System grant is what every user may read
// (policyderive.PrivateSystemLinks, the derivation's cached search).
// Writes replace files by rename, so they never write through a link.
//
// The text tools refuse binary files (a NUL byte) and invalid UTF-8
// (*NotTextError). Other platforms than Linux and macOS have no race-safe
// open; their file tools fail with errors.ErrUnsupported rather than fall
// back to an unsafe open.
//
// # Shell and background processes
//
// Run runs a command with /bin/sh -c through the executor, in the root or
// a judged cwd, with the workspace's shell timeout (WithShellTimeout,
// default 300 s; a per-call timeout is clamped to it). Spawn starts a
// background command through any executor implementing executor.Starter
// — inside the same sandbox as Run — and returns *BackgroundUnsupportedError
// otherwise. ReadProcessOutput returns the merged output produced since
// the last read, the status (running, exited with its code, killed) and
// whether older unread output was dropped; reading a process that has
// exited drains it and removes it from the table. KillProcess kills the
// whole group and returns the last output. BackgroundProcesses reports
// status without consuming output. An unknown id is an
// *UnknownProcessError listing the known ids.
//
// # Environment
//
// Commands never inherit the host environment implicitly. They get the
// allowlisted variables PATH, HOME, USER, LOGNAME, SHELL, LANG, TERM, TZ,
// TMPDIR and LC_* as they were when Local ran (everything with
// WithInheritEnv), HOME set to the workspace's home (removed when the home
// is unknown), then the WithEnv additions, which win. When the root holds
// a virtualenv — .venv, else venv, only if its bin holds a python — it is
// activated for every command (its bin prepended to PATH, VIRTUAL_ENV
// set, PYTHONHOME removed), looked up per command, unless WithEnv set
// PATH.
//
// Under a sandboxing executor commands also get GIT_CONFIG_GLOBAL=/dev/null
// when the policy hides the user's git configuration, and the variables
// of the toolchain caches (GOMODCACHE, GOCACHE, npm_config_cache,
// PIP_CACHE_DIR). Local detects those caches when the project uses a
// toolchain and the policy allows commands (package toolcache), and adds
// their path rules after the policy's own: module caches read-only, a
// per-workspace Go build cache read-write. WithToolchainCaches replaces
// the detection (with no caches, turns it off).
//
// # Limits
//
// Limits (DefaultLimits, WithLimits; zero fields keep their defaults):
// ReadText returns at most MaxFileReadChars (50,000) characters and reads
// files through a prefix of MaxFileReadBytes (10,000,000) bytes, which is
// also the largest file EditText edits; Run keeps MaxShellOutputChars
// (30,000) bytes per stream (head and tail, executor.Request.OutputLimit)
// and a background process's buffer keeps the newest that many; Grep
// skips files over MaxGrepFileBytes (5,000,000), clips lines to
// MaxGrepLineChars (400) characters and returns at most MaxGrepMatches
// (100) matches per file and in total; ListFiles returns at most
// MaxListResults (500) entries. Every cut is flagged in the result.
//
// # Instructions
//
// Workspace.Instructions and Session.Instructions render the
// "## Workspace" section of a system prompt from the policy and the
// executor's Describe: the root's absolute path and how absolute paths in
// command output map back to workspace paths, the mode in plain words,
// access outside the root, path rules, denied and protected patterns, the
// shell and its command rules, whether an OS sandbox enforces the policy
// and what it does not enforce on this host (an executor without Describe,
// like executor.Local, is described as enforcing nothing), the network,
// tmp/ for scratch files and the virtualenv rule.
//
// # Agent tools
//
// Tools returns tool specifications (name, description, JSON Schema of the
// arguments with unknown properties rejected, whether calls may run in
// parallel, and a NeedsApproval predicate that consults the policy) chosen
// by the policy: read_file, list_files and grep_files always; write_file
// and edit_file only when something is writable; shell only with a shell;
// spawn_process, read_process_output, kill_process and list_processes only
// with a shell and a Starter. Dispatch runs a tool from its JSON arguments
// and returns the result as JSON, for a Go agent loop or an MCP server.
// Errors are meant for the model: they say why (the rule and reason of a
// denial, the allowed range of an argument, the live process ids).
package workspace
