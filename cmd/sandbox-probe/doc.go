// Command sandbox-probe verifies, on a real host, which isolation cordon's
// OS sandboxes actually enforce, explains the policy's decisions, shows the
// OS profiles derived from a policy, runs a command through the workspace
// gate and a sandbox, and measures what each sandbox costs per command.
//
//	sandbox-probe                       # detect + probe every available sandbox; table; exit 1 on any failure
//	sandbox-probe detect [--json]       # kernel, Landlock ABI, user namespaces, bwrap, Docker, sandbox-exec, cgroups
//	sandbox-probe probe  [--backend landlock,bwrap,docker,seatbelt,local] [--policy FILE] [--json]
//	sandbox-probe explain [--policy FILE] [--root DIR] (PATH [--write] | --command CMD [--cwd DIR] | --batch) [--json]
//	sandbox-probe derive  --backend B [--policy FILE] [--root DIR] [--json]
//	sandbox-probe run     --backend B [--policy FILE] [--root DIR] [--yes] -- CMD...
//	sandbox-probe bench   [--backend ...] [-n N] [--json]
//
// Without --policy the coding preset applies; --root defaults to the
// current directory. Every subcommand's --help says more; docs/json.md is
// the schema of every --json output (tested against the program).
//
// # Building
//
// Build it with CGO_ENABLED=0 (make probe does): the conformance suite
// copies this program as its static probe (see conformance/probe) when no
// Go toolchain is at hand, so main calls probe.MaybeRun before anything
// else, and a static binary also runs inside a minimal container image.
//
// # Exit status
//
//	0    all good
//	1    a check failed: a conformance case, the --policy check, an
//	     explain --expect, a batch line, a bench runner; detect without
//	     any usable OS sandbox
//	2    usage or setup error: bad flags, an unreadable or invalid policy
//	     file, an unknown backend, a backend asked for by name that cannot
//	     run here (the error says why and how to fix it)
//	130  interrupted
//
// run exits with the command's own status instead: 128+N when signal N
// killed it, 124 when its timeout did, 126 when the gate (or the user)
// refused it, 2 for setup errors as above.
//
// Errors are one line on stderr, "sandbox-probe: ...", and never JSON; on
// exit status 2 stdout is empty.
//
// # Human output
//
// Tables are plain text with columns aligned; colour only when stdout is a
// terminal (the terminal ioctl answers, so /dev/null is not one) unless
// NO_COLOR is set, TERM is dumb or --color says otherwise. A case that
// failed is printed in UPPER CASE, so failures stand out without colour.
// Progress (backend, case number, case id) is a self-replacing line on
// stderr, shown only when stderr is a terminal.
//
// # Backends
//
// cmd/internal/backends holds the one table that names backend packages
// (shared with cmd/cordon): name,
// whether it sandboxes, the operating systems it runs on, and its
// constructor. A backend is available when its constructor succeeds and,
// for an OS sandbox, its Describe reports Sandboxed (the landlock backend
// builds on a kernel without Landlock but then enforces nothing); detect
// takes the reasons and fixes from the constructors' errors; a backend
// for another operating system (seatbelt off macOS, the Linux sandboxes
// elsewhere) is reported as such without being built. The docker backend's
// entry lives in cmd/internal/backends/docker.go; -tags nodocker leaves it (and the Docker
// client) out. --docker-image runs it in image mode with a local image
// (never pulled); the default is host mode. In image mode the suite's
// probe runs inside the image, so it must be a static Linux binary: a
// CGO_ENABLED=0 sandbox-probe (which the suite copies), --probe, or
// $CORDON_PROBE; probe warns otherwise.
//
// # Choices made here
//
//   - sandbox-probe with no subcommand probes every available OS sandbox,
//     not local: local enforces nothing and its column would be allowed
//     everywhere. probe --backend local runs it as the unsandboxed
//     reference (conformance.FunctionalOnly).
//   - The conformance cases use their own fixture policies, so their
//     expectations are known. probe --policy adds a policy check per
//     backend: a fresh executor runs `true` under that policy in --root in
//     strict mode; unenforceable (with the gaps) fails the probe.
//   - Every backend's suite runs with GIT_CONFIG_GLOBAL=/dev/null, as the
//     backends' own conformance tests do: the fixture's fake home holds a
//     .gitconfig canary the sandbox hides, and git refuses to start when it
//     sees a global config it cannot read.
//   - explain: PATH and --cwd are relative to the workspace root (as for
//     the workspace's tools), --policy and --root to the current
//     directory. --expect DECISION turns a verdict into a check. Batch
//     lines may carry "id" (echoed) and "expect"; every answer carries
//     "line", the input line number, so blank lines (skipped) cannot shift
//     answers; the path of a command answer is the deciding claim's.
//   - derive shows the renderer's output and fidelity for the policy, on
//     every OS (the renderers are pure). A backend may close looser
//     elements by other means (the landlock backend's seccomp filter, its
//     protected-path guard instead of protect masks); probe shows what a
//     backend enforces. derive --abi renders for an older Landlock ABI.
//   - run: one argument is a shell command line, several are a command and
//     its arguments, each quoted with executor.ShellQuote. Asks are put to the user
//     on /dev/tty, only when stdin is a terminal (a pipe means nobody is there
//     to answer); otherwise they are refused unless --yes, which also prints
//     each approval on stderr. Output is printed after the command ends
//     (bounded per stream, head and tail, --output-limit).
//   - bench runs in a fresh temporary workspace under the coding preset;
//     the bare baseline is /bin/sh -c true forked by os/exec from this
//     process. Rounds are round-robin with a rotating start; warm-up
//     rounds (--warmup) fill the backends' caches first. The median of an
//     even count is the mean of the middle two; p95 is the nearest rank.
package main
