package main

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"
)

// Check statuses.
const (
	statusOK          = "ok"
	statusWarn        = "warn"
	statusUnavailable = "unavailable"
	statusNA          = "n/a"
)

// Check is one fact detect establishes about the host.
type Check struct {
	// Name is one of: landlock, user_namespaces, apparmor_userns, bwrap,
	// docker, sandbox_exec, cgroup.
	Name string `json:"name"`
	// Status is "ok", "warn" (usable, with a caveat), "unavailable" or
	// "n/a" (does not apply to this operating system).
	Status string `json:"status"`
	// Summary is the fact in a few words ("ABI 7", "0.8.0", "v2").
	Summary string `json:"summary"`
	// Reason says why it is unavailable (or the caveat); Fix how to fix it.
	Reason string `json:"reason,omitempty"`
	Fix    string `json:"fix,omitempty"`
	// Details holds raw facts: sysctl values, paths, versions.
	Details map[string]string `json:"details,omitempty"`
}

// DetectReport is the output of detect (--json).
type DetectReport struct {
	OS     string  `json:"os"`
	Arch   string  `json:"arch"`
	Distro string  `json:"distro,omitempty"`
	Kernel string  `json:"kernel,omitempty"`
	UID    int     `json:"uid"`
	Checks []Check `json:"checks"`
	// Backends says, per backend, whether it can run here and what it
	// enforces (its Describe).
	Backends []*availability `json:"backends"`
	// Usable lists the OS sandbox backends available here.
	Usable []string `json:"usable"`
}

func (r *DetectReport) backend(name string) *availability {
	for _, av := range r.Backends {
		if av.Name == name {
			return av
		}
	}
	return nil
}

func (r *DetectReport) check(name string) *Check {
	for i := range r.Checks {
		if r.Checks[i].Name == name {
			return &r.Checks[i]
		}
	}
	return nil
}

