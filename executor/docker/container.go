package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/internal/netns"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// spec is the container one derived profile needs: its mounts and
// network mode, identified by key, with the fidelity assessment and the
// trees the protected-path guard watches.
type spec struct {
	key     string
	mounts  []mount.Mount
	network string
	// placeholders are the masks whose mount points the runtime creates
	// on the host (Profile.MountPoints).
	placeholders []policyderive.Mask
	// vanished lists mounts whose source, or destination inside a host
	// bind, does not exist now: the runtime would fail or create it.
	vanished []int

	fidelity   *policyderive.Fidelity
	blocking   []executor.Gap
	looser     []policyderive.Element
	guardTrees []string
	// allowList: commands get a proxy listener inside the container's
	// network namespace (policy.NetworkAllowList).
	allowList bool
	// noUnix: the container's seccomp profile refuses socket(AF_UNIX)
	// (the policy names no socket; see seccompProfile).
	noUnix bool
}

// box is one container of the executor.
type box struct {
	id, name string
	spec     *spec
	// active counts the commands and background processes running in
	// it; retired boxes are removed when it drops to 0.
	active  int
	retired bool
	// broken is set when the container cannot be trusted to run more
	// commands (a kill failed, the engine lost it).
	broken bool
	// ctlDir is the host directory of the command runner ("" without
	// one); run the runner, nil when commands run as execs of their own.
	ctlDir string
	run    *runner
	rmu    sync.Mutex // serialises runner starts
	starts int        // runner starts so far (under rmu)
	// netns is the container's network namespace, opened by the first
	// allow-list command (under nsMu).
	nsMu  sync.Mutex
	netns *netns.Namespace
	// init is the container's init as this host sees it (under nsMu;
	// zero until the first sweep).
	init initProc
	// runnerPids are the host pids of the command runners started in it
	// (under Executor.mu): their sessions hold the runners' supervisors.
	runnerPids []int
	// The runner's requests (see sweep): inflight holds the control
	// FIFO of each request sent and not yet over, starting counts those
	// whose supervisor has not reported yet; smu guards both and is held
	// by a sweep throughout, so no request starts during one; idle is
	// signalled when starting drops to 0.
	smu      sync.Mutex
	idle     *sync.Cond
	inflight map[devIno]bool
	starting int
}

// devIno names a file.
type devIno struct{ dev, ino uint64 }

// specFor renders pr as a container spec.
func (x *Executor) specFor(pr *policyderive.Profile, p *policy.Policy) (*spec, error) {
	rendered := pr
	if !x.host {
		rendered = policyderive.ImageProfile(pr, p)
	}
	ms, fid := policyderive.OCIMounts(rendered, policyderive.OCIOptions{HostSystem: x.host})
	ms = x.hostTop(rendered, ms, fid)
	ms = x.hideEngine(ms, fid)
	dms, err := policyderive.DockerMounts(ms)
	if err != nil {
		return nil, fmt.Errorf("docker executor: %w", err)
	}
	for i, m := range dms {
		// The engine refuses private propagation for a bind that holds
		// its data root (its containers' mounts would be pinned there);
		// aroundDataRoot left only binds whose host mount propagates.
		if m.Type == mount.TypeBind && x.eng.rootDir != "" && abspath.Within(x.eng.rootDir, m.Source) {
			bo := *m.BindOptions
			bo.Propagation = mount.PropagationRSlave
			dms[i].BindOptions = &bo
		}
	}
	sp := &spec{mounts: dms, network: "none", fidelity: fid, noUnix: len(pr.Sockets) == 0 && x.seccompNoUnix != ""}
	if pr.Network == policy.NetworkFull {
		sp.network = x.cfg.fullNetwork()
	}
	placeholders := map[string]policyderive.Mask{}
	for _, m := range pr.Placeholders() {
		placeholders[m.Path] = m
	}
	// last maps each target to the index of its last mount so far; the
	// enclosing mount of a target is the last of those at its ancestors
	// (the one mounted over the others), found by looking each ancestor
	// up rather than by scanning every mount (thousands of masks in a
	// node_modules of certificates).
	last := map[string]int{}
	for i, m := range dms {
		encl := -1
		for a := m.Target; a != "/"; {
			a = abspath.Parent(a)
			if j, ok := last[a]; ok && j > encl {
				encl = j
			}
		}
		last[m.Target] = i
		if ph, ok := placeholders[m.Target]; ok && m.Type == mount.TypeTmpfs {
			sp.placeholders = append(sp.placeholders, ph)
			continue
		}
		if x.eng.remote() {
			continue // the sources are the engine host's paths
		}
		if m.Type == mount.TypeBind {
			if _, err := os.Lstat(m.Source); err != nil {
				sp.vanished = append(sp.vanished, i)
				continue
			}
		}
		if encl >= 0 && dms[encl].Type == mount.TypeBind {
			if _, err := os.Lstat(m.Target); errors.Is(err, fs.ErrNotExist) {
				sp.vanished = append(sp.vanished, i)
			}
		}
	}
	sp.key = mountKey(sp.mounts, sp.network, sp.noUnix)
	x.assess(sp, pr)
	return sp, nil
}

