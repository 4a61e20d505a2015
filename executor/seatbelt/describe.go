package seatbelt

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// allControls are the controls this backend reports on. Abstract Unix
// sockets are not among them: macOS has none (Info says so).
var allControls = slices.DeleteFunc(executor.Controls(), func(c executor.Control) bool {
	return c == executor.ControlNetAbstract // a Linux notion
})

// Describe reports what the executor enforces on this host, assessed for
// a coding-mode profile (network none) of a fresh workspace: the gaps Run
// declares there (every one inherent to Seatbelt, so strict mode runs),
// the stricter consequences, the macOS release, and facts about
// sandbox-exec.
func (x *Executor) Describe(ctx context.Context) executor.Capabilities {
	x.descOnce.Do(func() { x.desc = x.describe() })
	return x.bestEffort.Apply(x.desc.Clone())
}

func (x *Executor) describe() executor.Capabilities {
	caps := executor.Capabilities{
		Backend:    Backend,
		Sandboxed:  true,
		Enforced:   []executor.Control{},
		Gaps:       []executor.Gap{},
		BestEffort: x.cfg.BestEffort,
		Info: map[string]string{
			"sandbox_exec":      x.program,
			"deprecated":        "Apple marks sandbox-exec(1) and the Seatbelt profile language deprecated and undocumented, but macOS still ships both and runs its own services under Seatbelt profiles; should a release drop /usr/bin/sandbox-exec, New fails with ErrNotInstalled",
			"profile":           "(deny default), a minimal base that lets /bin/sh run, the policy's rules as file-read*/file-write* rules evaluated last match first (regexes for bare-name and glob patterns, so paths created while a command runs are covered), network* denied unless the policy's network is full; every path reaches the profile as a -D parameter or an escaped regex, never as text",
			"arguments":         "the profile and its parameters are on sandbox-exec's command line, visible in the host's process list (paths, no secrets); the environment is not",
			"environment":       "exactly Request.Env: sandbox-exec runs with it and passes it to the shell untouched",
			"tmpdir":            x.tmp,
			"protect":           "protected paths at any depth are write-denied by regex rules, whether they exist or not; the protected-path guard undoes changes made through renamed directories or hard links after each command",
			"network":           "none: every network operation denied, Unix sockets included; full: IP networking allowed (Seatbelt filters IP traffic only by local/remote address and port, not by host name, so a host allow-list needs a proxy), Unix sockets denied except the DNS resolver's",
			"net-abstract-unix": "not applicable: macOS has no abstract Unix sockets",
			"no_new_privs":      "not available on macOS; the Seatbelt sandbox is inherited across every exec, setuid programs included, and cannot be lifted from inside",
			"process_tree":      "commands start in a new session; on timeout the process group and every descendant found in the process table (kern.proc.all) are stopped, then killed",
			"setup_errors":      "reported as *SetupError: a failed command whose stderr starts with \"sandbox-exec: \" is checked with /bin/sh -c : under the same profile",
			"troubleshooting":   "denials are logged: /usr/bin/log stream --style compact --predicate 'eventMessage CONTAINS \"deny(\"'; sandbox-exec fails with \"sandbox_apply: Operation not permitted\" inside another sandbox (Seatbelt sandboxes do not nest); see the package documentation",
		},
	}
	maps.Copy(caps.Info, hostInfo())

	dir, err := os.MkdirTemp("", "cordon-seatbelt-describe-")
	if err == nil {
		defer os.RemoveAll(dir)
		dir, err = filepath.EvalSymlinks(dir)
	}
	var pl *plan
	if err == nil {
		var pr *policyderive.Profile
		if pr, err = policyderive.Derive(policy.Coding.Policy(), dir, "", dir, nil); err == nil {
			pl, err = assess(x.program, pr.WithTmpDir(x.tmp))
		}
	}
	if err != nil {
		caps.Info["error"] = "assessing a sample profile: " + err.Error()
		return caps
	}
	caps.Gaps = backend.GroupedGaps(pl.looser)
	caps.Gaps = append(caps.Gaps, backend.AllowListUnsupported(Backend))
	for _, c := range allControls {
		if _, ok := caps.Gap(c); !ok {
			caps.Enforced = append(caps.Enforced, c)
		}
	}
	if s := backend.StricterNotes(pl.fidelity); s != "" {
		caps.Info["stricter"] = strings.ReplaceAll(s, dir, "<root>") +
			"; no Mach service may be looked up, so programs that ask a system daemon (user and group names through opendirectoryd, the keychain, preferences) fail or fall back"
	}
	if len(pl.blocking) > 0 {
		var b []string
		for _, g := range pl.blocking {
			b = append(b, string(g.Control))
		}
		mode := "strict mode refuses to run: "
		if x.cfg.BestEffort {
			mode = "best effort runs without enforcing: "
		}
		caps.Info["unenforceable"] = mode + strings.Join(b, ", ")
	}
	return caps
}