func (a *app) detectCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "detect [--json]",
		Short: "Report the host's sandboxing facilities: Landlock, user namespaces, bwrap, Docker, sandbox-exec, cgroups",
		Long: `detect reports the operating system and kernel, the Landlock ABI, whether
user namespaces can be created (and Ubuntu's AppArmor restriction of them),
bwrap's version and whether it can sandbox here, whether a Docker Engine is
reachable and its version, whether sandbox-exec exists (macOS), the cgroup
version, and then which cordon backends can run here, each with the reason
when it cannot and how to fix that.

Exit status: 0 at least one OS sandbox backend is usable, 1 none is,
2 usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep := detect(cmd.Context(), a.backendOptions(false))
			if asJSON {
				if err := writeJSON(a.stdout, rep); err != nil {
					return err
				}
			} else {
				a.printDetect(rep)
			}
			if len(rep.Usable) == 0 {
				return failedf("detect: no OS sandbox backend is usable on this host")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// detect runs every host check and builds every backend once.
func detect(ctx context.Context, bo backendOptions) *DetectReport {
	rep := &DetectReport{OS: runtime.GOOS, Arch: runtime.GOARCH, UID: os.Geteuid(), Checks: []Check{}, Usable: []string{}}
	hostChecks(rep)
	rep.Backends = checkBackends(ctx, nil, bo)
	for _, av := range rep.Backends {
		if av.Available && av.Sandboxed {
			rep.Usable = append(rep.Usable, av.Name)
		}
	}
	rep.Checks = append(rep.Checks, bwrapCheck(rep), dockerCheck(rep), sandboxExecCheck())
	orderChecks(rep)
	return rep
}

// checkOrder is the order detect lists its checks in.
var checkOrder = []string{"landlock", "user_namespaces", "apparmor_userns", "cgroup", "bwrap", "docker", "sandbox_exec"}

func orderChecks(rep *DetectReport) {
	var out []Check
	for _, name := range checkOrder {
		if c := rep.check(name); c != nil {
			out = append(out, *c)
		}
	}
	for _, c := range rep.Checks {
		known := false
		for _, name := range checkOrder {
			known = known || c.Name == name
		}
		if !known {
			out = append(out, c)
		}
	}
	rep.Checks = out
}

// bwrapCheck reports bwrap from the bwrap backend's own detection.
func bwrapCheck(rep *DetectReport) Check {
	c := Check{Name: "bwrap", Details: map[string]string{}}
	av := rep.backend("bwrap")
	if runtime.GOOS != "linux" {
		c.Status, c.Summary = statusNA, "bubblewrap is Linux-only"
		return c
	}
	if av == nil {
		c.Status, c.Summary = statusUnavailable, "not built in"
		return c
	}
	if av.Capabilities != nil {
		for _, k := range []string{"bwrap", "bwrap_version", "user_namespaces", "nested_user_namespaces", "sysctls", "setuid"} {
			if v := av.Capabilities.Info[k]; v != "" {
				c.Details[k] = v
			}
		}
	}
	if !av.Available {
		c.Status, c.Summary, c.Reason, c.Fix = statusUnavailable, "not usable", av.Reason, av.Fix
		return c
	}
	c.Status = statusOK
	c.Summary = c.Details["bwrap_version"]
	if p := c.Details["bwrap"]; p != "" {
		c.Summary += " at " + p
	}
	c.Summary += ", sandboxes work"
	return c
}

// dockerCheck reports the Docker Engine from the docker backend's own
// detection (DOCKER_HOST, else the Docker CLI's current context, else the
// default socket).
func dockerCheck(rep *DetectReport) Check {
	c := Check{Name: "docker", Details: map[string]string{}}
	av := rep.backend("docker")
	if av == nil || backendMissing("docker") {
		c.Status, c.Summary = statusUnavailable, "not built in"
		if av != nil {
			c.Reason, c.Fix = av.Reason, av.Fix
		}
		return c
	}
	if av.Capabilities != nil {
		for _, k := range []string{"engine", "engine_version", "api_version", "engine_os", "image", "seccomp"} {
			if v := av.Capabilities.Info[k]; v != "" {
				c.Details[k] = v
			}
		}
	}
	if !av.Available {
		c.Status, c.Summary, c.Reason, c.Fix = statusUnavailable, "not usable", av.Reason, av.Fix
		if s := dockerUnavailable(av.Err); s != "" {
			c.Summary = s
		}
		return c
	}
	c.Status = statusOK
	c.Summary = fmt.Sprintf("engine %s (API %s, %s) at %s", c.Details["engine_version"], c.Details["api_version"], c.Details["engine_os"], c.Details["engine"])
	return c
}

// backendMissing reports whether the named backend is not built in.
func backendMissing(name string) bool {
	b, err := lookupBackend(name)
	return err != nil || b.New == nil
}

// sandboxExecPath is the only sandbox-exec cordon uses (never one on PATH).
const sandboxExecPath = "/usr/bin/sandbox-exec"

func sandboxExecCheck() Check {
	c := Check{Name: "sandbox_exec"}
	if runtime.GOOS != "darwin" {
		c.Status, c.Summary = statusNA, "macOS only"
		return c
	}
	fi, err := os.Stat(sandboxExecPath)
	if err != nil {
		c.Status, c.Summary, c.Reason = statusUnavailable, "missing", oneLine(err.Error())
		c.Fix = "sandbox-exec ships with macOS; a system without it cannot use the seatbelt backend"
		return c
	}
	if fi.Mode()&0o111 == 0 {
		c.Status, c.Summary, c.Reason = statusUnavailable, "not executable", sandboxExecPath+" is not executable"
		return c
	}
	c.Status, c.Summary = statusOK, sandboxExecPath
	if backendMissing("seatbelt") {
		c.Status = statusWarn
		c.Reason = "present, but this sandbox-probe has no seatbelt backend built in"
	}
	return c
}

func (a *app) printDetect(rep *DetectReport) {
	p := newPalette(a.color, a.stdout)
	sys := rep.OS + "/" + rep.Arch
	if rep.Distro != "" {
		sys += ", " + rep.Distro
	}
	if rep.Kernel != "" {
		sys += ", kernel " + rep.Kernel
	}
	user := fmt.Sprintf("uid %d", rep.UID)
	if rep.UID == 0 {
		user += " (root)"
	}
	fmt.Fprintf(a.stdout, "%s %s, %s\n\n", p.bold("host:"), sys, user)
	t := &table{wrap: wrapWidth}
	for _, c := range rep.Checks {
		t.add(cell{text: c.Name}, statusCell(p, c.Status), cell{text: c.Summary})
		if c.Reason != "" {
			t.add(cell{text: ""}, cell{text: ""}, cell{text: "why: " + c.Reason, paint: p.dim})
		}
		if c.Fix != "" {
			t.add(cell{text: ""}, cell{text: ""}, cell{text: "fix: " + c.Fix, paint: p.dim})
		}
	}
	_ = t.write(a.stdout, p)
	fmt.Fprintf(a.stdout, "\n%s\n", p.bold("backends:"))
	a.printAvailability(p, rep.Backends)
}

func (a *app) printAvailability(p palette, avs []*availability) {
	t := &table{wrap: wrapWidth}
	for _, av := range avs {
		switch {
		case av.Available && !av.Sandboxed:
			t.add(cell{text: av.Name}, cell{text: "available", paint: p.green}, cell{text: "no isolation: the unsandboxed reference"})
		case av.Available:
			note := ""
			if av.Capabilities != nil && len(av.Capabilities.Gaps) > 0 {
				note = fmt.Sprintf("%d declared gap(s)", len(av.Capabilities.Gaps))
			}
			t.add(cell{text: av.Name}, cell{text: "available", paint: p.green}, cell{text: note})
		default:
			t.add(cell{text: av.Name}, cell{text: "unavailable", paint: p.red}, cell{text: av.Reason})
			if av.Fix != "" {
				t.add(cell{text: ""}, cell{text: ""}, cell{text: "fix: " + av.Fix, paint: p.dim})
			}
		}
	}
	_ = t.write(a.stdout, p)
}

func statusCell(p palette, status string) cell {
	switch status {
	case statusOK:
		return cell{text: status, paint: p.green}
	case statusWarn:
		return cell{text: status, paint: p.yellow}
	case statusUnavailable:
		return cell{text: status, paint: p.red}
	default:
		return cell{text: status, paint: p.dim}
	}
}

// linuxOnly is the check of a Linux facility elsewhere.
func linuxOnly(name string) Check {
	return Check{Name: name, Status: statusNA, Summary: "Linux only"}
}