// withoutVanished returns sp without its vanished mounts (a path that
// disappeared twice between derivation and container creation).
func (x *Executor) withoutVanished(sp *spec, pr *policyderive.Profile) *spec {
	q := *sp
	q.mounts = nil
	for i, m := range sp.mounts {
		if slices.Contains(sp.vanished, i) {
			x.log.Debug("docker: leaving out a mount whose path does not exist", "target", m.Target, "source", m.Source)
			continue
		}
		q.mounts = append(q.mounts, m)
	}
	q.vanished = nil
	q.key = mountKey(q.mounts, q.network, q.noUnix)
	return &q
}

// mountKey is a digest of everything a container's mounts, network and
// seccomp profile are made of: equal keys, the same container.
func mountKey(ms []mount.Mount, network string, noUnix bool) string {
	b, _ := json.Marshal(struct {
		Mounts  []mount.Mount
		Network string
		NoUnix  bool
	}{ms, network, noUnix})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// hostTop adds, for a read grant of "/" (trusted mode), a bind of each
// of the host's top-level directories and files at its path, read-only
// (read-write for a write grant of "/"), as policyderive.HostTops lists
// them (in image mode without the image's system directories).
func (x *Executor) hostTop(pr *policyderive.Profile, ms []specs.Mount, fid *policyderive.Fidelity) []specs.Mount {
	tops, writable := policyderive.HostTops(pr, !x.host, func(p string) bool {
		return slices.ContainsFunc(ms, func(m specs.Mount) bool { return abspath.Within(p, m.Destination) })
	})
	mode := "ro"
	if writable {
		mode = "rw"
	}
	var added []string
	for _, top := range tops {
		ms = append(ms, specs.Mount{Destination: top.Path, Type: "bind", Source: top.Path, Options: []string{"rbind", mode, "rprivate", "nosuid", "nodev"}})
		added = append(added, top.Path)
	}
	slices.SortStableFunc(ms, func(a, b specs.Mount) int { return abspath.Depth(a.Destination) - abspath.Depth(b.Destination) })
	for _, e := range fid.Keyed(policyderive.FeatureHostRoot) {
		what := "the host's top-level entries except /proc, /dev, /sys, /tmp, /run and symbolic links"
		if !x.host {
			what += ", and the image's own system directories"
		}
		e.Detail = what + " are bound at their paths (" + strings.Join(added, ", ") + ")"
		e.Reason = "a container cannot bind the host's / over its own root"
	}
	return ms
}

// engineSockets returns the local Unix sockets through which a command
// could drive a container engine: the engine the executor talks to and
// the usual Docker and containerd sockets.
func (x *Executor) engineSockets() []string {
	var out []string
	for _, p := range []string{x.eng.socket, "/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock"} {
		if p == "" {
			continue
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode()&fs.ModeSocket != 0 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// hideEngine never lets an engine socket into the container: a bind of
// the socket itself is dropped, and where a bind's tree holds one,
// /dev/null is bound read-only over it (a read-only mount does not stop
// connect(2)). This holds whatever the policy grants, the workspace root
// included: whoever reaches the engine controls the host. The engine's
// data root (its containers' file systems and configurations) is hidden
// the same way, by an empty read-only tmpfs.
func (x *Executor) hideEngine(ms []specs.Mount, fid *policyderive.Fidelity) []specs.Mount {
	if r := x.eng.rootDir; r != "" && r != "." && r != "/" {
		ms = x.aroundDataRoot(ms, r, fid)
	}
	socks := x.engineSockets()
	if len(socks) == 0 {
		slices.SortStableFunc(ms, func(a, b specs.Mount) int { return abspath.Depth(a.Destination) - abspath.Depth(b.Destination) })
		return ms
	}
	out := ms[:0]
	for _, m := range ms {
		if m.Type == "bind" && slices.Contains(socks, m.Source) {
			fid.Elements = append(fid.Elements, policyderive.Element{Class: policyderive.Stricter, Subject: "mount " + m.Destination,
				Control: executor.ControlNetUnix, Detail: "not mounted: it is a container engine's socket", Reason: "whoever reaches the engine controls the host"})
			continue
		}
		out = append(out, m)
	}
	ms = out
	for _, s := range socks {
		for _, m := range slices.Clone(ms) {
			if m.Type != "bind" || !abspath.Within(s, m.Source) {
				continue
			}
			dst := m.Destination + strings.TrimPrefix(s, m.Source)
			if m.Source == "/" {
				dst = s
			}
			if slices.ContainsFunc(ms, func(o specs.Mount) bool { return o.Destination == dst }) {
				continue
			}
			ms = append(ms, specs.Mount{Destination: dst, Type: "bind", Source: "/dev/null", Options: []string{"rbind", "ro", "rprivate", "nosuid", "nodev"}})
			fid.Elements = append(fid.Elements, policyderive.Element{Class: policyderive.Exact, Subject: "mask " + dst, Control: executor.ControlNetUnix,
				Detail: "a container engine's socket, hidden (/dev/null bound over it) whatever the policy grants"})
		}
	}
	slices.SortStableFunc(ms, func(a, b specs.Mount) int { return abspath.Depth(a.Destination) - abspath.Depth(b.Destination) })
	return ms
}

// sweepGap says why what leaves a command's tree is not killed.
func sweepGap(sweeps bool) string {
	if sweeps {
		return "the engine has no seccomp support: a command could trace the container's init or the command runner and run code there, out of reach of the sweep"
	}
	return "the engine is not on this host's kernel: its container's processes are not in this host's /proc, so the executor cannot find or kill what left a command's tree (it kills the exec's own tree, by parent, process group and session links, from inside)"
}

// assess turns the fidelity report into gaps, with what the executor
// itself contributes.
func (x *Executor) assess(sp *spec, pr *policyderive.Profile) {
	fid := sp.fidelity
	add := func(e policyderive.Element) { fid.Elements = append(fid.Elements, e) }
	add(policyderive.Element{Class: policyderive.Exact, Subject: "signals", Control: executor.ControlSignal,
		Detail: "the container's own PID namespace: no host process can be signalled"})
	add(policyderive.Element{Class: policyderive.Exact, Subject: "proc", Control: executor.ControlProcInfo,
		Detail: "the container's own /proc: host processes are not listed (the session's other commands are)"})
	if x.sweeps && x.seccomp != "" {
		add(policyderive.Element{Class: policyderive.Exact, Subject: "process tree", Control: executor.ControlProcessTree,
			Detail: "before and after every command (before the guard's last scan) the executor kills, from the host, every process in the session's container that left a command's tree (a child of the container's init other than init's idle sleep and the supervisors of requests under way, known by the control FIFO they hold) with its descendants, stopped in rounds and pinned by pidfds; the container's processes cannot trace one another or write their memory (ptrace refused by seccomp, /proc read-only)"})
	} else {
		add(policyderive.Element{Class: policyderive.Looser, Subject: "process tree", Control: executor.ControlProcessTree, Inherent: true,
			Detail: "a process that left the command's tree before it was killed (a double fork whose parent already exited) keeps running in the session's container until the container is removed (Close, or a change of mounts)",
			Reason: sweepGap(x.sweeps)})
	}
	if sp.noUnix {
		backend.UnixSocketsRefused(fid, "the container's seccomp profile", "32-bit programs that reach sockets through socketcall(2) (the multiplexer a filter cannot read) get EPERM")
	}
	if sp.network == "none" {
		add(policyderive.Element{Class: policyderive.Exact, Subject: "network", Control: executor.ControlNetTCP,
			Detail: "network mode none: a network namespace with only its own loopback (no TCP, UDP or abstract Unix sockets of the host)"})
	} else {
		add(policyderive.Element{Class: policyderive.Exact, Subject: "network", Control: executor.ControlNetTCP,
			Detail: "network mode " + sp.network + " (the policy grants full network access)"})
	}
	if slices.ContainsFunc(pr.Rules, func(r policyderive.Rule) bool { return r.List == "protect" }) {
		add(policyderive.Element{Class: policyderive.Exact, Subject: "protected paths", Control: executor.ControlProtect,
			Detail: "existing protected paths are bound read-only (directories as directories, their parents pinned); protected paths created during the command are removed or restored after it by the protected-path guard"})
	}
	sp.looser = fid.Looser()
	sp.blocking = backend.Gaps(fid.Blocking())
	if pr.Network == policy.NetworkAllowList {
		// The container has network mode none; the executor's proxy listens
		// inside its network namespace, which the host enters by the
		// container's pid: a local engine, and CAP_SYS_ADMIN here.
		switch why := x.allowListWhy(); {
		case why != nil:
			// best effort runs with no network
			sp.blocking = append(sp.blocking, backend.AllowListNoNamespace(why))
		default:
			sp.allowList = true
			add(policyderive.Element{Class: policyderive.Exact, Subject: "network allow-list", Control: executor.ControlNetAllowList,
				Detail: "network mode none; the executor's proxy listens inside the container's network namespace (a port of each command's own) and decides every connection: nothing else is reachable"})
		}
	}
	sp.guardTrees = backend.WritableTrees(pr)
}

// create makes and starts the container of sp.
func (x *Executor) create(ctx context.Context, sp *spec) (*box, error) {
	x.mu.Lock()
	x.seq++
	name := fmt.Sprintf("cordon-%s-%d", x.id, x.seq)
	x.mu.Unlock()
	labels := x.owner.labels()
	labels[LabelExecutor] = x.id
	labels[labelKey] = sp.key
	var mps []string
	for _, m := range sp.placeholders {
		mps = append(mps, m.Path)
	}
	if b, err := json.Marshal(mps); err == nil && len(mps) > 0 {
		labels[labelMountPoints] = string(b)
	}
	cfg := &container.Config{
		Image:       x.image,
		User:        x.user,
		Entrypoint:  []string{executor.Shell, "-c", pid1Script},
		Hostname:    "cordon",
		WorkingDir:  "/",
		Labels:      labels,
		Healthcheck: &container.HealthConfig{Test: []string{"NONE"}},
	}
	pids := x.cfg.pids()
	hc := &container.HostConfig{
		NetworkMode:    container.NetworkMode(sp.network),
		Mounts:         sp.mounts,
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    x.securityOpt(sp),
		IpcMode:        container.IPCModePrivate,
		// /proc read-only as a whole (the engine's default makes only
		// a few of its trees so): /proc/PID/mem is the one way into
		// another process's memory that seccomp cannot refuse (see
		// tracing), and writing it needs a writable mount.
		ReadonlyPaths: []string{"/proc"},
		LogConfig:     container.LogConfig{Type: "none"},
		Resources: container.Resources{
			Memory:     x.cfg.memory(),
			MemorySwap: x.cfg.memory(),
			PidsLimit:  &pids,
		},
	}
	if hc.Resources.Memory == 0 {
		hc.Resources.MemorySwap = 0
	}
	b := &box{name: name, spec: sp, inflight: map[devIno]bool{}}
	b.idle = sync.NewCond(&b.smu)
	if x.fast {
		if d, err := controlDir(); err == nil {
			b.ctlDir = d
			labels[labelControl] = d
			hc.Mounts = append(slices.Clip(hc.Mounts), controlMount(d))
		} else {
			x.log.Debug("docker: no command runner", "err", err)
		}
	}
	backend.Default.Lock()
	backend.Default.Acquire(sp.placeholders)
	backend.Default.Unlock()
	resp, err := x.cli.ContainerCreate(ctx, cfg, hc, nil, nil, name)
	if err != nil {
		x.remove(b)
		return nil, &SetupError{Stage: "create", Message: "creating the container", Err: err}
	}
	b.id = resp.ID
	if err := x.cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		x.remove(b)
		return nil, &SetupError{Stage: "start", Container: resp.ID, Message: "starting the container", Err: err}
	}
	if b.ctlDir != "" {
		b.rmu.Lock()
		b.run = x.startRunner(ctx, b)
		b.rmu.Unlock()
	}
	x.log.Debug("docker: container started", "id", shortID(resp.ID), "name", name, "mounts", len(sp.mounts), "network", sp.network, "runner", b.run != nil)
	return b, nil
}

// securityOpt returns the security options of sp's container.
func (x *Executor) securityOpt(sp *spec) []string {
	opts := []string{"no-new-privileges"}
	switch {
	case sp.noUnix:
		opts = append(opts, "seccomp="+x.seccompNoUnix)
	case x.seccomp != "":
		opts = append(opts, "seccomp="+x.seccomp)
	}
	return opts
}

// remove removes a container (and its anonymous volumes) and releases
// its placeholder mount points.
func (x *Executor) remove(b *box) {
	x.mu.Lock()
	r := b.run
	b.run = nil
	x.mu.Unlock()
	r.close()
	if b.id != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := x.cli.ContainerRemove(ctx, b.id, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
			x.log.Warn("docker: removing a container", "id", shortID(b.id), "err", err)
		}
	}
	b.nsMu.Lock()
	if b.netns != nil {
		b.netns.Close()
		b.netns = nil
	}
	b.nsMu.Unlock()
	for _, s := range backend.Default.Release(b.spec.placeholders) {
		x.log.Warn("docker: placeholder mount point not removed", "path", s)
	}
	if b.ctlDir != "" {
		if err := os.RemoveAll(b.ctlDir); err != nil {
			x.log.Warn("docker: removing the command runner's directory", "path", b.ctlDir, "err", err)
		}
	}
}

// acquire returns a running container for sp, creating it (and retiring
// the previous one) when the current container's mounts differ.
func (x *Executor) acquire(ctx context.Context, sp *spec) (*box, error) {
	x.createMu.Lock()
	defer x.createMu.Unlock()
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil, ErrClosed
	}
	if b := x.cur; b != nil && b.spec.key == sp.key && !b.broken {
		b.active++
		x.mu.Unlock()
		return b, nil
	}
	x.mu.Unlock()
	nb, err := x.create(ctx, sp)
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		x.remove(nb)
		return nil, ErrClosed
	}
	old := x.cur
	x.cur = nb
	nb.active = 1
	x.live[nb] = true
	var drop *box
	if old != nil {
		old.retired = true
		if old.active == 0 && x.live[old] {
			delete(x.live, old)
			drop = old
		}
	}
	x.mu.Unlock()
	if drop != nil {
		x.removeAsync(drop)
	}
	return nb, nil
}

