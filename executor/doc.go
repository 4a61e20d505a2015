// Package executor defines how cordon runs a command: the Executor contract
// that every backend implements, the optional Starter and Describer
// extensions, typed errors, and Local, the unsandboxed reference executor.
//
// # The contract
//
// An executor decides how a command runs, never whether: the workspace has
// already applied the policy gate and the approvals. Run returns a Result
// for every command that ran, whatever its exit status; an error means the
// command could not be run as asked (*UnavailableError, *UnenforceableError,
// a *RequestError, a start failure, or a context that ended before the
// start). Backends that cannot enforce the derived profile at least as
// strictly as the policy refuse to run unless the caller opted into best
// effort, and Describe lists every gap.
//
// A sandboxing executor derives its sandbox from the request's compiled
// policy: Request.Checker, which a workspace compiles once and sets on
// every request (Request.Compile does it for a caller with only a
// Policy); a request without one is compiled once per command. Controls
// (Control, ControlFSRead, ...) are policy.Control, the one vocabulary
// policyderive's fidelity reports use too. The sandbox backends share
// one per-command pipeline (admit, derive, plan, strict or best-effort
// verdict, guard, start, end), written down in executor/internal/backend;
// each backend's Explain returns the plan its Run enforces.
//
// # Process hygiene every executor provides
//
// Every command runs in a new session and process group with no
// controlling terminal (TIOCSTI is impossible), stdin /dev/null, exactly
// Request.Env as its environment (an empty Env is empty, never the
// parent's), no descriptors beyond 0–2, and PR_SET_NO_NEW_PRIVS. Timeout
// and context cancellation freeze and kill the whole tree — grandchildren
// and setsid/nohup children included while their parent lives — report
// TimedOut and keep the output produced so far. Output is bounded per
// stream (head and tail with an omission marker) whatever the command
// prints. The shared plumbing lives in internal/procgroup and
// internal/launcher, and its package docs state the caveats: a
// double-forked daemon whose parent already exited escapes any executor
// without a PID namespace, and the descriptor sweep marks the host's own
// inheritable descriptors close-on-exec.
//
// # Local
//
// Local is that plumbing and nothing more: it enforces no isolation, ignores
// Policy, Root, Home and Grants, and says so in Describe (Backend "local",
// Sandboxed false, no controls enforced). It is the reference for the
// functional half of the conformance suite and the baseline that leaks on
// every isolation case.
package executor
