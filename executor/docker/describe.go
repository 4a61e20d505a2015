package docker

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// allControls are the controls this backend reports on.
var allControls = executor.Controls()

// Describe reports what the executor enforces with this engine, assessed
// for a coding-mode profile (network none) of a fresh workspace: the
// gaps Run declares there, the gaps of profiles run in best effort so
// far, and what New found (engine and API version, image, host mode,
// user, limits, seccomp profile, init).
func (x *Executor) Describe(ctx context.Context) executor.Capabilities {
	x.descOnce.Do(func() { x.desc = x.describe() })
	return x.bestEffort.Apply(x.desc.Clone())
}

func (x *Executor) describe() executor.Capabilities {
	e := x.eng
	mode := "image"
	if x.host {
		mode = "host (an empty image; the host's System paths bound read-only)"
	}
	limit := func(n int64, unit string) string {
		if n <= 0 {
			return "none"
		}
		return strconv.FormatInt(n, 10) + unit
	}
	caps := executor.Capabilities{
		Backend:    Backend,
		Sandboxed:  true,
		Enforced:   []executor.Control{},
		Gaps:       []executor.Gap{},
		BestEffort: x.cfg.BestEffort,
		Info: map[string]string{
			"engine":         e.host + " (" + e.where + ")",
			"engine_version": e.version,
			"api_version":    e.apiVersion,
			"engine_os":      e.os + "/" + e.arch,
			"image":          x.image,
			"mode":           mode,
			"host_mode":      strconv.FormatBool(x.host),
			"user":           x.user,
			"memory":         limit(x.cfg.memory(), " bytes"),
			"pids":           limit(x.cfg.pids(), ""),
			"seccomp":        x.secDesc,
			"container":      "one per executor (session), created by the first command, replaced when the derived mounts change (the old one stays while a background process runs in it), removed by Close; strays of dead processes are removed by New",
			"isolation":      "read-only root file system, every capability dropped, no-new-privileges, private /tmp (tmpfs), private IPC, PID, mount and UTS namespaces; network none unless the policy grants full access (then " + x.cfg.fullNetwork() + ")",
			"environment":    "exactly Request.Env: the variables the engine adds to every exec (" + strings.Join(append(slices.Clone(engineEnv), x.imageEnv...), ", ") + ") are unset by the exec wrapper unless requested",
			"exit_status":    "a command killed by signal N is reported as ExitCode -1 and Signal N; the shell reports both that and a command's own exit 128+N as status 128+N, so `exit 130` also reads as killed by SIGINT",
			"sockets":        "the engine's own socket and the usual container engine sockets are never mounted, and are hidden where a mounted tree holds them",
		},
	}
	caps.Info["init"] = "the executor's own pid 1, a /bin/sh idle loop that reaps orphans; nothing in the container can signal it (docker-init is not used: a command's kill -KILL -1 would kill its only child, and with it the container)"
	if x.fast {
		caps.Info["commands"] = "through the container's command runner (one exec per container; a few forks per command, FIFOs in a read-only control directory); commands with environment names that are not shell identifiers run as an exec of their own"
	} else {
		caps.Info["commands"] = "one engine exec per command (a remote engine, a User other than the caller's, or ExecPerCommand)"
	}
	if x.strays > 0 {
		caps.Info["strays_removed"] = strconv.Itoa(x.strays)
	}
	if e.remote() {
		caps.Info["remote"] = "the engine is not reached through a local Unix socket: bind sources name paths on the engine's host, so the workspace and System paths must exist there at the same paths (a shared file system); the protected-path guard and placeholder cleanup act on this host's copy"
	}
	for _, s := range e.security {
		if strings.Contains(s, "name=userns") {
			caps.Info["userns_remap"] = "the engine remaps user ids (userns-remap): files written in the workspace are owned by the remapped uid"
		}
		if strings.Contains(s, "name=rootless") {
			caps.Info["rootless"] = "the engine runs rootless: the container's uids map into the engine user's subordinate ids"
		}
	}
	dir, err := os.MkdirTemp("", "cordon-docker-describe-")
	if err != nil {
		caps.Info["error"] = "assessing a sample profile: " + err.Error()
		return caps
	}
	defer os.RemoveAll(dir)
	pr, err := policyderive.Derive(policy.Coding.Policy(), dir, "", dir, nil)
	if err == nil {
		var sp *spec
		if sp, err = x.specFor(pr, policy.Coding.Policy()); err == nil {
			caps.Gaps = backend.GroupedGaps(sp.looser)
			if s := backend.StricterNotes(sp.fidelity); s != "" {
				caps.Info["stricter"] = strings.ReplaceAll(s, dir, "<root>")
			}
		}
	}
	if err != nil {
		caps.Info["error"] = "assessing a sample profile: " + err.Error()
	}
	for i := range caps.Gaps {
		caps.Gaps[i].Reason = strings.ReplaceAll(caps.Gaps[i].Reason, dir, "<root>")
		if caps.Gaps[i].Control == executor.ControlFSNewFiles {
			caps.Gaps[i].Reason += "; the same holds for every bare-name or glob pattern of denied_paths and path_rules: a matching path created while a command runs is not masked until the next command, which runs in a new container with the new mask (protected ones are removed or restored by the guard when it ends)"
		}
	}
	if why := x.allowListWhy(); why != nil {
		caps.Gaps = append(caps.Gaps, backend.AllowListNoNamespace(why))
		caps.Info["network_allowlist"] = "none: " + why.Error()
	} else {
		caps.Info["network_allowlist"] = "containers have network mode none; each command's proxy listener is made inside the container's network namespace, entered by its pid (needs a local engine and CAP_SYS_ADMIN: root)"
	}
	for _, c := range allControls {
		if _, ok := caps.Gap(c); !ok {
			caps.Enforced = append(caps.Enforced, c)
		}
	}
	return caps
}