// release ends one command's use of b.
func (x *Executor) release(b *box) {
	x.mu.Lock()
	b.active--
	drop := (b.retired || b.broken) && b.active <= 0 && x.live[b]
	if drop {
		delete(x.live, b)
	}
	x.mu.Unlock()
	if drop {
		x.removeAsync(b)
	}
}

func (x *Executor) removeAsync(b *box) {
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		x.remove(b)
	}()
}

// breakBox marks b as unusable for further commands and kills it; it
// returns a note for Result.Violations.
func (x *Executor) breakBox(b *box, why string) string {
	x.mu.Lock()
	already := b.broken
	b.broken = true
	if x.cur == b {
		x.cur = nil
	}
	x.mu.Unlock()
	if !already {
		x.log.Warn("docker: killing the session's container", "id", shortID(b.id), "why", why)
		ctx, cancel := context.WithTimeout(context.Background(), killWait)
		defer cancel()
		if err := x.cli.ContainerKill(ctx, b.id, "KILL"); err != nil && !cerrdefs.IsNotFound(err) {
			x.log.Warn("docker: killing the container", "id", shortID(b.id), "err", err)
		}
	}
	return "the session's container " + shortID(b.id) + " was killed: " + why
}

// maxSplit bounds the binds one split around the engine's data root may
// make; a bind needing more is left out.
const maxSplit = 4096

