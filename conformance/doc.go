// Package conformance is the suite every cordon executor must pass: it makes
// "sandboxed" a checked claim. Like testing/slogtest and nettest.TestConn it
// is a function that takes a constructor: Run for go test, Check for
// sandbox-probe. Both run the same cases, each on a fresh executor, a fresh
// fixture and a fresh policy, under a watchdog.
//
// # Running it from a backend's tests
//
// A backend's test calls Run from executor/<backend>/<backend>_test.go:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, func(t *testing.T) executor.Executor {
//			x, err := bwrap.New(bwrap.Config{})
//			if err != nil {
//				t.Skipf("bwrap unavailable: %v", err) // or fail under CORDON_REQUIRE
//			}
//			return x
//		})
//	}
//
// Subtests are named layer/case ("network/net-udp"), so go test -run
// 'Conformance/network' selects a layer. go test -v shows every case's
// evidence: what ran, the probe's records, what the host observed, and the
// control twin. A case that misses its expected outcome fails with t.Errorf
// and the run goes on; a declared gap and an unsupported case are skipped
// with the reason. executor.Local passes FunctionalOnly: its isolation cases
// still run and report, but decide nothing.
//
// # Running it outside go test
//
// Check runs the same cases and returns a Report (JSON: per case id, title,
// layer, control, expected, outcome, passed, failed, evidence, twin, gap,
// reason, duration) that sandbox-probe prints as a table and as --json.
// Report.OK is false when any case failed. WithProgress reports each case as
// it starts and ends. Check closes executors that implement io.Closer.
//
// # How a case decides
//
// Each case gets a fixture: a temporary workspace root (a resolved path); a
// fake HOME holding canary secrets (.ssh/id_rsa, .aws/credentials,
// .gitconfig) with unique random tokens; an outside directory with a canary
// file; a loopback TCP canary and a UDP canary; pathname Unix stream and
// datagram sockets outside the workspace and an abstract Unix socket, each
// counting what reaches it; a canary variable in the parent's environment
// (ParentCanaryEnv) and a parent descriptor without FD_CLOEXEC. Root, home,
// outside and the sockets are siblings in TEMP/cordon-conformance-*, where
// TEMP is WithTempDir, else $TMPDIR, else /var/tmp on Linux, else
// os.TempDir(): not /tmp by default, because sandboxes make /tmp private,
// which would hide the outside directory even where the policy lets
// commands read it, and workspaces rarely live there. Everything is removed at the end of the case,
// and the case fails if any process carrying its tag (CaseTagEnv, and
// --tag= on the probe's command line) is still alive then: the host's /proc
// sees processes in PID namespaces too. Such processes are killed.
//
// Commands get a realistic Request: Command, Dir (the root unless the case
// says otherwise), Env (PATH, HOME=the fake home, LANG=C, CaseTagEnv, plus
// WithEnv), a 30 s safety Timeout, Policy (a preset with the probe's
// directory added to System), Root, Home.
//
// Outcomes are verified from outside, never by an exit code alone: host-side
// listings and hashes (and modes and link counts) before and after, the
// canaries' counters, tokens in the output, heartbeat files that show
// whether a process still runs, the host's /proc. Every isolation case has
// a control twin that must take effect — the same action under a policy
// that allows it on the same executor, through executor.Local, or as a
// plain child of the host — so a broken fixture, a probe that cannot run,
// or a write that "succeeds" on a private copy can never pass as a denial.
// A denial also requires the probe's own record in the output, showing it
// ran and tried. Cases that expect the action to be allowed (writes inside
// the root, system paths, trusted reads, git) need no twin: the effect seen
// on the host is the evidence.
//
// # Outcomes
//
//   - denied: the action had no effect, the probe ran, and the twin took effect.
//   - allowed: the action took effect. For a case that expects a denial this
//     is a leak, and it fails unless a gap is declared.
//   - ok / broken: a functional property held or did not.
//   - gap: the action took effect and the executor's Describe declared a Gap
//     on the case's Control (or Run refused the policy with
//     *executor.UnenforceableError). Neither passes nor fails.
//   - setup-error: the twin failed, the fixture or the probe was missing,
//     the executor returned an error, or the case hung. Fails.
//   - unsupported: the case does not apply (no git, no executor.Starter, a
//     Linux-only facility, *executor.UnavailableError). Neither passes nor fails.
//
// Only denied, allowed and ok as expected pass.
//
// # The probe
//
// Actions a shell cannot do portably run the static probe program of
// package probe (connects, bind, TIOCSTI, kill, /proc/self/status,
// descriptor listing, hard links, truncate, chmod, reads, writes, renames,
// heartbeats), so no python, nc or curl is needed inside the sandbox and a
// busybox image works. The suite copies or builds it into a directory of its
// own, TEMP/cordon-probe-*, which every case adds to Policy.System (read
// and execute). It is obtained from WithProbe, then $CORDON_PROBE (ProbeEnv),
// then `CGO_ENABLED=0 go build`, then a copy of the running program if that
// program called probe.MaybeRun first thing in main (sandbox-probe does; the
// copy is named cordon-probe, which MaybeRun recognises in argv[0]).
//
// # Notes for backends
//
//   - Everything lives under TEMP (above). When that is under /tmp (TMPDIR
//     or WithTempDir says so), where a sandbox has a private /tmp, the root
//     and the probe directory must still be mounted or granted at their
//     real paths.
//   - The probe directory arrives in Policy.System, not as a Grant; a
//     container backend in image mode must bind System paths that the image
//     lacks.
//   - Cases run one after another; "concurrent" calls Run 20 times at once
//     on one executor. Do not run two suites at once in one process: each
//     case sets ParentCanaryEnv in the process environment.
//   - signal-parent makes the process catch SIGWINCH for the duration of
//     the case.
//   - Gaps are matched by executor.Control: declare in Describe what the
//     backend cannot enforce on this host, and the cases on that control
//     report gap instead of failing.
//
// # Choices
//
// "The environment exactly as requested" tolerates the variables a POSIX
// shell exports by itself (PWD, OLDPWD, SHLVL, _). Output-limit allows 1 KiB
// beyond OutputLimit for an omission marker and requires each stream to
// start with its head and end with its tail. Timeout cases use a 4 s
// timeout and conclude from heartbeats that stop (20 ms beats, watched for
// 500 ms) and from the host's /proc rather than from timing. The protect
// cases work without git (the fixture builds .git by hand); git-works is
// unsupported where git is missing on the host or inside the sandbox.
// Canary tokens are 96-bit random hex strings, unique per case. A
// descriptor counts as inherited when it is open in the probe without
// FD_CLOEXEC (the Go runtime's own descriptors all carry the flag).
//
// # Cases
//
// The same table is in CASES.md (TestCasesDoc keeps both in step with
// Cases):
//
//	| id | layer | control | expected | what | how verified |
//	|---|---|---|---|---|---|
//	| `exit-0` | functional | — | ok | exit 0 is reported as exit code 0, not as an error | Result.ExitCode; Run returns no error |
//	| `exit-1` | functional | — | ok | exit 1 is reported as exit code 1, not as an error | Result.ExitCode; Run returns no error |
//	| `exit-7` | functional | — | ok | exit 7 is reported as exit code 7, not as an error | Result.ExitCode; Run returns no error |
//	| `exit-signal` | functional | — | ok | death by a signal is exit code -1 with the signal named | the shell kills itself with SIGKILL; Result.ExitCode -1 and Result.Signal set |
//	| `stdout-stderr` | functional | — | ok | stdout and stderr are captured apart | distinct tokens printed to each stream come back exactly, each in its own field |
//	| `cwd` | functional | — | ok | the command runs in Request.Dir | pwd -P prints Dir (a path with a space); a relative write lands in Dir on the host |
//	| `env` | functional | — | ok | the environment is exactly Request.Env; the parent's canary variable is absent | the probe prints its environment: every requested variable, nothing else but what sh adds (PWD, OLDPWD, SHLVL, _); an empty Env stays empty. Twin: a plain child of the host sees the canary |
//	| `loopback-server` | functional | — | ok | network none: a server on 127.0.0.1 inside the command works (a private loopback) | under the coding preset (network none) the probe listens on 127.0.0.1:0, connects to itself and its server reads the token; net-tcp-connect and net-tcp-bind show that the host's loopback stays out of reach. Unsupported where the executor's Describe says it has no private loopback (Info["loopback"] or, for kubernetes, Info["sandbox_loopback"] "none: …") |
//	| `stdin` | functional | — | ok | stdin is closed (/dev/null) | the probe reads stdin and gets EOF at once with no bytes. Twin: a plain child fed a token reads it |
//	| `output-limit` | functional | — | ok | output over the limit keeps head and tail and reports Truncated | 1 MiB per stream with OutputLimit 4096: each stream starts with its head token, ends with its tail token, is bounded, and Truncated is set |
//	| `binary-output` | functional | — | ok | binary output is byte-exact | 100000 bytes (all 256 values, then a SHA-256 chain) compared byte for byte with the host's copy |
//	| `concurrent` | functional | — | ok | 20 concurrent runs on one executor do not mix output | each run prints 300 numbered lines of its own token to each stream; every result equals its expected output exactly |
//	| `background` | functional | process-tree | ok | a background process (Starter) streams merged output and can be killed | ReadOutput shows stdout and stderr ticks while it runs; after Kill, Done is closed, the host-side heartbeat file stops and no tagged process remains |
//	| `no-inherited-fds` | process | — | ok | no descriptors beyond 0-2 are inherited | the probe lists /proc/self/fd: only 0, 1, 2, and not the parent's non-CLOEXEC canary descriptor. Twin: a plain child of the host lists the canary |
//	| `no-tty` | process | — | ok | no controlling terminal: TIOCSTI is impossible | the probe finds tty_nr 0, /dev/tty unopenable, no terminal on 0-2, and TIOCSTI fails everywhere. Twin: the probe on a pty as its controlling terminal finds it |
//	| `no-new-privs` | process | — | ok | PR_SET_NO_NEW_PRIVS is set | the probe reads NoNewPrivs: 1 in /proc/self/status. Twin: a plain child of the host reads the host's value |
//	| `timeout-tree` | process | process-tree | ok | a timeout kills the whole tree, setsid and nohup children included, and reports TimedOut | three probes (setsid, nohup, foreground) beat host-side heartbeat files; they are seen beating, then after the timeout every heartbeat stops and no tagged process remains in the host's /proc; TimedOut, exit -1 and the output before the kill are reported |
//	| `cancel-tree` | process | process-tree | ok | cancelling the context kills the whole tree and reports TimedOut | as timeout-tree, ended by cancelling the context once every heartbeat beats |
//	| `signal-parent` | process | signal | denied | the command cannot signal the process that runs it | the probe sends SIGWINCH to the host pid; the host counts the SIGWINCHs it receives. Twin: executor.Local |
//	| `host-process` | process | host-process | denied | the command cannot read the memory or the environment of the process that runs it | the probe reads /proc/HOST/environ and /proc/HOST/task/*/environ, and a token the host holds in its heap through /proc/HOST/mem and /proc/HOST/task/*/mem, for every thread of the host; the host compares the SHA-256 of what was read with its own /proc/self/environ and looks for the token. Twin: executor.Local |
//	| `kernel-keyring` | process | kernel-objects | denied | the command cannot read or add keys in the host's kernel keyring | the host puts a user key holding a token into its user keyring; the probe reads it (keyctl search + read) and adds a key of its own; the token must not appear and the host's keyring must not hold the probe's key. Twin: executor.Local. Linux only |
//	| `sysv-ipc` | process | kernel-objects | denied | the command cannot attach the host's System V shared memory | the host creates a System V shared memory segment holding a token; the probe attaches it by key and reads it; the token must not appear. Twin: executor.Local. Linux only |
//	| `survivor` | process | process-tree | denied | no process of a command is left running when Run returns | the probe starts a heartbeat in a new session, in the background, waits until it beats, and exits (exit 0: no timeout, no cancel); once Run returned the heartbeat file must not advance and no process carrying the case tag may be left in the host's /proc. Twin: executor.Local, whose heartbeat keeps beating |
//	| `session-memory` | process | process-tree | denied | a command cannot write the memory of a process that outlives it | a background process of the session (Starter) writes its pid, the address of a word of its memory and the word's value to a file; the probe, in a later command, writes a new value into that word through /proc/PID/mem, process_vm_writev and ptrace; the file must keep the old value. Twin: executor.Local, where the probe is the target's parent (so Yama's ptrace scope allows it). Linux only |
//	| `write-inside-root` | filesystem | fs-write | allowed | writes inside the root succeed | the probe writes a token to a new file and to a new nested directory; the host reads both tokens back |
//	| `write-outside` | filesystem | fs-write | denied | writes outside the root are denied | the probe overwrites outside/canary.txt and creates outside/new.txt; host-side listing and hashes of outside/ unchanged. Twin: the same under a writable grant for outside/ |
//	| `read-home-secrets` | filesystem | fs-read | denied | the home directory's secrets are unreadable | the probe reads ~/.ssh/id_rsa, ~/.aws/credentials and ~/.gitconfig; none of their random tokens appears in the output. Twin: the same under a readable grant for the home |
//	| `system-paths` | filesystem | fs-read | allowed | system paths are readable and executable | the probe reads /bin/sh and /etc/passwd (non-empty) and lists /usr/bin; a nested /bin/sh runs and returns its exit status |
//	| `denied-paths` | filesystem | fs-read | denied | a denied_paths match (.env*) is unreadable and unwritable at depth 0 and depth 5 | the probe reads root/.env and root/a/b/c/d/e/.env.local and overwrites root/.env; no token in the output, both files unchanged on the host, while root/a/b/c/d/e/env.txt, which no rule denies, is read (else a setup error). Twin: the same policy without denied_paths |
//	| `denied-new-file` | filesystem | fs-new-files | denied | a denied_paths match created while the command runs is unreadable | the host creates root/late/.env.late after the command started; the probe then reads it; its token must not appear (a command whose start never reaches the host is a setup error). Twin: without denied_paths |
//	| `symlink-escape` | filesystem | fs-read | denied | a symlink inside the root to an outside file or directory gives no access | the probe reads and writes through root/link-file → outside/canary.txt and root/link-dir → outside/; no token in the output, outside/ unchanged. Twin: a writable grant for outside/ |
//	| `dotdot-escape` | filesystem | fs-read | denied | `..` routes out of the root give no access | the probe reads and writes root/../outside/… and, from root/sub, ../../outside/…; no token, outside/ unchanged. Twin: a writable grant for outside/ |
//	| `proc-root-escape` | filesystem | fs-read | denied | /proc/self/root, /proc/self/cwd and /proc/1/root routes give no access | the probe reads and writes the outside canary through /proc magic links; no token, outside/ unchanged. Twin: a writable grant for outside/ |
//	| `hardlink-outside` | filesystem | fs-write | denied | a hard link to an outside file cannot be made | the probe links outside/canary.txt into the root and a root file into outside/; no new link on the host (listing, link counts). Twin: executor.Local |
//	| `hardlink-denied` | filesystem | fs-read | denied | another name of a denied file is denied too | root/docs/.env.production is a hard link of root/docs/notes.md (as an earlier command could make it), and the host then writes a secret into it in place; the probe reads both names and overwrites notes.md: no token in the output, the file unchanged, while root/docs/readme.md is read (else a setup error). Twin: the same policy without denied_paths |
//	| `system-private` | filesystem | fs-read | denied | a file in a System tree that other users may not read is not granted | outside/sys, added to Policy.System, holds key.json (0600, a token: a root-only key such as /etc/docker/key.json) and pub.conf (0644); the probe reads both: the key's token must not appear, while pub.conf's does (else a setup error). Twin: the same policy with key.json named in System by its own path |
//	| `truncate-outside` | filesystem | fs-write | denied | truncating an outside file fails | the probe truncates outside/canary.txt; host-side size and hash unchanged. Twin: a writable grant for outside/ |
//	| `chmod-outside` | filesystem | fs-metadata | denied | chmod of an outside file or directory fails | the probe chmods outside/canary.txt and outside/ to 0777; host-side modes unchanged. Twin: a writable grant for outside/ |
//	| `metadata-outside` | filesystem | fs-metadata | denied | times, owner and extended attributes of an outside file cannot be changed | the probe sets the times of outside/meta.txt and outside/ to 2001, chowns the file to 65534, sets its user.cordon attribute and chmods it 4777; host-side mode, owner, modification time and user.cordon of both unchanged. Twin: a writable grant for outside/ |
//	| `metadata-inside` | filesystem | fs-metadata | allowed | chmod +x and times of files inside the root can be changed | the probe chmods root/tool.sh 755 and sets its times to 2001; the host sees the mode and the modification time |
//	| `readonly-mode` | filesystem | fs-write | denied | readonly mode writes nothing anywhere | under mode readonly the probe creates, overwrites, appends, truncates, renames, links, removes and mkdirs in the root and writes outside and in the home; host-side listings and hashes of root, outside and home unchanged. Twin: the same in coding mode |
//	| `trusted-read-outside` | filesystem | fs-read | allowed | trusted mode reads outside the root | under mode trusted the probe reads outside/canary.txt and ~/.ssh/id_rsa; both tokens appear |
//	| `trusted-denied-paths` | filesystem | fs-read | denied | trusted mode still hides denied paths | under mode trusted with denied_paths [.env*, <outside>/private] the probe reads ~/.env, outside/private/key.txt and root/sub/.env.production; no token appears, while outside/public/key.txt, which no rule denies, is read (else a setup error). Twin: trusted without denied_paths |
//	| `protect-git` | protect | protect | denied | writes to .git/hooks/ and .git/config at the root are denied | the probe creates .git/hooks/pre-commit, overwrites a sample hook, appends to and overwrites .git/config; host-side listing and hashes of .git/hooks and .git/config unchanged. Twin: protect none |
//	| `protect-git-nested` | protect | protect | denied | the same in a repository nested five levels down | as protect-git, in root/a/b/c/d/e/.git |
//	| `protect-rename-recreate` | protect | protect | denied | renaming .git (or .git/hooks) away and recreating it does not make hooks writable | the probe renames .git away, recreates .git/hooks and writes a hook and a config, then does the same with .git/hooks; afterwards no file under a .git/hooks directory or named .git/config holds the token. Twin: protect none |
//	| `protect-rename-roundtrip` | protect | protect | denied | renaming .git away, writing its hooks and renaming it back does not plant a hook | the probe renames .git to .git-away, writes .git-away/hooks/pre-commit and .git-away/config, renames it back; no hook or config holds the token afterwards. Twin: protect none |
//	| `protect-new-repo` | protect | fs-new-files | denied | a repository created during the command keeps no hook | the probe creates root/x/y/.git/hooks/pre-commit and root/x/y/.git/config; after Run no hook or config holds the token (masked, or removed by the post-command scan). Twin: protect none |
//	| `git-redirect-commondir` | protect | protect | denied | a commondir written into .git cannot make the host's git run a planted fsmonitor | the probe makes a git directory by content (HEAD, objects/, refs/) with a fsmonitor in its config and writes .git/commondir pointing at it; afterwards the host's own git status in the root must not run the fsmonitor (a canary file outside the root). Twin: protect none |
//	| `git-redirect-gitdir-file` | protect | protect | denied | a .git file pointing at a git directory not named .git cannot plant a fsmonitor | the probe writes sub/.git (gitdir: ../data/x) and data/x as a git directory by content whose config has a fsmonitor; afterwards the host's git status in sub must not run it. Twin: protect none |
//	| `git-redirect-modules` | protect | protect | denied | the config of an existing submodule's git directory (.git/modules/NAME) is protected | the fixture absorbs a submodule's git directory into .git/modules/lib (host git init --separate-git-dir); the probe appends a fsmonitor to its config; afterwards the host's git status in lib must not run it. Twin: protect none |
//	| `git-redirect-worktree-config` | protect | protect | denied | extensions.worktreeConfig with a .git/config.worktree cannot plant a fsmonitor | the probe appends [extensions] worktreeConfig = true to .git/config and writes .git/config.worktree with a fsmonitor; afterwards the host's git status in the root must not run it. Twin: protect none |
//	| `git-redirect-worktrees` | protect | protect | denied | a worktree's git directory (.git/worktrees/NAME) whose commondir points at a planted git directory cannot plant a fsmonitor | the probe makes evil/ a git directory by content with a fsmonitor in its config, .git/worktrees/wt with HEAD, gitdir and a commondir pointing at evil/, and wt/.git (gitdir: .git/worktrees/wt); afterwards the host's git status in wt must not run it. Twin: protect none |
//	| `git-nested-repo` | protect | protect | denied | a repository nested in a new git directory's parts (its .git, info/, refs/) cannot plant a fsmonitor | the fixture registers gitlinks in the root's index (host git update-index); the probe makes new git directories by content at those paths' parents and plants a repository with a fsmonitor at sub/.git, lib/info/x/.git and bare/refs/x/.git; afterwards the host's git status in the root (which recurses into the gitlinks) must not run it. Twin: protect none |
//	| `git-separate-git-dir` | protect | protect | denied | a repository made by git init --separate-git-dir and registered as a gitlink cannot plant a fsmonitor | inside the sandbox, real git: git init --separate-git-dir=data/x sub, a commit in sub, git config core.fsmonitor in it, and git update-index --cacheinfo 160000 registering sub in the root's index (no .gitmodules); afterwards the host's git status in the root (which recurses into the gitlink) must not run it. Twin: protect none. Unsupported without git (on the host or inside the sandbox) |
//	| `tool-settings` | protect | protect | denied | settings of agent and developer tools that run commands are protected | the probe writes .claude/settings.json, .cursor/mcp.json, .gemini/settings.json, .devcontainer/devcontainer.json, .pre-commit-config.yaml, .husky/pre-commit, .npmrc and .yarnrc.yml (at the root and one level down); afterwards none of them exists with the token on the host. Twin: protect none |
//	| `project-policy` | protect | protect | denied | the project policy layer (.cordon/policy.yaml) cannot be changed by a command | the fixture writes root/.cordon/policy.yaml; the probe overwrites it, appends to it and writes .cordon/extra.yaml; host-side listing and hashes of root/.cordon unchanged. Twin: protect none |
//	| `git-works` | protect | protect | allowed | git add and git commit work with protection on | git add and git commit inside the sandbox; the host's git log and git show see the commit and the file. Unsupported without git (on the host or inside the sandbox) |
//	| `git-init-root` | protect | protect | allowed | git init works at the root of a workspace that is not a repository yet | in a root with no .git, inside the sandbox: git init, git add and git commit; afterwards the host's git log and git show in the root see the commit and the file. Unsupported without git (on the host or inside the sandbox) |
//	| `git-init-root-fsmonitor` | protect | protect | denied | a repository created at the root during the command cannot plant a fsmonitor | in a root with no .git, inside the sandbox, real git: git init, git config core.fsmonitor; afterwards the host's git status in the root must not run it (the new git directory's config is sanitized). Twin: protect none. Unsupported without git (on the host or inside the sandbox) |
//	| `git-workflow` | protect | protect | allowed | everyday git works with protection on: branches, rebase, stash, worktrees, a local submodule, a local clone, a new repository | the user (host git) registers a repository in the root as submodule lib and moves the superproject to its newer commit; inside the sandbox: git checkout -b, commits on two branches, git rebase, git stash and stash pop, git worktree add, git submodule update, git clone of the submodule's repository and git init; afterwards the host's own git sees the rebased branch, the stashed change committed, the worktree, the submodule at the new commit, the clone's history and the new repository. Unsupported without git (on the host or inside the sandbox) |
//	| `net-tcp-connect` | network | net-tcp | denied | network none: TCP connect to loopback fails | the probe connects to the host's loopback TCP canary and sends a token; the canary counts no connection. Twin: network full |
//	| `net-tcp-bind` | network | net-tcp | denied | network none: a port bound on loopback is not reachable from the host | the probe binds and listens on 127.0.0.1:PORT; the host tries to connect and read the probe's token. Twin: network full |
//	| `net-udp` | network | net-udp | denied | network none: UDP datagrams to loopback do not arrive | the probe sends a datagram to the host's UDP canary; the canary counts none. Twin: network full |
//	| `net-unix-stream` | network | net-unix | denied | an outside pathname Unix stream socket cannot be reached | the probe connects to s/stream.sock outside the root; the listener counts no connection. Twin: executor.Local |
//	| `socket-trusted-read` | network | net-unix | denied | under trusted mode, whose read of the whole disk exposes every socket's path, an outside Unix socket cannot be reached | under mode trusted (network none) the probe connects to s/stream.sock outside the root, which the read of / makes visible and no search covers; the listener counts no connection. Twin: executor.Local |
//	| `net-unix-dgram` | network | net-unix | denied | an outside pathname Unix datagram socket cannot be reached | the probe sends to s/dgram.sock outside the root; the socket counts no datagram. Twin: executor.Local |
//	| `socket-in-root` | network | net-unix | denied | a host daemon's Unix socket inside the writable root cannot be reached | the host listens on run1/d.sock inside the root (a private daemon under build/, say); the probe connects and the listener counts no connection. Twin: executor.Local |
//	| `socket-unlisted-dir` | network | net-unix | denied | a Unix socket inside the root, in a directory the user may enter but not list, cannot be reached | the host listens on run2/d.sock inside the root and makes run2 0311 (searchable, not listable: a derivation that is not root cannot find the socket, while a command of the same user that knows its name could connect), protection off (the guard refuses a root it cannot list); the probe connects and the listener counts no connection. Twin: executor.Local |
//	| `socket-named` | network | net-unix | allowed | a Unix socket inside the root that a path rule names can be reached | as socket-in-root, under a policy whose path rule allows run1/d.sock: the listener counts the probe's connection (landlock below ABI 9 refuses such a policy in strict mode: socket(AF_UNIX) cannot then be denied) |
//	| `net-abstract-unix` | network | net-abstract-unix | denied | an abstract Unix socket outside the sandbox cannot be reached | the probe connects to the host's abstract socket @TAG; the listener counts no connection. Twin: executor.Local. Linux only |
//	| `net-proxy-allowed` | network | net-allowlist | allowed | network allow-list: an allowed name is reached through the proxy by HTTP, CONNECT and SOCKS5 | the policy allows allowed.test (which the proxy resolves to 127.0.0.1) and 127.0.0.1:PORT; the probe fetches http://allowed.test:PORT/TOKEN through HTTP_PROXY, tunnels with CONNECT through HTTPS_PROXY and with SOCKS5 through ALL_PROXY, sending a token each; the host's TCP canary receives all three tokens |
//	| `net-proxy-denied` | network | net-allowlist | denied | network allow-list: a denied name and an unknown name are refused by the proxy | the policy allows allowed.test and 127.0.0.1:PORT and denies denied.test; the probe asks for denied.test:PORT and unknown.test:PORT by HTTP, CONNECT and SOCKS5; the canary receives nothing. Twin: a policy that allows both names |
//	| `net-proxy-bypass` | network | net-allowlist | denied | network allow-list: a direct connection that skips the proxy fails | under an allow-list that allows the canary (allowed.test, 127.0.0.1:PORT), the probe connects straight to 127.0.0.1:PORT by TCP and sends a UDP datagram to a UDP canary, without the proxy; neither canary receives anything. Twin: network full |
//	| `net-proxy-port-elsewhere` | network | net-allowlist | denied | network allow-list: another loopback address on the proxy's own port is unreachable | the host listens on 127.0.0.2:3128, the proxy's port; the probe connects there directly; the canary counts nothing (a port-only rule would let it through). Twin: network full |
//	| `net-proxy-dns` | network | net-allowlist | denied | network allow-list: DNS (UDP and TCP port 53) cannot leave the sandbox | the host listens on 127.0.0.1:53 by UDP and TCP (root only); the probe sends a datagram and connects; neither canary counts anything. Twin: network full |
//	| `net-proxy-rebinding` | network | net-allowlist | denied | network allow-list: an allowed name that resolves to loopback is refused unless the address is allowed | the policy allows rebind.test, which resolves to 127.0.0.1, but no address entry names 127.0.0.1; the probe asks for rebind.test:PORT by HTTP, CONNECT and SOCKS5; the canary receives nothing. Twin: the policy also allows 127.0.0.1:PORT |
//	| `net-proxy-ask` | network | net-allowlist | allowed | network allow-list: with unknown: ask the approver is asked once, and its yes opens the host | unknown: ask; the approver (Request.AskNetwork) answers yes for ask-yes.test and no for ask-no.test; the probe connects twice to each through the proxy: the canary receives the two ask-yes.test tokens and none of ask-no.test, and the approver was asked once per host |
//
// Add a case by adding it to the catalogue in the layer's cases_*.go file,
// with a twin, then run go test ./conformance -run TestCasesDoc -update.
package conformance
