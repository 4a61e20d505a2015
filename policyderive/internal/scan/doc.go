// Package scan finds the existing paths that match deny and protect
// patterns in the trees an OS sandbox grants, so that policyderive can
// mask them: the mask search of the derivation (see policyderive and docs/architecture.md).
//
// A search takes the workspace root, further roots (the home directory,
// explicit grants) and a list of Patterns, and returns every existing path
// at or below the roots that matches one, with the directories it could not
// list. Search runs once; a Cache keeps what it read and answers the next
// search from it, re-reading only what changed.
//
//	c := scan.NewCache(scan.Options{})
//	defer c.Close()
//	res, err := c.Search(ctx, &scan.Request{
//		Root:     root,
//		Roots:    []string{home},
//		Patterns: []scan.Pattern{{Key: "name .env*", Match: p.Match, MayMatchBelow: p.MayMatchBelow, Name: p.MatchName}},
//	})
//
// # What is searched
//
// Symlinks are never followed: a link is an entry like a file, matched by
// its own path and reported as TypeSymlink, and never entered, so a link to
// $HOME inside the root does not turn the walk of the root into a walk of
// $HOME. On Linux every directory below a root is opened with
// openat2(RESOLVE_NO_SYMLINKS) relative to the root, so a directory swapped
// for a link during the search fails to open rather than leading out of the
// tree. Roots themselves are resolved (filepath.EvalSymlinks) first.
// Mount points inside a tree are crossed: what is mounted there is visible
// to the sandboxed command too.
//
// A root inside another root is searched once, as part of the outer one,
// except the workspace root, which is always searched as "inside" (its
// paths matched on their root-relative form) and skipped by an outer tree
// such as the home directory.
//
// Nothing that could match is skipped. A directory is not entered only when
// every remaining pattern either matched the directory itself (all cordon
// pattern forms match a path's subtree, so the directory's mask covers
// everything below) or answers false to MayMatchBelow.
//
// # Unreadable directories
//
// A directory that cannot be listed (permission denied, an I/O error) is
// matched like any entry and reported in Result.Unreadable; what is below
// it is unknown. The caller decides: a deny that may exist there is
// unverifiable, and whether that makes the profile stricter (mask the whole
// directory) or a declared gap is policyderive's choice.
//
// # Bounds
//
// Limits.MaxEntries and Limits.Timeout (and the context) bound a search. A
// search that exceeds one fails with a *LimitError wrapping ErrLimit: a
// partial result would be unsound, so there is none.
//
// # Parallelism
//
// Directories are read by a pool of Request.Workers goroutines
// (DefaultWorkers: twice GOMAXPROCS), each working depth-first from its own
// stack and handing half of it to an idle worker. Results are sorted, so
// they do not depend on scheduling.
//
// # Cache and invalidation
//
// A Cache keeps each tree's directory listings and, per directory, the
// matches among its entries for the request's pattern keys. On Linux each
// cached directory has an inotify watch (added before the directory is
// read, so no change between the two is lost) and a goroutine applies
// events as they arrive; every event that can change a listing (create,
// delete, rename in or out, a directory's own deletion, move or chmod)
// marks the directory for re-reading and bumps a generation counter. A
// search when the generation did not change and each root is the same
// directory (device and inode) returns the previous Result: a few system
// calls. A search after a change re-reads the marked directories only and
// reuses every other directory's matches.
//
// Fallbacks, all sound:
//   - IN_Q_OVERFLOW (events lost): every directory is re-read.
//   - Out of watches (Options.MaxWatches, by default half of
//     fs.inotify.max_user_watches, or ENOSPC), file systems inotify does not
//     fully see (NFS, FUSE, SMB, 9p), other operating systems, or
//     Options.MaxWatches < 0: the directory is validated by stat at every
//     search (device, inode, mtime, ctime); one modified within two seconds
//     of its listing is re-read anyway, since a change in the same clock
//     tick leaves its timestamps unchanged.
//   - Pseudo file systems (proc, sysfs, cgroup): re-read at every search.
//   - Mounts: inotify reports none, so /proc/self/mountinfo is polled at
//     every search and a tree in which a mount appeared or disappeared is
//     dropped. Without a readable mount table inotify is not used.
//   - A directory that vanished during a search makes that result
//     uncacheable.
//
// Changes made to a network file system by another machine are seen only
// through modification times, as the client reports them. On systems other
// than Linux every directory costs a stat per search, and a directory
// replaced by a symlink between Lstat and open is followed (no openat2).
package scan
