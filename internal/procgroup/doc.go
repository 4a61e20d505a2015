// Package procgroup runs one command the way every cordon executor must:
// isolated from the host program's session, terminal, environment and
// descriptors, bounded in memory, and killed as a whole tree.
//
// Backends build a Spec — Local and Landlock run /bin/sh -c CMD, bwrap runs
// bwrap ARGS -- /bin/sh -c CMD — and call Run (foreground, separate
// head+tail buffers per stream) or Start (background, merged output in a
// ring buffer).
//
// # Guarantees
//
//   - Every fork happens on a launcher thread (Spec.Launcher, default
//     launcher.Default, which sets PR_SET_NO_NEW_PRIVS), so the child
//     inherits no_new_privs — unless Spec.StartProcess starts the child
//     instead (the landlock executor's cordon_spawn, which restricts the
//     child itself and closes its other descriptors), in which case that
//     function owns the guarantees below about descriptors and the
//     session.
//   - The child starts a new session (setsid): it is a session and process
//     group leader without a controlling terminal, so /dev/tty cannot be
//     opened and TIOCSTI has no terminal to inject into.
//   - Stdin is /dev/null; stdout and stderr are pipes read by the parent.
//   - The environment is exactly Spec.Env. A nil Env is empty: os/exec and
//     os.StartProcess would substitute the parent's environment.
//   - Only descriptors 0, 1, 2 and Spec.ExtraFiles (as 3, 4, ...) reach the
//     child: the launcher marks every other descriptor of the host process
//     close-on-exec before each start (see package launcher for why that is
//     safe for the host); a Spec.StartProcess does the same in its child.
//   - Memory is bounded whatever the command prints: Run keeps the head and
//     tail of each stream (package outbuf), Start the newest bytes.
//   - On timeout, context cancellation or Kill the whole tree is frozen and
//     killed (below), TimedOut is reported, and the output produced so far
//     is kept.
//   - When the command's leader exits on its own, whatever is left of its
//     process group (`cmd &`, nohup) is killed before the leader is reaped:
//     Run leaves no process behind; background work belongs in Start.
//   - A descendant that keeps stdout or stderr open cannot hang Run: once
//     the leader has exited and the group is killed, the pipes are read for
//     at most Spec.WaitDelay more and then closed.
//
// # Killing the tree: freeze, then kill
//
// A process group is not a tree: `setsid cmd` leaves it. So on timeout the
// package walks /proc for the leader, every process of its session and
// group, and every descendant of those (by parent pid); it stops each with
// SIGSTOP so nothing can fork any more, and repeats the walk until a round
// finds nothing new; then it sends SIGKILL to the group and to every process
// found. Each process is opened as a pidfd and its start time re-checked
// before it is signalled, so a recycled pid is never hit; the leader is not
// reaped until the kill is done, so its pid and group id stay reserved. A
// round reads /proc/*/stat of every process on the host (about 10 µs per
// process, so a millisecond for a hundred), a kill takes two rounds or a few
// more, and it runs only when a command is killed.
//
// # Caveats
//
//   - A double-forked daemon whose parent has already exited (`(setsid cmd
//     &)`) is re-parented to init and is in another session and group: no
//     process-tree walk can attribute it to the command any more, and
//     nothing short of a PID namespace (bwrap, Docker) or a cgroup catches
//     it. If it keeps the output pipes open, Run returns after WaitDelay and
//     the daemon keeps running. (PR_SET_CHILD_SUBREAPER on the host would
//     catch it, but would make the host program reap every orphan of every
//     child it ever starts; procgroup does not change process-wide state
//     like that.)
//   - At a normal exit only the leader's process group is killed, not the
//     session: finding session members means a /proc walk, too slow for
//     every command. A descendant that moved to its own process group and
//     outlives the leader survives (it is caught on timeout while the
//     leader lives).
//   - Outside Linux the walk uses the BSD process table where available
//     (macOS: kern.proc.all, by process group and parent) and signals by
//     pid, without the pidfd identity check.
package procgroup
