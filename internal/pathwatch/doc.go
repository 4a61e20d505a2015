// Package pathwatch tells, in constant time, whether anything changed in
// a set of directories since a value was computed from them, so that
// per-command work that only depends on them (a Landlock ruleset's key,
// the protected-path guard's walk) is done again only after a change.
//
// A Watcher holds an inotify instance with one watch per directory
// added, and a generation that every event bumps. A caller reads Gen,
// adds the directories its value depends on, computes the value (after
// the watches exist, so nothing that happens after the read is missed),
// and keeps it with the generation read: the value is current while Gen
// returns that generation. Since returns the events after a generation
// (mount table changes among them, as Mount events naming the mount
// point), so a caller whose value depends on only some names can keep it
// across changes elsewhere; a directory reachable under several names (a
// bind mount) has one watch, and its events are reported under each name.
// A directory moved or deleted loses its watch and those below it: the
// watch would follow the directory, not the name.
//
// What bumps the generation: every event of a watched directory the
// Events select (entries created, deleted or renamed, a directory itself
// deleted or moved; with Content also a child's data or attributes
// changing), a lost event queue (IN_Q_OVERFLOW), and any change of the
// mount table (a mount sends no inotify event; /proc/self/mountinfo is
// polled). Add fails — and the caller must not keep its value — when a
// directory cannot be watched as a whole: no inotify, the watcher's
// share of fs.inotify.max_user_watches used up, a symbolic link, or a
// file system whose changes inotify does not see (NFS, FUSE, SMB, 9p:
// changes made by another machine or by the file server send no event),
// which FSKind tells. With Names, a directory of a pseudo file system
// (proc, sysfs, cgroup) is accepted without a watch: no process renames
// the kernel's names there, and a mount, the one way to change them, is
// seen.
//
// inotify does not report writes through a shared memory mapping; a
// value that depends on file content must also check the files' stat
// (size and times, which such writes update) before it is reused.
//
// Elsewhere than Linux, New returns ErrUnsupported and callers compute
// every time.
package pathwatch