// aroundDataRoot keeps the engine's data root out of every bind. The
// engine refuses a private bind whose tree holds its data root: where
// the host's mount there propagates (shared or slave, as on systemd
// hosts), the bind is made rslave and the data root hidden by an empty
// read-only tmpfs; elsewhere the bind is rebuilt from binds of its
// entries, recursively around the data root, which stays out (stricter:
// nothing can be created directly in the rebuilt directories, and their
// symbolic links and special files are left out).
func (x *Executor) aroundDataRoot(ms []specs.Mount, r string, fid *policyderive.Fidelity) []specs.Mount {
	at := func(dst string) bool {
		return slices.ContainsFunc(ms, func(o specs.Mount) bool { return o.Destination == dst })
	}
	for {
		i := slices.IndexFunc(ms, func(m specs.Mount) bool { return m.Type == "bind" && abspath.Below(r, m.Source) })
		if i < 0 {
			return ms
		}
		m := ms[i]
		ms = slices.Delete(ms, i, i+1)
		dst := m.Destination + strings.TrimPrefix(r, m.Source)
		if m.Source == "/" {
			dst = r
		}
		if x.eng.remote() || hostPropagates(m.Source) {
			ms = append(ms, m) // made rslave by specFor
			if !at(dst) {
				ms = append(ms, specs.Mount{Destination: dst, Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=0555", "size=1m"}})
			}
			fid.Elements = append(fid.Elements, policyderive.Element{Class: policyderive.Stricter, Subject: "mask " + dst, Control: executor.ControlFSRead,
				Detail: "the engine's data root, hidden (an empty read-only tmpfs) whatever the policy grants; " + m.Destination + " is bound rslave (mounts made below it on the host later appear inside)",
				Reason: "it holds the engine's containers and their configurations, and the engine refuses a private bind around it"})
			continue
		}
		var split []string
		var skipped int
		var add []specs.Mount
		var walk func(src, dst string) bool
		walk = func(src, dst string) bool {
			split = append(split, dst)
			ents, err := os.ReadDir(src)
			if err != nil {
				return false
			}
			for _, e := range ents {
				s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
				switch {
				case s == r:
					continue
				case abspath.Below(r, s):
					if !at(d) && !walk(s, d) {
						return false
					}
					continue
				case at(d):
					continue // a mount of its own takes over there
				case e.Type()&fs.ModeSymlink != 0 || !(e.IsDir() || e.Type().IsRegular()):
					skipped++
					continue
				}
				if len(add) >= maxSplit {
					return false
				}
				add = append(add, specs.Mount{Destination: d, Type: "bind", Source: s, Options: slices.Clone(m.Options)})
			}
			return true
		}
		if !walk(m.Source, m.Destination) {
			fid.Elements = append(fid.Elements, policyderive.Element{Class: policyderive.Stricter, Subject: "mount " + m.Destination, Control: executor.ControlFSRead,
				Detail: "left out: it holds the engine's data root " + r + ", the host's mount there does not propagate, and it could not be rebuilt from its entries",
				Reason: "the engine refuses a private bind around its data root"})
			continue
		}
		ms = append(ms, add...)
		fid.Elements = append(fid.Elements, policyderive.Element{Class: policyderive.Stricter, Subject: "mount " + m.Destination, Control: executor.ControlFSWrite,
			Detail: fmt.Sprintf("rebuilt from binds of its entries around the engine's data root %s (hidden): nothing can be created, removed or renamed directly in %s, and %d symbolic links or special files there are left out",
				r, strings.Join(split, ", "), skipped),
			Reason: "the engine refuses a private bind around its data root, and the host's mount there is private (not shared), so it cannot be bound rslave"})
	}
}

// allowListWhy says why the proxy cannot listen inside this executor's
// containers: a remote engine (its containers are not on this host), or
// no CAP_SYS_ADMIN to enter their network namespaces; nil when it can.
func (x *Executor) allowListWhy() error {
	if x.eng.remote() {
		return fmt.Errorf("the engine at %s is remote: the proxy cannot listen inside its containers", x.eng.host)
	}
	return netallow.Check()
}

// boxNetNS returns the network namespace of b's container, opened once by
// its init process's pid.
func (x *Executor) boxNetNS(ctx context.Context, b *box) (*netns.Namespace, error) {
	b.nsMu.Lock()
	defer b.nsMu.Unlock()
	if b.netns != nil {
		return b.netns, nil
	}
	info, err := x.cli.ContainerInspect(ctx, b.id)
	if err != nil {
		return nil, &SetupError{Stage: "inspect", Container: b.id, Message: "finding the container's process for the network allow-list", Err: err}
	}
	if info.State == nil || info.State.Pid <= 0 {
		return nil, &SetupError{Stage: "inspect", Container: b.id, Message: "the container has no running process", lost: true}
	}
	ns, err := netns.Open(fmt.Sprintf("/proc/%d/ns/net", info.State.Pid))
	if err != nil {
		return nil, &SetupError{Stage: "inspect", Container: b.id, Message: "opening the container's network namespace", Err: err}
	}
	b.netns = ns
	return ns, nil
}
