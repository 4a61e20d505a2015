// Package policyderive turns a cordon policy into OS sandbox profiles:
// Derive makes a backend-neutral Profile for one command, and renderers
// turn it into a Landlock ruleset, bubblewrap arguments, a Seatbelt (SBPL)
// profile or OCI / Docker mounts, each with a Fidelity report.
//
//	pr, err := policyderive.Derive(p, root, home, cwd, grants)
//	rs := policyderive.Landlock(pr, abi)           // rs.Config(), rs.Rules(), rs.Fidelity
//	args, fid := policyderive.Bwrap(pr)            // + env and "--", "/bin/sh", "-c", cmd
//	text, params, fid := policyderive.SBPL(pr)     // sandbox-exec -p text -D params[i] ...
//	ms, fid := policyderive.OCIMounts(pr, policyderive.OCIOptions{HostSystem: true})
//	dms, err := policyderive.DockerMounts(ms)
//	if err := fid.Err(); err != nil && !bestEffort { ... } // *LooserError
//
// A workspace derives before every command from its compiled policy
// (Deriver.DeriveCompiled: nothing is compiled per command). A Deriver
// (NewDeriver) given a ScanCache (Options.Scans, owned and closed by the
// caller, an executor) keeps the mask search and the directory listings
// cached, so deriving again when nothing changed costs a few milliseconds
// (3 ms on a settled 100,000-file tree here; more while recently changed
// directories are within the cache's racy window and are read again).
// Derivation is a function of the compiled policy, the grants and the
// host's tree: it only reads the file system (lstat, readlink, directory
// reads, O_PATH opens and openat2 to resolve without following links,
// /proc/self/mountinfo); the ScanCache watches it with inotify; renderers
// are pure functions of the Profile. Two caches are process-wide by
// design: the search of the System trees for private files, which are the
// host's and the same for every caller (a walk of /usr costs ~0.5 s
// once), and the rules found to match under /proc (procNotes), kept by
// the rules they depend on.
//
// The code is split by concern: derive.go (the inputs, the run and the
// path decisions), search.go (the search scope and the mask search),
// masks.go (masks, placeholders, pins and pruning), sockets.go (Unix
// sockets in the grants), private.go and hardlink.go (private System
// files and other names of masked files), then one file per renderer.
//
// # The soundness invariant
//
// For every path and operation: if a rendering permits it, the policy
// permits it — the policy allows it, or asks and an approved Grant of
// this command covers it. Reads in System trees (policy.SystemPaths) that
// no rule decides are permitted too: System paths are OS-level grants
// that let a shell run; the ACL still judges file tools and path claims.
// Pseudo-devices (/dev/null, /dev/zero, /dev/full) are always usable.
// Where a backend cannot hold the invariant, the Fidelity report says so
// with a looser element; everything else is exact or stricter. The tests
// check it as data: generated policies, trees (symbolic links, nested
// repositories, denied and protected files, names with quotes,
// metacharacters, newlines and non-UTF-8 bytes), grants and probe paths,
// each rendering evaluated with a model of its backend (a mount table
// for bwrap and OCI, rule union beneath the path for Landlock, a
// last-match SBPL evaluator) against policy.Checker.DecideResolved, more
// than 10,000 cases per renderer per run, plus the converse (permitted
// files in the root and System trees stay usable) so that a rendering
// denying everything cannot pass.
//
// # Fidelity classes
//
// Every element of a rendering is reported as:
//   - exact: the backend permits exactly what the policy permits there;
//   - stricter: it forbids more (a split Landlock directory takes no new
//     entries, a pinned directory cannot be renamed, a placeholder keeps
//     a denied path's missing parent from being created, a widened
//     Seatbelt regex denies more);
//   - looser: it permits something the policy forbids.
//
// Looser elements come in two kinds. Inherent ones are part of the
// backend's mechanism in every configuration and are narrowed by the
// workspace: paths created while a command runs are masked for the next
// command (the workspace derives again) and protected paths are
// re-scanned by the executor after it; Landlock does not restrict stat
// or chmod; sockets in read-only mounts can be connected to. Backends
// declare them in Describe. The others (a bare-name deny outside the
// search scope, Landlock without truncate, TCP or scopes at the running
// ABI) make Fidelity.Err return a *LooserError wrapping ErrLooser: strict
// callers refuse to run, best-effort callers run and show Looser. A
// backend that closes a looser element by other means (the landlock
// backend's seccomp filter for UDP and other socket families) calls
// Fidelity.Mitigate with the element's Feature, a typed key (never its
// subject, which is prose); Fidelity.Keyed finds keyed elements to adjust.
// Element.Control names the policy.Control concerned (the one vocabulary
// of controls, which package executor re-exports).
//
// # Mapping rules
//
// Ask is deny at the OS level: only the command's approved Grants (a path
// and its subtree, for read, or for write which implies read) open
// more, and only where the policy asks (never where it denies).
//
// Read grants: the root, the System paths, "/" when reads outside the
// root are allowed (trusted), literal allow rules (readable: in policy
// files), approved grants. Write grants: the root when writes inside are
// allowed, "/" when writes outside are allowed, literal allow rules
// covering write (writable:), approved write grants, and the
// pseudo-devices. A grant is kept only if the policy permits its op at
// the grant's top — and, for a write grant, reading too, since a writable
// tree is readable at the OS level (write-only trees are not granted:
// stricter). Execute grants are the read grants (read covers execute).
// Allow rules with globs or bare names are not rendered by the mask
// backends (stricter); Seatbelt renders them when it can write an exact
// regex.
//
// Masks: inside every grant, each path the policy does not permit for the
// grant's op is masked — hidden (read and write denied: an empty
// read-only tmpfs for a directory, /dev/null bound read-only over a
// file) or read-only (bound read-only). Literal rules are located
// directly; bare-name and glob rules are searched for (package
// internal/scan) in the scope: the root, the home directory when a grant
// contains it, every explicit grant, and the literal base of absolute
// globs. System trees are trusted and not searched for bare names
// (reported as an inherent looser element per rule). A grant that
// extends beyond the scope (trusted reading "/") cannot have bare-name or
// glob denies masked there: looser, with the scope, so strict mode
// refuses and says how to proceed. A match that is a symbolic link is not
// masked: its target is judged (and masked) at its own path, as the
// kernel follows the link. A directory the search cannot read is masked
// whole when a pattern could match below it (stricter). Masks cover
// their subtree, so protected directories are masked as directories
// (.git/hooks, not its files). A mask inside another is dropped unless a
// grant between them opens the tree again.
//
// Pinned ancestors: the directories between a writable grant and a mask
// must not be renamed or removed (that would move the mask away from the
// path it guards): mount backends bind each onto itself, making it a
// mount point (stricter: it cannot be renamed); Landlock withholds
// remove and refer rights from every split directory.
//
// Placeholders: a path a write-denying literal rule names, or the
// root-level instance of a protected "**/x/y" pattern (.git/hooks,
// .git/config), that does not exist yet gets a read-only placeholder at
// its first missing component when that could be created in a write
// grant (stricter) — except a missing .git itself: a new repository
// (git init, git clone into the root) is created like one in any other
// directory, and the executor's guard sanitizes the new git directory
// after the command (hooks removed, config kept to safe keys), so git
// init works in a fresh workspace; with .git there, a missing hooks
// directory or config still gets its placeholder. Bare names are not
// given placeholders at the root (the executor's post-command scan
// covers them). Placeholders are empty
// directories; mount runtimes create their mount points on the host
// (Profile.MountPoints): the backend removes them after the command, and
// never while another sandbox still uses them. Those live in the
// deriving process are an input (Deriver.DeriveWith): each is derived as
// the placeholder it stands for, not as the empty directory it is.
//
// The root is masked when a grant containing it (write outside allowed,
// writes inside denied) gives an op the root's own default does not.
// Unix sockets under /run are hidden when a read grant exposes /run and
// the policy does not permit writing them (a read-only mount does not
// stop connect(2); the Docker socket lives there). Unix sockets found by
// the mask search in the searched trees (the root, the granted home,
// explicit grants) are hidden whatever the grant, unless a path rule
// allowing writes or an approved write grant names the socket by its own
// path (Profile.Sockets): a read-write grant of the root grants its files,
// not a daemon listening there (a private dockerd under build/, say). A
// socket created while the command runs is not hidden until the next
// command. A directory in those trees that the deriving user cannot list
// is hidden as a whole when it lies in a grant: a socket may lie below it,
// and a command of the same user that knows its name could connect
// (Stricter note).
//
// Private System files: every System tree is searched for entries whose
// mode keeps them from other users, except the Nix store and macOS's
// /System, whose content is public by construction (publicTrees); /usr
// is searched like /etc.
//
// Hard links: a masked file with more than one link (lstat) is the same
// inode under other names, and a grant of another name grants it (Landlock
// rules attach to inodes; mounts and seatbelt rules to names). The
// derivation looks for the masked files with several links — the masked
// files themselves and the files below masked directories (at most
// 20,000 entries, else a looser note) — and then searches the same trees
// as the mask search for the other names of those inodes, by the inode
// numbers of the directory listings (Linux only; scan.Pattern.Inode),
// confirmed with lstat. Each other name gets the mask of the file it is a
// name of (Reason "hard link", For the masked name). A link made while a
// command runs is found by the next derivation. Names outside the searched
// trees (a System tree, an ungranted directory) are not searched; a
// command cannot reach those through a grant anyway, except the System
// trees, which hold no denied files of the root. OtherNames exposes the
// search for the workspace's file tools.
//
// # Renderers
//
// Landlock(pr, abi): one layer handling every file system right of the
// ABI, TCP bind and connect under network none (ABI ≥ 4; UDP from 10),
// and the abstract-socket and signal scopes (ABI ≥ 6). Read grants get
// execute, read_file, read_dir; write grants add write_file, truncate,
// make_{reg,dir,sym,sock,fifo}, remove_{file,dir}, refer and resolve_unix
// (never device creation); pseudo-devices get ioctl_dev. A grant with
// masks below it is never granted whole: it is split, recursively, down
// to the masks — each split directory keeps only the rights that cannot
// reach a mask (none above a hidden directory, read_dir above a hidden
// file, read rights above read-only masks and placeholders) and each of
// its entries is granted on its own (symbolic links never: they would
// grant their target). So, directly in a split directory, nothing can be
// created, removed or renamed, and with a hidden directory below it
// cannot be listed: reported as stricter per directory. Git cannot
// update .git/index while .git/hooks is masked this way. The listings
// come from the Profile (Dirs), so the rendering is pure. /proc/self
// names the process that opens it: PerProcessRules must be added by the
// sandboxed process itself. Rights an ABI lacks are reported: refer
// below 2 (stricter: renames across directories always fail), truncate
// below 3, TCP below 4, scopes below 6 (looser); pathname Unix sockets
// below 9 (looser, inherent); UDP below 10 and other socket families
// (looser, to be mitigated by seccomp). Landlock has no private /tmp:
// the backend passes one with Profile.WithTmpDir, else /tmp is not
// writable (stricter).
//
// Bwrap(pr): see its documentation for the argument order. The backend
// appends the environment and the command. Mounts are ordered by depth
// (deeper ones shadow shallower), which realises the order
// (base, /dev, writable binds shallowest first, protected paths, masks)
// while letting a grant inside a mask re-open it; hidden directories are
// remounted read-only only after everything is mounted. Nonexistent
// grants are skipped, never created. A grant of "/" is bound first; /tmp
// is always a private tmpfs.
//
// SBPL(pr): (deny default), a base that lets /bin/sh run (process fork,
// signals and process info within the sandbox, sysctl reads, file
// metadata reads, the /bin/sh selector), then per operation the policy's
// decision procedure itself: defaults (outside the root, System paths,
// the root), the rules from last to first so that last-match-wins
// evaluates as the policy's first-match-wins, approved grants re-allowed
// inside ask rules, pseudo-devices last, network* denied unless full
// (then Unix sockets except the DNS resolver's stay denied). Paths are
// parameters (-D KEY=VALUE: ROOT, TMP, SYSTEM_n, GRANT_n, RULE_n) or
// escaped regex literals; the text never holds a path verbatim, a double
// quote or a backslash. Deny regexes may match more than the pattern:
// letters in either case (macOS file systems are case-insensitive),
// bytes outside printable ASCII and ^ " \ widened, single-character
// globs widened to [^/]+ so a bytewise matcher cannot cut a multi-byte
// character short (stricter). Allow regexes are exact or not rendered.
// Metadata stays readable outside deny rules (looser, inherent). The base
// is not tested on macOS here: the seatbelt backend's tests run it there.
//
// OCIMounts(pr, opts) and DockerMounts: the same mount plan as bwrap as
// runtime-spec mounts (binds rbind, ro or rw, rprivate, nosuid, nodev;
// hidden directories and placeholders as tmpfs with mode 0555; /tmp a
// tmpfs), one per destination, ordered by depth (as Docker sorts them).
// The runtime adds /proc, /dev and /sys. With HostSystem the System paths
// are bound read-only (an empty image needs no registry). A container
// cannot bind the host's "/" over its root: a read grant of "/" is
// rendered as the root, System paths and explicit grants (stricter).
//
// # Choices made here
//
//   - First-match semantics inside grants: a path is masked when the
//     policy does not permit it, judged by DecideResolved on the topmost
//     match of each deny or ask pattern; an allow rule earlier in the list
//     keeps its subtree open, since every pattern form matches subtrees.
//   - Grants are subtrees: approving a directory approves what is below
//     it, but never overrides a deny.
//   - A deny of reads only is rendered as hidden (stricter for writes);
//     write-only grants are not rendered.
//   - Paths are resolved (symlinks followed) once at derivation; paths
//     under /dev and /proc are kept as written.
//   - A mask search that exceeds its bounds (Options.MaxEntries,
//     Timeout) masks nothing from patterns and is reported looser rather
//     than failing Derive, so best effort can still run.
//   - Key is a SHA-256 of a canonical encoding of every field: equal keys
//     mean equal profiles, so backends may cache rulesets and containers
//     by it. A new entry in a split directory changes the key (Landlock
//     must grant it).
//   - Profiles serialise to JSON for sandbox-probe derive --json; non-UTF-8
//     paths are replaced in JSON (Key is exact).
package policyderive
