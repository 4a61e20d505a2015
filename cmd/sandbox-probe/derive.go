package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/kubernetes"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/executor/seatbelt"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// renderers are the backends derive can render for, and the renderer
// each uses. Renderers are pure: every one works on every OS.
var renderers = []string{"landlock", "bwrap", "seatbelt", "docker", "kubernetes"}

type deriveOptions struct {
	pf         policyFlags
	backend    string
	cwd        string
	grants     []string
	abi        int
	hostSystem bool
	kubeImage  string
	kubeClaim  string
	// kubeCluster explains with the kubernetes executor of the
	// configured cluster.
	kubeCluster bool
	json        bool
}

func (a *app) deriveCommand() *cobra.Command {
	o := &deriveOptions{}
	cmd := &cobra.Command{
		Use:   "derive --backend B [--policy FILE] [--root DIR] [--json]",
		Short: "Show the OS profile derived from a policy, rendered for a backend, and its fidelity report",
		Long: `derive turns the policy into the backend-neutral profile of one command run
in --cwd (read, write and execute grants, masks, pinned directories, the
network) and renders it for the backend: the Landlock rules, the bwrap
arguments, the Seatbelt profile text with its parameters, or the OCI mounts
of the docker backend. Then the renderer's fidelity report: every element
exact, stricter (the backend forbids more, and what) or looser (it permits
something the policy forbids, and what to do).

The renderers are pure, so every backend can be rendered on every OS.
Where the backend's executor works on this host, derive shows the plan
that executor enforces instead (source: executor in --json): for landlock
(without --abi) its rules, seccomp filter and fidelity; for bwrap the
command line it runs; for docker with --host-system or --docker-image,
the mounts as the engine gets them, the network mode and the seccomp
profile. Elsewhere the bare renderer's output is shown (source: renderer);
a backend may close its looser elements by other means (the landlock
backend's seccomp filter closes UDP and other socket families).

--grant read:PATH or write:PATH (PATH alone means read) adds an approved
grant, as when the user approves an ask; relative paths are relative to
the root.

Exit status: 0 rendered; 2 usage or setup error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.derive(o)
		},
	}
	o.pf.add(cmd, true)
	o.pf.dryRun = true // judges and renders; runs nothing
	f := cmd.Flags()
	f.StringVar(&o.backend, "backend", "", "backend to render for: "+strings.Join(renderers, ", ")+" (required)")
	f.StringVar(&o.cwd, "cwd", "", "the command's working directory, relative to the root; default: the root")
	f.StringArrayVar(&o.grants, "grant", nil, "an approved grant, read:PATH or write:PATH (repeatable)")
	f.IntVar(&o.abi, "abi", 0, "Landlock ABI to render for; default: this kernel's (the newest known when it has none)")
	f.BoolVar(&o.hostSystem, "host-system", false, "docker: bind the host's System paths read-only (the backend's host mode, an empty image)")
	f.StringVar(&o.kubeImage, "kube-image", "IMAGE", "kubernetes: the session pod's image")
	f.StringVar(&o.kubeClaim, "kube-claim", "", "kubernetes: a PersistentVolumeClaim holding the root (default: hostPath volumes)")
	f.BoolVar(&o.kubeCluster, "kube-cluster", false, "kubernetes: ask the kubernetes executor connected to the configured cluster (KUBECONFIG) for the pod Run creates")
	f.BoolVar(&o.json, "json", false, "print the profile, the rendering and the fidelity report as JSON")
	return cmd
}

// DeriveReport is the output of derive (--json).
type DeriveReport struct {
	Backend string `json:"backend"`
	Policy  string `json:"policy"`
	Root    string `json:"root"`
	Home    string `json:"home"`
	Cwd     string `json:"cwd"`
	// Profile is policyderive's backend-neutral profile.
	Profile *policyderive.Profile `json:"profile"`
	// Exactly one rendering is set, per Backend.
	Landlock *LandlockRendering `json:"landlock,omitempty"`
	Bwrap    *BwrapRendering    `json:"bwrap,omitempty"`
	Seatbelt *SeatbeltRendering `json:"seatbelt,omitempty"`
	Docker   *DockerRendering   `json:"docker,omitempty"`
	// Kubernetes is the session pod and its NetworkPolicy.
	Kubernetes *KubernetesRendering `json:"kubernetes,omitempty"`
	// Fidelity is the renderer's report.
	Fidelity *policyderive.Fidelity `json:"fidelity"`
	// Strict is true when strict mode accepts the rendering as rendered:
	// no looser element that is neither inherent nor mitigated. Blocking
	// lists those elements.
	Strict   bool                   `json:"strict"`
	Blocking []policyderive.Element `json:"blocking"`
}

// LandlockRendering is one Landlock layer, with access rights by name.
type LandlockRendering struct {
	// Source is "executor" when the landlock executor of this host
	// assessed the profile — the rules and fidelity Run uses, protect
	// masks dropped, the private temporary directory granted, its
	// mitigations applied — and "renderer" for the bare renderer (another
	// ABI asked with --abi, or no Landlock here).
	Source string `json:"source"`
	// Filter names what the seccomp filter denies (executor only).
	Filter     []string          `json:"filter,omitempty"`
	ABI        int               `json:"abi"`
	HandledFS  []string          `json:"handled_fs"`
	HandledNet []string          `json:"handled_net"`
	Scoped     []string          `json:"scoped"`
	FS         []LandlockFSRule  `json:"fs"`
	Net        []LandlockNetRule `json:"net"`
}

// LandlockFSRule grants Access beneath (Dir) or on Path.
type LandlockFSRule struct {
	Path   string   `json:"path"`
	Access []string `json:"access"`
	Dir    bool     `json:"dir"`
	// PerProcess rules are added by the sandboxed process itself (/proc/self).
	PerProcess bool `json:"per_process,omitempty"`
}

// LandlockNetRule allows Access on one TCP port.
type LandlockNetRule struct {
	Port   uint16   `json:"port"`
	Access []string `json:"access"`
}

// BwrapRendering is the bwrap arguments (the backend appends the
// environment and `-- /bin/sh -c CMD`).
type BwrapRendering struct {
	// Source is "executor" when the bwrap executor of this host planned
	// the command line (Executor.Args: what Run executes, mount points
	// and placeholders included), "renderer" for the bare renderer (no
	// usable bwrap here).
	Source string   `json:"source"`
	Args   []string `json:"args"`
	// CommandLine is `bwrap ARGS -- /bin/sh -c CMD`, shell-quoted.
	CommandLine string `json:"command_line"`
}

// SeatbeltRendering is the SBPL profile and its parameters: the seatbelt
// executor's (Source "executor", on macOS with sandbox-exec: the profile
// with its private temporary directory) or the bare renderer's.
type SeatbeltRendering struct {
	Source  string `json:"source"`
	Profile string `json:"profile"`
	// Params are KEY=VALUE, each passed as -D KEY=VALUE.
	Params []string `json:"params"`
	// CommandLine is the sandbox-exec invocation, shell-quoted, with the
	// profile abbreviated as PROFILE.
	CommandLine string `json:"command_line"`
}

// DockerRendering is the container's plan: from the docker executor of
// this host (Source "executor": the mounts as the engine gets them, the
// network mode and the seccomp profile Run uses), or the bare renderer's
// mounts in the OCI runtime-spec form (Source "renderer": no engine here).
type DockerRendering struct {
	Source     string `json:"source"`
	HostSystem bool   `json:"host_system"`
	// Image is the image of image mode ("" in host mode).
	Image string `json:"image,omitempty"`
	// Mounts are the renderer's (Source "renderer").
	Mounts []specs.Mount `json:"mounts,omitempty"`
	// EngineMounts are the executor's, as sent to the engine.
	EngineMounts []DockerMount `json:"engine_mounts,omitempty"`
	Network      string        `json:"network,omitempty"`
	AllowList    bool          `json:"allow_list,omitempty"`
	Seccomp      string        `json:"seccomp,omitempty"`
}

// DockerMount is one mount of the container as the Docker Engine API gets
// it (mount.Mount, with snake_case names).
type DockerMount struct {
	Type                 string `json:"type"`
	Source               string `json:"source,omitempty"`
	Target               string `json:"target"`
	ReadOnly             bool   `json:"read_only,omitempty"`
	Propagation          string `json:"propagation,omitempty"`
	NonRecursive         bool   `json:"non_recursive,omitempty"`
	ReadOnlyNonRecursive bool   `json:"read_only_non_recursive,omitempty"`
	TmpfsSize            int64  `json:"tmpfs_size,omitempty"`
	TmpfsMode            string `json:"tmpfs_mode,omitempty"`
}

// explainKubernetes returns the kubernetes executor's Explain for the
// workspace, with the executor connected to the configured cluster
// (best effort, so that Blocking shows what strict mode refuses).
func explainKubernetes(ws *workspaceSpec, cwd string, grants []policy.Grant, image, claim string) (*policyderive.PodRendering, *policyderive.Fidelity, error) {
	x, err := kubernetes.New(kubernetes.Config{Image: image, Claim: claim, BestEffort: true})
	if err != nil {
		return nil, nil, err
	}
	defer x.Close()
	return x.Explain(context.Background(), &executor.Request{Command: "true", Root: ws.root, Home: ws.home, Dir: cwd, Policy: ws.policy, Grants: grants})
}

// KubernetesRendering is the kubernetes executor's session pod (as the
// Job's pod template holds it) and NetworkPolicy, also as YAML. Strict
// mode is decided by the sandbox layer inside the pod (the landlock
// rendering of the same profile), whose blocking elements Blocking
// lists; the pod layer's looser elements are closed there.
type KubernetesRendering struct {
	// Source is "executor" (--kube-cluster: the kubernetes executor's
	// Explain, the pod Run creates) or "renderer".
	Source        string                          `json:"source"`
	Pod           *corev1.PodSpec                 `json:"pod"`
	NetworkPolicy *networkingv1.NetworkPolicySpec `json:"network_policy,omitempty"`
	YAML          string                          `json:"yaml"`
}

// accessNames turns go-landlock's "{a,b}" set notation into a list.
func accessNames(s fmt.Stringer) []string {
	str := strings.Trim(s.String(), "{}")
	if str == "" || str == "∅" {
		return []string{}
	}
	return strings.Split(str, ",")
}

// parseGrant parses --grant read:PATH, write:PATH or PATH.
func parseGrant(ws *workspaceSpec, c *policy.Checker, s string) (policy.Grant, error) {
	op := policy.Read
	p := s
	if rest, ok := strings.CutPrefix(s, "read:"); ok {
		p = rest
	} else if rest, ok := strings.CutPrefix(s, "write:"); ok {
		op, p = policy.Write, rest
	}
	if p == "" {
		return policy.Grant{}, usageErrorf("--grant %q: no path", s)
	}
	abs, err := c.Resolve(ws.root, p)
	if err != nil {
		return policy.Grant{}, usageErrorf("--grant %q: %v", s, err)
	}
	return policy.Grant{Path: abs, Op: op}, nil
}

func (a *app) derive(o *deriveOptions) error {
	if o.backend == "" {
		return usageErrorf("derive: --backend is required (%s)", strings.Join(renderers, ", "))
	}
	backend := o.backend
	if backend == "oci" {
		backend = "docker"
	}
	known := false
	for _, r := range renderers {
		known = known || r == backend
	}
	if !known {
		if _, err := lookupBackend(backend); err == nil {
			return usageErrorf("derive: %s renders no profile: it enforces nothing (renderers: %s)", backend, strings.Join(renderers, ", "))
		}
		return usageErrorf("derive: unknown backend %q (renderers: %s)", o.backend, strings.Join(renderers, ", "))
	}
	if o.abi < 0 || o.abi > policyderive.LandlockMaxABI {
		return usageErrorf("--abi %d: want 1 to %d", o.abi, policyderive.LandlockMaxABI)
	}
	ws, err := o.pf.load()
	if err != nil {
		return err
	}
	ws.announceCaches(a.stderr)
	c, err := ws.checker()
	if err != nil {
		return err
	}
	var grants []policy.Grant
	for _, g := range o.grants {
		gr, err := parseGrant(ws, c, g)
		if err != nil {
			return err
		}
		grants = append(grants, gr)
	}
	cwd, err := ws.inRoot(c, o.cwd)
	if err != nil {
		return err
	}
	pr, err := policyderive.Derive(ws.policy, ws.root, ws.home, cwd, grants)
	if err != nil {
		return setupError(fmt.Errorf("derive: %w", err))
	}
	rep := &DeriveReport{Backend: backend, Policy: ws.source, Root: ws.root, Home: ws.home, Cwd: pr.Cwd, Profile: pr}
	switch backend {
	case "landlock":
		abi := o.abi
		if abi == 0 {
			abi = hostLandlockABI()
		}
		if abi == 0 {
			abi = policyderive.LandlockMaxABI
		}
		rs, fid, src := policyderive.Landlock(pr, abi), (*policyderive.Fidelity)(nil), "renderer"
		var filter []string
		if o.abi == 0 {
			if e := explainLandlock(ws, cwd, grants); e != nil {
				rs, fid, src, filter = e.Ruleset, e.Fidelity, "executor", e.Filter
			}
		}
		if fid == nil {
			fid = rs.Fidelity
		}
		lr := &LandlockRendering{Source: src, Filter: filter, ABI: rs.ABI, HandledFS: accessNames(rs.HandledFS), HandledNet: accessNames(rs.HandledNet),
			Scoped: accessNames(rs.Scoped), FS: []LandlockFSRule{}, Net: []LandlockNetRule{}}
		for _, r := range rs.FS {
			lr.FS = append(lr.FS, LandlockFSRule{Path: r.Path, Access: accessNames(r.Access), Dir: r.Dir, PerProcess: r.PerProcess})
		}
		for _, r := range rs.Net {
			lr.Net = append(lr.Net, LandlockNetRule{Port: r.Port, Access: accessNames(r.Access)})
		}
		rep.Landlock, rep.Fidelity = lr, fid
	case "bwrap":
		args, fid := policyderive.Bwrap(pr)
		src, bin := "renderer", "bwrap"
		if path, xargs, xfid := bwrapArgs(ws, cwd, grants); xargs != nil {
			src, bin, args, fid = "executor", path, xargs, xfid
		}
		line := append(append([]string{bin}, args...), "--", "/bin/sh", "-c", "CMD")
		rep.Bwrap, rep.Fidelity = &BwrapRendering{Source: src, Args: args, CommandLine: quoteArgs(line)}, fid
	case "seatbelt":
		text, params, fid := policyderive.SBPL(pr)
		src := "renderer"
		if argv, xfid := explainSeatbelt(ws, cwd, grants); argv != nil {
			src, text, params, fid = "executor", argv[2], nil, xfid
			for i := 3; i+1 < len(argv) && argv[i] == "-D"; i += 2 {
				params = append(params, argv[i+1])
			}
		}
		line := []string{sandboxExecPath, "-p", "PROFILE"}
		for _, kv := range params {
			line = append(line, "-D", kv)
		}
		line = append(line, "/bin/sh", "-c", "CMD")
		rep.Seatbelt, rep.Fidelity = &SeatbeltRendering{Source: src, Profile: text, Params: params, CommandLine: quoteArgs(line)}, fid
	case "docker":
		if dr, fid := explainDocker(ws, cwd, grants, o.hostSystem, a.dockerImage); dr != nil {
			rep.Docker, rep.Fidelity = dr, fid
			break
		}
		ms, fid := policyderive.OCIMounts(pr, policyderive.OCIOptions{HostSystem: o.hostSystem})
		if ms == nil {
			ms = []specs.Mount{}
		}
		rep.Docker, rep.Fidelity = &DockerRendering{Source: "renderer", HostSystem: o.hostSystem, Mounts: ms}, fid
	case "kubernetes":
		labels := map[string]string{kubernetes.LabelSession: kubernetes.SessionShown}
		src := "renderer"
		r, fid := policyderive.PodSpec(policyderive.ImageProfile(pr, ws.policy),
			kubernetes.PodOptions(kubernetes.Config{Image: o.kubeImage, Claim: o.kubeClaim}, int64(os.Getuid()), int64(os.Getgid()), labels))
		if o.kubeCluster {
			xr, xfid, err := explainKubernetes(ws, cwd, grants, o.kubeImage, o.kubeClaim)
			if err != nil {
				return setupError(fmt.Errorf("derive: --kube-cluster: %w", err))
			}
			src, r, fid = "executor", xr, xfid
		}
		y, err := r.YAML(kubernetes.SessionShown, "", labels)
		if err != nil {
			return setupError(fmt.Errorf("derive: %w", err))
		}
		rep.Kubernetes, rep.Fidelity = &KubernetesRendering{Source: src, Pod: &r.Pod, NetworkPolicy: r.NetworkPolicy, YAML: string(y)}, fid
	}
	rep.Blocking = rep.Fidelity.Blocking()
	if rep.Kubernetes != nil {
		// Strict mode is the sandbox layer's: the landlock executor's
		// assessment where this host has Landlock (a node like it),
		// else the bare renderer's.
		if e := explainLandlock(ws, cwd, grants); e != nil {
			rep.Blocking = e.Fidelity.Blocking()
		} else {
			rep.Blocking = policyderive.Landlock(pr, policyderive.LandlockMaxABI).Fidelity.Blocking()
		}
	}
	if rep.Blocking == nil {
		rep.Blocking = []policyderive.Element{}
	}
	rep.Strict = len(rep.Blocking) == 0
	if o.json {
		return writeJSON(a.stdout, rep)
	}
	a.printDerive(rep)
	return nil
}

// explainLandlock returns what the landlock executor of this host would
// enforce for a command in cwd, or nil where there is none (not Linux,
// no Landlock).
func explainLandlock(ws *workspaceSpec, cwd string, grants []policy.Grant) *landlock.Explanation {
	x, err := landlock.New(landlock.Config{})
	if err != nil || x.ABI() == 0 {
		return nil
	}
	defer x.Close()
	e, err := x.Explain(context.Background(), &executor.Request{Command: "true", Root: ws.root, Home: ws.home, Dir: cwd, Policy: ws.policy, Grants: grants})
	if err != nil {
		return nil
	}
	return e
}

// explainSeatbelt returns the command line the seatbelt executor of this
// host would run a command in cwd with (sandbox-exec -p PROFILE -D ...)
// and that plan's fidelity (Executor.Explain), or nil where there is no
// sandbox-exec (every OS but macOS).
func explainSeatbelt(ws *workspaceSpec, cwd string, grants []policy.Grant) ([]string, *policyderive.Fidelity) {
	x, err := seatbelt.New(seatbelt.Config{BestEffort: true})
	if err != nil {
		return nil, nil
	}
	defer x.Close()
	argv, fid, err := x.Explain(context.Background(), &executor.Request{Command: "CMD", Root: ws.root, Home: ws.home, Dir: cwd, Policy: ws.policy, Grants: grants})
	if err != nil || len(argv) < 3 || argv[1] != "-p" {
		return nil, nil
	}
	return argv, fid
}

// bwrapArgs returns the bwrap binary, the options the bwrap executor of
// this host would run a command in cwd with and the fidelity of that
// plan (Executor.Explain, planned in best effort so that a profile strict
// mode refuses is still shown), or nil where there is no usable bwrap.
func bwrapArgs(ws *workspaceSpec, cwd string, grants []policy.Grant) (string, []string, *policyderive.Fidelity) {
	x, err := bwrap.New(bwrap.Config{BestEffort: true})
	if err != nil {
		return "", nil, nil
	}
	defer x.Close()
	argv, fid, err := x.Explain(context.Background(), &executor.Request{Command: "CMD", Root: ws.root, Home: ws.home, Dir: cwd, Policy: ws.policy, Grants: grants})
	if err != nil || len(argv) < 5 || argv[len(argv)-4] != "--" {
		return "", nil, nil
	}
	return argv[0], argv[1 : len(argv)-4], fid
}

// quoteArgs renders argv as a shell command line, each word quoted by
// executor.ShellQuote: valid shell for every argument (an argument cannot
// hold a NUL byte; one that did would be shown as <NUL>, not as a word).
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, s := range args {
		q, ok := executor.ShellQuote(s)
		if !ok {
			q = "<NUL>"
		}
		out[i] = q
	}
	return strings.Join(out, " ")
}

func (a *app) printDerive(rep *DeriveReport) {
	p := newPalette(a.color, a.stdout)
	w := a.stdout
	pr := rep.Profile
	fmt.Fprintf(w, "%s %s\n", p.bold("policy:"), rep.Policy)
	t := &table{}
	t.addText("  root:", rep.Root)
	home := rep.Home
	if home == "" {
		home = "(unknown)"
	}
	t.addText("  home:", home)
	t.addText("  cwd:", rep.Cwd)
	t.addText("  network:", pr.Network.String())
	_ = t.write(w, p)

	fmt.Fprintf(w, "\n%s\n", p.bold("profile:"))
	pt := &table{}
	for _, g := range pr.Read {
		pt.addText("  read", accessPath(g), g.Source)
	}
	for _, g := range pr.Write {
		pt.addText("  write", accessPath(g), g.Source)
	}
	for _, m := range pr.Masks {
		what := m.Reason
		if m.Rule != "" {
			what += ": " + m.Rule
		}
		if !m.Exists {
			what += " (placeholder"
			if m.For != "" {
				what += " for " + m.For
			}
			what += ")"
		}
		pt.addText("  mask "+m.Kind.String(), m.Path, what)
	}
	for _, d := range pr.Pinned {
		pt.addText("  pinned", d, "must not be renamed or removed")
	}
	for _, u := range pr.Unsearched {
		pt.addText("  unsearched", u.Grant, u.Rule+" "+u.Pattern)
	}
	_ = pt.write(w, p)

	fmt.Fprintf(w, "\n%s\n", p.bold("rendering ("+rep.Backend+"):"))
	switch {
	case rep.Landlock != nil:
		l := rep.Landlock
		if l.Source == "executor" {
			fmt.Fprintf(w, "  as Run enforces it on this host (the landlock executor's assessment); seccomp denies: %s\n", cmp.Or(strings.Join(l.Filter, "; "), "nothing"))
		} else {
			fmt.Fprintf(w, "  the bare renderer's rules (Run adds its temporary directory, drops protect masks unless KernelProtect and applies its mitigations)\n")
		}
		fmt.Fprintf(w, "  ABI %d; handled fs: %s\n", l.ABI, strings.Join(l.HandledFS, ","))
		fmt.Fprintf(w, "  handled net: %s; scoped: %s\n", orNone(l.HandledNet), orNone(l.Scoped))
		lt := &table{}
		for _, r := range l.FS {
			kind := "file"
			if r.Dir {
				kind = "dir"
			}
			if r.PerProcess {
				kind += ", per process"
			}
			lt.addText("  "+r.Path, kind, strings.Join(r.Access, ","))
		}
		for _, r := range l.Net {
			lt.addText(fmt.Sprintf("  tcp port %d", r.Port), "", strings.Join(r.Access, ","))
		}
		_ = lt.write(w, p)
	case rep.Bwrap != nil:
		fmt.Fprint(w, bwrapLines(rep.Bwrap.Args))
	case rep.Seatbelt != nil:
		for _, line := range strings.Split(strings.TrimRight(rep.Seatbelt.Profile, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
		fmt.Fprintf(w, "\n%s\n", p.bold("parameters (-D):"))
		for _, kv := range rep.Seatbelt.Params {
			fmt.Fprintf(w, "  %s\n", kv)
		}
	case rep.Kubernetes != nil:
		for _, line := range strings.Split(strings.TrimRight(rep.Kubernetes.YAML, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	case rep.Docker != nil:
		d, mt := rep.Docker, &table{}
		if d.Source == "executor" {
			fmt.Fprintf(w, "  as Run enforces it on this host (the docker executor's plan, %s); network %s", cmp.Or(d.Image, "host mode"), d.Network)
			if d.AllowList {
				fmt.Fprint(w, ", with the allow-list proxy inside the container's network namespace")
			}
			fmt.Fprintf(w, "\n  seccomp: %s\n", cmp.Or(d.Seccomp, "the engine's default profile"))
			for _, m := range d.EngineMounts {
				var opts []string
				if m.ReadOnly {
					opts = append(opts, "ro")
				}
				for _, o := range []struct {
					on   bool
					text string
				}{{m.Propagation != "", m.Propagation}, {m.NonRecursive, "non-recursive"}, {m.ReadOnlyNonRecursive, "ro-non-recursive"},
					{m.TmpfsSize != 0, fmt.Sprintf("size=%d", m.TmpfsSize)}, {m.TmpfsMode != "", "mode=" + m.TmpfsMode}} {
					if o.on {
						opts = append(opts, o.text)
					}
				}
				mt.addText("  "+m.Target, m.Type, m.Source, strings.Join(opts, ","))
			}
		} else {
			fmt.Fprintf(w, "  the bare renderer's mounts (no docker engine here, or neither --host-system nor --docker-image: Run adds the image's system paths, hides the engine and applies its mitigations)\n")
			for _, m := range d.Mounts {
				mt.addText("  "+m.Destination, m.Type, m.Source, strings.Join(m.Options, ","))
			}
		}
		_ = mt.write(w, p)
	}

	f := rep.Fidelity
	counts := map[policyderive.Class]int{}
	for _, e := range f.Elements {
		counts[e.Class]++
	}
	fmt.Fprintf(w, "\n%s %d exact, %d stricter, %d looser\n", p.bold("fidelity:"), counts[policyderive.Exact], counts[policyderive.Stricter], counts[policyderive.Looser])
	ft := &table{wrap: wrapWidth}
	for _, e := range f.Elements {
		c := cell{text: e.Class.String()}
		switch e.Class {
		case policyderive.Exact:
			c.paint = p.green
		case policyderive.Stricter:
			c.paint = p.yellow
		case policyderive.Looser:
			c.paint = p.red
			if e.Mitigated != "" || e.Inherent {
				c.paint = p.yellow
			}
		}
		detail := strings.TrimPrefix(e.String(), e.Class.String()+" ")
		ft.add(cell{text: " "}, c, cell{text: detail})
	}
	_ = ft.write(w, p)
	if rep.Strict {
		fmt.Fprintf(w, "\n%s strict mode accepts this rendering\n", p.green("strict:"))
	} else {
		fmt.Fprintf(w, "\n%s strict mode refuses this rendering (%d looser element(s) neither inherent nor mitigated by the renderer; the backend may still close some)\n",
			p.red("strict:"), len(rep.Blocking))
	}
}

func accessPath(g policyderive.Access) string {
	s := g.Path
	if g.Dir {
		s += "/"
	}
	if !g.Exists {
		s += " (missing)"
	}
	return s
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// bwrapLines prints bwrap arguments one option (with its values) per line.
func bwrapLines(args []string) string {
	var b strings.Builder
	b.WriteString("  bwrap")
	for _, s := range args {
		if strings.HasPrefix(s, "--") {
			b.WriteString(" \\\n    ")
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(quoteArgs([]string{s}))
	}
	b.WriteString(" \\\n    -- /bin/sh -c CMD\n")
	return b.String()
}
