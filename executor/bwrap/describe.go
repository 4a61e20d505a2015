//go:build linux

package bwrap

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// allControls are the controls this backend reports on.
var allControls = executor.Controls()

// Describe reports what the executor enforces on this host, assessed for
// a coding-mode profile (network none) of a fresh workspace: the gaps Run
// declares there, the gaps of profiles run in best effort so far, and
// what New detected (bwrap's version and options, user namespaces, the
// sysctls restricting them, /proc).
func (x *Executor) Describe(ctx context.Context) executor.Capabilities {
	x.descOnce.Do(func() { x.desc = x.describe() })
	return x.bestEffort.Apply(x.desc.Clone())
}

func (x *Executor) describe() executor.Capabilities {
	f := x.feat
	caps := executor.Capabilities{
		Backend:    Backend,
		Sandboxed:  true,
		Enforced:   []executor.Control{},
		Gaps:       []executor.Gap{},
		BestEffort: x.cfg.BestEffort,
		Info: map[string]string{
			"bwrap":           f.path,
			"bwrap_version":   f.version,
			"user_namespaces": f.probe,
			"proc":            "a fresh /proc of the sandbox's PID namespace (--proc /proc)",
			"uid":             strconv.Itoa(f.euid),
			"namespaces":      "user (also as root), PID, mount, IPC, UTS, cgroup, and network unless the policy's network is full",
			"capabilities":    "every capability dropped (--cap-drop ALL), no_new_privs set",
			"protect":         "existing protected paths bound read-only; new ones removed or restored after each command by the protected-path guard",
			"environment":     "--clearenv, then --setenv per entry of Request.Env; bwrap itself runs with an empty environment",
		},
	}
	if f.argsFD && !x.argsInline {
		caps.Info["arguments"] = "options and environment through --args (a pipe): values stay out of the host's process list"
	} else {
		caps.Info["arguments"] = "on the command line (bwrap has no --args): environment values are visible in the host's process list"
	}
	if f.jsonStatus {
		caps.Info["setup_errors"] = "reported as *SetupError (--json-status-fd tells whether the command was executed)"
	} else {
		caps.Info["setup_errors"] = "not distinguishable from the command's exit status 1 (bwrap has no --json-status-fd)"
	}
	if f.disableUserns {
		caps.Info["nested_user_namespaces"] = "disabled (--disable-userns)"
	} else {
		caps.Info["nested_user_namespaces"] = "allowed: " + f.disableUsernsWhy
	}
	if f.setuid {
		caps.Info["setuid"] = "the bwrap binary is setuid; cordon runs it with no_new_privs, so it works only through unprivileged user namespaces"
	}
	var sysctls []string
	for k, v := range f.sysctls {
		sysctls = append(sysctls, k+"="+v)
	}
	sort.Strings(sysctls)
	if len(sysctls) > 0 {
		caps.Info["sysctls"] = strings.Join(sysctls, " ")
	}
	if len(x.grants) > 0 {
		var b []string
		for _, g := range x.grants {
			b = append(b, g.Path+" ("+g.Op.String()+")")
		}
		caps.Info["extra_binds"] = strings.Join(b, ", ") + ": approved for every command where the policy asks, never where it denies"
	}
	caps.Info["exit_status"] = "a command killed by signal N is reported as ExitCode -1 and Signal N; bwrap reports both that and a command's own exit 128+N as status 128+N, so `exit 130` also reads as killed by SIGINT"
	caps.Info["troubleshooting"] = "Ubuntu 24.04: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile granting bwrap userns; containers: --security-opt systempaths=unconfined for /proc, seccomp=unconfined for user namespaces (see the package documentation)"

	dir, err := os.MkdirTemp("", "cordon-bwrap-describe-")
	if err != nil {
		caps.Info["error"] = "assessing a sample profile: " + err.Error()
		return caps
	}
	defer os.RemoveAll(dir)
	pr, err := policyderive.Derive(policy.Coding.Policy(), dir, "", dir, x.grants)
	if err == nil {
		var pl *plan
		if pl, err = newPlan(pr, f.disableUserns); err == nil {
			caps.Gaps = backend.GroupedGaps(pl.looser)
			if s := backend.StricterNotes(pl.fidelity); s != "" {
				caps.Info["stricter"] = strings.ReplaceAll(s, dir, "<root>")
			}
		}
	}
	if err != nil {
		caps.Info["error"] = "assessing a sample profile: " + err.Error()
	}
	for i := range caps.Gaps {
		if caps.Gaps[i].Control == executor.ControlFSNewFiles {
			caps.Gaps[i].Reason += "; the same holds for every bare-name or glob pattern of denied_paths and path_rules: a matching path created while a command runs is not masked until the next command (protected ones are removed or restored by the guard when it ends)"
		}
	}
	describeAllowList(&caps)
	for _, c := range allControls {
		if _, ok := caps.Gap(c); !ok {
			caps.Enforced = append(caps.Enforced, c)
		}
	}
	return caps
}

// describeAllowList reports the network allow-list: as root bwrap starts
// in a private network namespace whose listener is the proxy; otherwise
// the host program relays from inside the sandbox (Init); else a gap.
func describeAllowList(caps *executor.Capabilities) {
	err := netallow.Check()
	if err == nil {
		caps.Info["network_allowlist"] = "root: bwrap starts in a private network namespace (loopback only) whose one listener is the executor's proxy on 127.0.0.1:3128"
		return
	}
	if _, rerr := relayExe(); rerr != nil {
		why := fmt.Errorf("%v; and %w", err, rerr)
		caps.Gaps = append(caps.Gaps, backend.AllowListNoNamespace(why))
		caps.Info["network_allowlist"] = "none: " + why.Error()
		return
	}
	caps.Info["network_allowlist"] = "relay: bwrap's own network namespace (loopback only), in which the host program (bwrap.Init) listens on 127.0.0.1:3128 and relays each connection to the executor's proxy over a Unix socket bound into the sandbox"
}
