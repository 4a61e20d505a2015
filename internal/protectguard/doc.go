// Package protectguard keeps the host-run surface (policy.HostRunSurface:
// .git/hooks, .git/config, shell profiles, editor and agent settings, at
// any depth, and every git directory by structure)
// from surviving a sandboxed command that created or changed them. It is
// the after-the-fact half of protection that every mask-based backend
// (landlock, bwrap, docker) shares: masks stop writes to protected paths
// that exist when a command starts; the guard undoes what masks cannot
// see — protected paths created while the command runs (a repository
// cloned or initialised deeper inside the workspace), and, where a backend
// does not mask them at all, changes to existing ones.
//
// # How it works
//
// A Guard watches a set of trees (the command's writable grants) for the
// policy's protect rules. Begin, called before a command starts, walks the
// trees and records the state of every protected path: its type, mode,
// owner, link target, and for files a SHA-256 of the content plus a copy
// of it (up to Options.MaxFileSize per file and Options.MaxCopyBytes in
// all). End, called after the command has exited, walks again and
// repairs every difference:
//
//   - a protected path that is new (a hook file, a whole new hooks
//     directory, a new .git/config) is removed, subtree included;
//   - a protected file whose content, mode or owner changed is restored
//     from the copy (written to a temporary name and renamed over, so a
//     hard link the command made to it keeps the command's version, not
//     the restored one); a changed directory mode is restored;
//   - a protected path that was removed, renamed away or replaced (by a
//     symbolic link, a file or a directory) is recreated from the copy;
//     a directory in the way above it — say .git replaced by a symbolic
//     link — is removed and recreated as an empty directory.
//
// Git is protected by structure as well as by name (see package gitdir):
// every git directory in the trees, found by content whatever its name,
// has its control entries (config, hooks, commondir, config.worktree,
// info/, anything not on git's data allow-list) recorded and repaired
// like a protected path, while its data (objects, refs, logs, index) is
// not recorded, and not walked below a .git (where git refuses gitlinks).
// A git directory that did not exist in the baseline is a new repository:
// it keeps what git creates (commondir, info/, remotes/, branches/, data),
// everything else — hooks, config.worktree, a nested .git, an unknown
// name — is removed, and its config is rewritten reduced to inert keys,
// each removed key reported. A git directory anywhere in a recorded
// subtree is one of its own (new or not, by the baseline), so one hidden
// in a new repository's kept info/ is sanitized like any new repository.
// A directory that existed in the baseline (the baseline remembers every
// directory it listed, by device and inode) and became a git directory
// during the command is not judged as a new repository — its entries are
// the user's files — but defused: its HEAD is renamed aside, so git no
// longer takes it for one. .git files and commondir files are read as
// git reads them: a symbolic link named .git is followed (to a git
// directory or to a pointer file), and a relative pointer is resolved
// with its links first, not cleaned lexically.
//
// Each repair is reported as a Violation; executors put them in
// executor.Result.Violations. A removal that fails (a sweep, a sanitized
// config, a defused directory) makes End return ErrRepairFailed and
// keeps the baseline, as a failed walk does (see Cost). Removal goes on
// past an entry it cannot remove, and a chain of directories deeper than
// 64 levels is moved up and removed from there, so no depth exhausts the
// descriptors. A repair hashes only what it compares: a new file is not
// read, nor one whose size differs from the baseline's. A file for which no copy was kept (larger
// than the limits) cannot be restored: it is removed instead, and the
// violation says so.
//
// The guard runs in the host process, unsandboxed, on paths a sandboxed
// command controls, so it never follows a symbolic link: walks use lstat
// and directory entry types, and repairs walk from the tree's root one
// component at a time with openat(O_NOFOLLOW) and act with unlinkat,
// mkdirat, renameat and fchmodat relative to the opened parent. Every
// open by path — a listing, a file hashed and copied, a .git pointer read,
// a tree's root — refuses a symbolic link in any component (openat2 with
// RESOLVE_NO_SYMLINKS on Linux, O_NOFOLLOW_ANY on macOS, a walk one
// component at a time elsewhere): the trees are resolved paths, and a
// guard's tree may lie in another command's writable tree (a narrower
// grant's guard), whose command can swap a directory on the way for a
// link. A tree reachable only through a link is not recorded, and its
// baseline is restored through directories or not at all (each failure
// reported). A command cannot point a walk's copy or a repair at a file
// outside the tree.
//
// # Background processes and concurrent commands
//
// A Guard counts the commands it is guarding (Begin increments, End
// decrements). Begin takes a fresh baseline only when none is running,
// so changes the user makes between commands are accepted; while a
// command or a background process is still running, Begin instead
// compares with the existing baseline and repairs, so what a background
// process planted is undone before every later command, and End repairs
// again when each one exits. Changes the user makes to protected paths
// while a sandboxed command is running are therefore reverted too.
//
// A Cache holds one guard per set of writable trees, so a command with
// other trees (a grant for one command) gets another guard. A guard that
// takes a fresh baseline while another guard of the same rules, root and
// home is running takes the regions both guard from the running guard's
// baseline, not from disk: what the running command planted there is
// not taken for the user's, and the second guard's end does not restore
// what the first one's end removed.
//
// # What remains
//
// The repair runs when a command (or a background process) ends and
// before the next one starts; in between, a planted hook or config exists
// on disk. A host program that runs git in the workspace during that
// window (an editor's background git status) can execute it. Backends
// declare this window as a gap. A process that escaped the command's
// process tree (a double fork) is no longer counted, so its later changes
// are accepted into the next baseline; backends declare that gap too.
//
// # Cost
//
// Walks visit only directories where a protect rule may match below
// (bare-name rules such as .bashrc may match anywhere, so in practice the
// whole writable tree). Directory listings are cached by inode and
// change time, and hashes by inode, size, modification and change time;
// an entry changed in the last second is always read again, so a change
// within one tick of the file system's coarse clock is never missed. A
// walk with caches is bounded by Options.MaxEntries. A tree beyond it
// is walked again streaming: no listing is cached or kept, a directory is
// read in chunks and only its subdirectories, protected names and .git
// entries are held, so millions of plain files cost time, not memory;
// only the entries recorded count towards the bound then. A repair's walk
// records less still: a new directory it will remove is not walked below
// its top, what a new repository keeps (data, info/) is searched for git
// directories but not recorded, and a directory that gained more than
// 4096 entries the repair would remove one by one (a baseline's protected
// directory; a git directory's new control entries) is swept — listed
// again in chunks and every such entry removed — and reported as one
// violation. A baseline's protected directory is read in chunks and its
// new entries past the 4096th are counted, not held, so a flood of a
// million hooks costs the repair no memory per entry. Only a command that creates more protected entries than the
// bound (say a million .envrc files) exceeds it: Begin then fails with
// *LimitError, since a partial baseline would be unsound, and a repair
// falls back to what the baseline knows — each of its git directories and
// protected paths is checked and repaired without a whole walk — returns
// the error and keeps its baseline: every later Begin repairs against it
// first and fails while a whole walk still cannot be done, so no later
// baseline takes in what the failed repair could not see.
//
// With a change watcher (Options.Watcher; Cache gives its guards one),
// every directory a walk lists is watched by inotify before it is read,
// and a scan when no watched directory saw an event since the last walk —
// and every recorded protected entry still has its type, mode, owner,
// inode, size and times — returns the last walk's state without walking:
// the cost of a command that changed nothing is flat in the size of the
// trees. The stat of the recorded entries, and of the .git and commondir
// pointer files read, catches writes through shared memory mappings and
// through hard links in directories no walk lists, which send the
// watched directories no event. Events that leave the last walk's state
// as it was cost no walk either: a name absent then and now (a temporary
// file, a mount backend's placeholder made and removed around each
// command), an ordinary unprotected file's content, a mount outside the
// trees. Any other change makes the next scan a whole walk (with the
// listing and hash caches above); a directory that cannot be watched (the
// watch limit, a network file system) makes every scan walk, as without a
// watcher.
package protectguard
