package policyderive

import (
	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policyderive/internal/sbplmodel"

	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/cordon-sandbox/cordon/policy"
)

// A world is a generated file system: a workspace root, a home, an
// outside tree and a System tree, all below one temporary directory.
type world struct {
	base, root, home, out, sys string
	// existing are every existing path (symlinks excluded), resolved.
	existing map[string]fs.FileMode
}

// names used in generated trees: denied and protected names, ordinary
// names, and names with regex and shell metacharacters and non-UTF-8
// bytes.
var treeNames = []string{
	".env", ".env.local", "secrets", ".git", "hooks", "config", "a", "b", "src", "x.pem",
	".vscode", "notes", ".bashrc", "data", "k.key", "w*[e(i)r$d", "q\"u'o te", "ünï", "\xff\xfe", "n\nl",
}

func genWorld(t *rapid.T, base string) *world {
	w := &world{base: base, root: base + "/ws", home: base + "/home", out: base + "/out", sys: base + "/sys"}
	mk := func(rel string, dir bool) {
		p := filepath.Join(base, rel)
		if dir {
			_ = os.MkdirAll(p, 0o755)
			return
		}
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte("x"), 0o644)
	}
	for _, d := range []string{"ws/src", "home/.ssh", "home/notes", "out", "sys/bin", "sys/etc"} {
		mk(d, true)
	}
	for _, f := range []string{"ws/src/main.go", "ws/README", "home/.ssh/id_rsa", "home/.bashrc", "home/notes/a.txt", "out/data.txt", "sys/bin/tool", "sys/etc/.env"} {
		mk(f, false)
	}
	if rapid.Bool().Draw(t, "repo") {
		for _, f := range []string{"ws/.git/hooks/pre-commit", "ws/.git/config", "ws/.git/HEAD", "ws/.git/objects/ab/cd"} {
			mk(f, false)
		}
	}
	if rapid.Bool().Draw(t, "nested repo") {
		for _, f := range []string{"ws/vendor/lib/.git/hooks/post-checkout", "ws/vendor/lib/.git/config", "ws/vendor/lib/main.c"} {
			mk(f, false)
		}
	}
	dirs := []string{"ws", "ws/src", "home", "out"}
	n := rapid.IntRange(0, 24).Draw(t, "entries")
	for i := range n {
		d := rapid.SampledFrom(dirs).Draw(t, "dir")
		name := rapid.SampledFrom(treeNames).Draw(t, "name")
		rel := d + "/" + name
		switch rapid.IntRange(0, 9).Draw(t, "type") {
		case 0, 1, 2, 3, 4:
			mk(rel, false)
		case 5, 6, 7, 8:
			mk(rel, true)
			dirs = append(dirs, rel)
		default:
			target := rapid.SampledFrom([]string{w.home, w.home + "/.ssh", w.out, w.root + "/src", w.root, "nowhere", w.out + "/data.txt", w.sys}).Draw(t, "target")
			_ = os.Symlink(target, filepath.Join(base, rel))
		}
		_ = i
	}
	w.existing = map[string]fs.FileMode{}
	_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		w.existing[p] = d.Type()
		return nil
	})
	return w
}

// genPolicy draws a policy over the world.
func genPolicy(t *rapid.T, w *world) *policy.Policy {
	mode := rapid.SampledFrom([]policy.Mode{policy.Coding, policy.Readonly, policy.Trusted}).Draw(t, "mode")
	p := mode.Policy()
	dec := rapid.SampledFrom([]policy.Decision{policy.Allow, policy.Ask, policy.Deny})
	if rapid.IntRange(0, 4).Draw(t, "custom defaults") == 0 {
		p.Write = dec.Draw(t, "write")
		p.ReadOutside = dec.Draw(t, "read outside")
		p.WriteOutside = dec.Draw(t, "write outside")
	}
	pats := []string{
		".env*", "secrets", "secrets/", "*.pem", "~/.ssh", w.home + "/notes", w.out + "/data.txt", "a/b", "**/config",
		"src/*.key", "*.key", "[ab]", "{a,b}/x", "dat?", "q\"u'o te", `w\*\[e(i)r$d`, "w*[(]i)r$d", "\xff*", "ünï", "**/hooks", w.sys + "/etc/.env",
		"src", "notes", "~/notes/private", "~/missing/file", "ws-missing/x", "new.txt", ".git/info",
		"src/**", "~/.ssh/**", "src/**/*.key", w.out + "/**",
	}
	for _, s := range pats {
		if rapid.IntRange(0, 5).Draw(t, "deny "+s) == 0 {
			p.DeniedPaths = append(p.DeniedPaths, s)
		}
	}
	rulePats := append(slices.Clone(pats), w.home, w.out, w.home+"/notes", "~/.cache", w.sys+"/bin", "src/", "**/tmp", "a/", "*.txt", ".vscode", w.base)
	ops := rapid.SampledFrom([][]policy.Op{nil, {policy.Read}, {policy.Write}})
	for range rapid.IntRange(0, 5).Draw(t, "path rules") {
		p.PathRules = append(p.PathRules, policy.PathRule{
			Pattern: rapid.SampledFrom(rulePats).Draw(t, "rule pattern"),
			Action:  dec.Draw(t, "rule action"),
			Ops:     ops.Draw(t, "rule ops"),
		})
	}
	switch rapid.IntRange(0, 3).Draw(t, "protect") {
	case 0:
		p.Protect.Disabled = true
	case 1:
		p.Protect.Extra = []string{"data", ".vscode"}
	}
	p.System = append(policy.DefaultSystem(), w.sys)
	switch rapid.IntRange(0, 2).Draw(t, "network") {
	case 1:
		p.Network = policy.NetworkFull
	case 2:
		p.Network = policy.NetworkAllowList
		p.Hosts = policy.HostRules{Allow: []string{"example.com", "127.0.0.1:8080"}, Deny: []string{"upload.example.com"}}
	}
	return p
}

func genGrants(t *rapid.T, w *world) []policy.Grant {
	cands := []string{w.home + "/notes", w.out, w.root + "/src", w.home, w.root + "/newdir", w.home + "/.ssh/id_rsa", w.out + "/data.txt", w.root}
	var gs []policy.Grant
	for range rapid.IntRange(0, 3).Draw(t, "grants") {
		gs = append(gs, policy.Grant{
			Path: rapid.SampledFrom(cands).Draw(t, "grant path"),
			Op:   rapid.SampledFrom([]policy.Op{policy.Read, policy.Write}).Draw(t, "grant op"),
		})
	}
	return gs
}

// probe is a path to judge, existing at derivation or not.
type probe struct {
	path   string
	exists bool
	dir    bool
	file   bool // a regular file
}

func probes(w *world) []probe {
	var out []probe
	seen := map[string]bool{}
	add := func(p probe) {
		if !seen[p.path] {
			seen[p.path] = true
			out = append(out, p)
		}
	}
	for p, m := range w.existing {
		add(probe{path: p, exists: true, dir: m.IsDir(), file: m.IsRegular()})
		if m.IsDir() {
			for _, n := range []string{"new.txt", ".env.new", ".git", "hooks", "config", "secrets", "x.pem", ".bashrc", "ünï"} {
				q := p + "/" + n
				if _, ok := w.existing[q]; !ok {
					if _, err := os.Lstat(q); err != nil {
						add(probe{path: q})
					}
				}
			}
		}
	}
	for _, s := range []string{"/bin/sh", "/usr/bin", "/etc/passwd", "/etc", "/"} {
		if r, err := filepath.EvalSymlinks(s); err == nil {
			fi, err := os.Stat(r)
			if err == nil {
				add(probe{path: r, exists: true, dir: fi.IsDir(), file: fi.Mode().IsRegular()})
			}
		}
	}
	slices.SortFunc(out, func(a, b probe) int { return strings.Compare(a.path, b.path) })
	return out
}

// oracle judges paths as the policy does at the OS level.
type oracle struct {
	c  *policy.Checker
	pr *Profile
}

// decide returns the first-match decision, skipping rules skip selects,
// and the deciding rule (nil for a default).
func (o *oracle) decide(abs string, op policy.Op, skip func(policy.Rule) bool) (policy.Decision, *policy.Rule) {
	rel, inside := o.c.Inside(abs)
	for i, r := range o.c.Rules() {
		if r.AppliesTo(op) && (skip == nil || !skip(r)) && r.Pattern.Match(abs, rel, inside) {
			return r.Action, &o.c.Rules()[i]
		}
	}
	p := o.c.Policy()
	switch {
	case inside && op == policy.Read:
		return policy.Allow, nil
	case inside:
		return p.Write, nil
	case op == policy.Read:
		return p.ReadOutside, nil
	}
	return p.WriteOutside, nil
}

func (o *oracle) granted(abs string, op policy.Op) bool {
	for _, g := range o.pr.Grants {
		if abspath.Within(abs, g.Path) && (op == policy.Read || g.Op == policy.Write) {
			return true
		}
	}
	return false
}

func (o *oracle) inSystem(abs string) bool {
	return abspath.WithinAny(abs, o.pr.System)
}

func (o *oracle) inScope(abs string) bool {
	return abspath.WithinAny(abs, o.pr.Scope)
}

// permitted is the soundness oracle: the policy allows op on abs, or asks
// and a grant approves it, or it is a read in a System tree that no rule
// decides. Pseudo-devices are always permitted.
func (o *oracle) permitted(abs string, op policy.Op, skip func(policy.Rule) bool) bool {
	if abspath.Within(abs, "/dev") {
		return true
	}
	d, r := o.decide(abs, op, skip)
	switch {
	case d == policy.Allow:
		return true
	case d == policy.Ask && o.granted(abs, op):
		return true
	}
	return op == policy.Read && r == nil && o.inSystem(abs)
}

// searched reports whether a mask search can find matches of r: rules
// with a literal path are located directly.
func searched(r policy.Rule) bool {
	return r.Pattern.Literal() && r.Pattern.Kind() != policy.PatternName
}

// declared reports whether fid declares a looser element for rule with
// the given inherence.
func declared(fid *Fidelity, rule string, inherent bool, control policy.Control) bool {
	for _, e := range fid.Looser() {
		if e.Rule == rule && e.Inherent == inherent && (control == "" || e.Control == control) {
			return true
		}
	}
	return false
}

// gapOK reports whether a backend that permits op on p, which the policy
// forbids, does so through a gap its fidelity report declares: a path
// created while the command runs, a bare-name or glob rule not searched
// in a System tree or outside the search scope.
func (o *oracle) gapOK(p probe, op policy.Op, fid *Fidelity) (bool, string) {
	_, r := o.decide(p.path, op, nil)
	if r == nil || searched(*r) {
		return false, "no gap applies"
	}
	if !p.exists && declared(fid, r.Source, true, policy.ControlFSNewFiles) {
		return true, "new path"
	}
	unsearchable := func(x policy.Rule) bool { return !searched(x) && x.Pattern.Kind() != policy.PatternRelative }
	if r.Pattern.Kind() == policy.PatternRelative || o.permitted(p.path, op, unsearchable) == false {
		return false, "not a search gap"
	}
	if o.inSystem(p.path) && !o.inScope(p.path) && declared(fid, r.Source, true, policy.ControlFSRead) {
		return true, "system tree"
	}
	if !o.inScope(p.path) && declared(fid, r.Source, false, "") {
		return true, "outside the search scope"
	}
	return false, "undeclared"
}

var soundnessCases struct {
	bwrap, oci, landlock, sbpl atomic.Int64
	// usability counts the converse checks per rendering.
	mu        sync.Mutex
	usability map[string]int64
}

func countUsability(name string) {
	soundnessCases.mu.Lock()
	defer soundnessCases.mu.Unlock()
	if soundnessCases.usability == nil {
		soundnessCases.usability = map[string]int64{}
	}
	soundnessCases.usability[name]++
}

// backendView is one rendering's verdict on a path and op.
type backendView struct {
	name  string
	fid   *Fidelity
	read  func(p probe) bool
	write func(p probe) bool
	debug string // the rendering, for failure messages
	// image marks an image-mode rendering (the pod): the image provides
	// the default System paths, so the host's are not expected there.
	image bool
}

func TestSoundness(t *testing.T) {
	// The host's /run changes while the test runs (daemons' sockets come
	// and go); a world of the test's own keeps the check repeatable.
	saved := runDir
	runDir = t.TempDir()
	t.Cleanup(func() { runDir = saved })
	rapid.Check(t, func(rt *rapid.T) {
		base, err := os.MkdirTemp(t.TempDir(), "w")
		require.NoError(rt, err)
		defer os.RemoveAll(base)
		base, err = filepath.EvalSymlinks(base)
		require.NoError(rt, err)
		w := genWorld(rt, base)
		p := genPolicy(rt, w)
		grants := genGrants(rt, w)
		c, err := policy.NewChecker(p, w.root, w.home)
		require.NoError(rt, err)
		pr, err := Derive(p, w.root, w.home, "", grants)
		require.NoError(rt, err)
		o := &oracle{c: c, pr: pr}

		views := renderViews(rt, pr)
		for _, pb := range probes(w) {
			for _, op := range []policy.Op{policy.Read, policy.Write} {
				if op == policy.Read && !pb.exists {
					continue // nothing to read: a created file is judged by its write
				}
				want := o.permitted(pb.path, op, nil)
				for _, v := range views {
					got := v.read(pb)
					if op == policy.Write {
						got = v.write(pb)
					}
					countCase(v.name)
					if got && !want {
						if ok, why := o.gapOK(pb, op, v.fid); !ok {
							d := c.DecideResolved(pb.path, op)
							rt.Fatalf("%s permits %s %q (exists %v) but the policy says %s by %s (%s)\nprofile masks: %+v\nfidelity:\n%s\n%s", v.name, op, pb.path, pb.exists, d.Decision, d.Rule, why, pr.Masks, v.fid, v.debug)
						}
					}
				}
			}
		}
		checkUsability(rt, o, pr, views, w)
		checkPins(rt, pr, views)
		checkNetwork(rt, pr)
	})
	for name, n := range map[string]int64{
		"bwrap": soundnessCases.bwrap.Load(), "oci": soundnessCases.oci.Load(), "landlock": soundnessCases.landlock.Load(), "sbpl": soundnessCases.sbpl.Load(),
	} {
		assert.GreaterOrEqual(t, n, int64(10000), "generated cases for %s", name)
		t.Logf("%s: %d cases", name, n)
	}
	// The converse: every rendering must have let through many paths the
	// policy permits, or a renderer that denies everything would pass.
	for _, name := range []string{"bwrap", "oci", "landlock", "sbpl"} {
		n := soundnessCases.usability[name]
		assert.GreaterOrEqual(t, n, int64(500), "usability cases for %s", name)
		t.Logf("usability %s: %d cases", name, n)
	}
	assert.GreaterOrEqual(t, netCases.Load(), int64(50), "network cases")
}

func countCase(name string) {
	switch name {
	case "bwrap":
		soundnessCases.bwrap.Add(1)
	case "oci":
		soundnessCases.oci.Add(1)
	case "landlock":
		soundnessCases.landlock.Add(1)
	case "sbpl":
		soundnessCases.sbpl.Add(1)
	}
}

// renderViews renders the profile with every backend and wraps each in
// its model.
func renderViews(t *rapid.T, pr *Profile) []backendView {
	args, bf := Bwrap(pr)
	bt, err := bwrapTable(args)
	require.NoError(t, err)
	require.Empty(t, bt.errs, "bwrap mounts that would fail: %q", args)
	mps := pr.MountPoints()
	for _, c := range bt.created {
		require.Contains(t, mps, c, "bwrap would create %s on the host", c)
	}
	ms, of := OCIMounts(pr, OCIOptions{HostSystem: true})
	ot, err := ociTable(ms)
	require.NoError(t, err)
	require.Empty(t, ot.errs, "OCI mounts that would fail")
	for _, c := range ot.created {
		require.Contains(t, mps, c, "the runtime would create %s on the host", c)
	}
	_, err = DockerMounts(ms)
	require.NoError(t, err)
	// The kubernetes pod: its volumes alone (the pod layer, which every
	// node enforces) must be sound, in both volume modes; the sandbox
	// layer inside it is the landlock rendering checked below.
	pt, pf, pdebug := podTable(t, pr, "")
	ct, _, cdebug := podTable(t, pr, "claim")
	rs := Landlock(pr, LandlockMaxABI)
	lm := landlockModel{rs: rs}
	// A lower ABI too: what it cannot restrict must be declared, and
	// truncate (declared looser below ABI 3) is left out of its model.
	old := Landlock(pr, rapid.IntRange(1, LandlockMaxABI).Draw(t, "abi"))
	om := landlockModel{rs: old, ignoreTruncate: old.ABI < 3}
	require.Equal(t, old.ABI < 3, slices.ContainsFunc(old.Fidelity.Blocking(), func(e Element) bool { return e.Subject == "truncate" }))
	text, params, sf := SBPL(pr)
	pm, err := sbplmodel.ParseParams(params)
	require.NoError(t, err)
	sp, err := sbplmodel.Parse(text, pm)
	require.NoError(t, err, "the rendered profile is outside the evaluated SBPL subset")
	sbplAllows := func(op, path string) bool {
		ok, err := sp.Allows(op, path)
		require.NoError(t, err)
		return ok
	}
	return []backendView{
		{name: "bwrap", fid: bf, read: func(p probe) bool { return bt.read(p.path) }, write: func(p probe) bool { return bt.write(p.path) }},
		{name: "oci", fid: of, read: func(p probe) bool { return ot.read(p.path) }, write: func(p probe) bool { return ot.write(p.path) }},
		{name: "pod", fid: pf, image: true, debug: pdebug, read: func(p probe) bool { return pt.read(p.path) }, write: func(p probe) bool { return pt.write(p.path) }},
		// A claim-backed pod leaves hidden files to the sandbox layer: it
		// is sound with that layer, and never looser than its own volumes.
		{name: "pod", fid: pf, image: true, debug: cdebug, read: func(p probe) bool { return ct.read(p.path) && lm.read(p.path, p.dir) }, write: func(p probe) bool { return ct.write(p.path) && lm.write(p.path, p.exists, p.dir) }},
		{name: "landlock", fid: rs.Fidelity, read: func(p probe) bool { return lm.read(p.path, p.dir) }, write: func(p probe) bool { return lm.write(p.path, p.exists, p.dir) }},
		{name: "landlock", fid: old.Fidelity, read: func(p probe) bool { return om.read(p.path, p.dir) }, write: func(p probe) bool { return om.write(p.path, p.exists, p.dir) }},
		{name: "sbpl", fid: sf, debug: text + strings.Join(params, "\n"), read: func(p probe) bool { return sbplAllows("file-read-data", p.path) }, write: func(p probe) bool { return sbplAllows("file-write-data", p.path) }},
	}
}

// podTable renders the profile as a pod (image mode: the image provides
// the System paths) and models its volume mounts; claim names a claim
// holding the root ("": hostPath volumes).
func podTable(t *rapid.T, pr *Profile, claim string) (*mountTable, *Fidelity, string) {
	r, f := PodSpec(pr, PodOptions{Image: "i", Helper: "/h", Claim: claim, UID: 1, GID: 1, Labels: map[string]string{"s": "x"}})
	require.Len(t, r.Pod.Containers, 1)
	vols := map[string]corev1.Volume{}
	for _, v := range r.Pod.Volumes {
		vols[v.Name] = v
	}
	var ms []specs.Mount
	for _, vm := range r.Pod.Containers[0].VolumeMounts {
		v, ok := vols[vm.Name]
		require.True(t, ok, "volume %s", vm.Name)
		mode := "rw"
		if vm.ReadOnly {
			mode = "ro"
		}
		switch {
		case v.HostPath != nil:
			ms = append(ms, specs.Mount{Type: "bind", Source: v.HostPath.Path, Destination: vm.MountPath, Options: []string{mode}})
		case v.PersistentVolumeClaim != nil:
			ms = append(ms, specs.Mount{Type: "bind", Source: filepath.Join(pr.Root, vm.SubPath), Destination: vm.MountPath, Options: []string{mode}})
		case v.EmptyDir != nil:
			ms = append(ms, specs.Mount{Type: "tmpfs", Destination: vm.MountPath})
		default:
			t.Fatalf("unexpected volume %+v", v)
		}
	}
	slices.SortStableFunc(ms, func(a, b specs.Mount) int { return abspath.Depth(a.Destination) - abspath.Depth(b.Destination) })
	mt, err := ociTable(ms)
	require.NoError(t, err)
	require.Empty(t, mt.errs, "pod volumes that would fail")
	if r.NetworkPolicy != nil {
		require.NotEqual(t, policy.NetworkFull, pr.Network)
		require.Empty(t, r.NetworkPolicy.Ingress)
		require.Empty(t, r.NetworkPolicy.Egress)
	} else {
		require.Equal(t, policy.NetworkFull, pr.Network)
	}
	var dbg strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&dbg, "%s %s %s %v\n", m.Type, m.Source, m.Destination, m.Options)
	}
	return mt, f, dbg.String()
}

// checkUsability asserts the converse where it matters, so that a
// renderer denying everything cannot pass: existing regular files the
// policy permits, in the root or a System tree and under no mask, are
// readable (and writable when the root is a write grant) in every
// rendering.
func checkUsability(t *rapid.T, o *oracle, pr *Profile, views []backendView, w *world) {
	masked := func(p string) bool {
		return slices.ContainsFunc(pr.Masks, func(m Mask) bool { return abspath.Within(p, m.Path) })
	}
	rootRead := slices.ContainsFunc(pr.Read, func(a Access) bool { return a.Path == pr.Root && a.Exists })
	rootWrite := slices.ContainsFunc(pr.Write, func(a Access) bool { return a.Path == pr.Root && a.Exists })
	for _, pb := range probes(w) {
		if !pb.file || masked(pb.path) {
			continue
		}
		inRoot := abspath.Within(pb.path, pr.Root)
		inSys := slices.ContainsFunc(pr.Read, func(a Access) bool { return a.Source == "system" && a.Exists && abspath.Within(pb.path, a.Path) })
		for _, op := range []policy.Op{policy.Read, policy.Write} {
			switch {
			case op == policy.Read && (inSys || inRoot && rootRead):
			case op == policy.Write && inRoot && rootWrite:
			default:
				continue
			}
			if !o.permitted(pb.path, op, nil) {
				continue
			}
			for _, v := range views {
				if v.image && inSys && !inRoot {
					continue // the image's, not the host's
				}
				if stricterRuleMatches(o, v.fid, pb.path) || v.name == "sbpl" && len(v.fid.Stricter()) > 0 && strings.ContainsFunc(pb.path, func(r rune) bool { return r < ' ' || r > '~' || strings.ContainsRune(`^"\\`, r) }) {
					continue // a rule this rendering declares stricter (a widened deny, an allow it cannot express) matches
				}
				countUsability(v.name)
				got := v.read(pb)
				if op == policy.Write {
					got = v.write(pb)
				}
				if !got {
					t.Fatalf("%s refuses %s %q, which the policy permits and no mask covers\nmasks: %+v\n%s", v.name, op, pb.path, pr.Masks, v.debug)
				}
			}
		}
	}
}

// checkPins asserts that the directories between a writable grant and a
// mask, and the mask itself, cannot be renamed or removed.
func checkPins(t *rapid.T, pr *Profile, views []backendView) {
	for _, m := range pr.Masks {
		top, writable := boundary(pr, m.Path)
		if !writable || !m.Exists {
			continue
		}
		for d := m.Path; abspath.Below(d, top); d = abspath.Parent(d) {
			if d != m.Path {
				require.Contains(t, pr.Pinned, d, "ancestor of mask %s not pinned", m.Path)
			}
			for _, v := range views {
				if v.name != "landlock" {
					continue
				}
				if v.write(probe{path: d, exists: true, dir: d != m.Path || m.Dir}) {
					t.Fatalf("landlock lets %s (holding mask %s) be renamed or removed", d, m.Path)
				}
			}
		}
	}
	args, _ := Bwrap(pr)
	for _, d := range pr.Pinned {
		require.True(t, slices.Contains(args, d), "pin %s is no mount point", d)
	}
}

// stricterRuleMatches reports whether a rule the fidelity report declares
// stricter matches p.
func stricterRuleMatches(o *oracle, fid *Fidelity, p string) bool {
	rel, inside := o.c.Inside(p)
	for _, e := range fid.Stricter() {
		if e.Rule == "" {
			continue
		}
		for _, r := range o.c.Rules() {
			if r.Source == e.Rule && r.Pattern.Match(p, rel, inside) {
				return true
			}
		}
	}
	return false
}

// checkNetwork: no rendering lets a command reach more of the network
// than its policy's setting. Under the allow-list the only destination a
// rendering may open is the proxy's port in the executor's private
// namespace; under none, nothing.
func checkNetwork(t *rapid.T, pr *Profile) {
	args, _ := Bwrap(pr)
	shares := slices.Contains(args, "--share-net")
	require.True(t, slices.Contains(args, "--unshare-all"), "bwrap always starts from --unshare-all")
	require.Equal(t, pr.Network != policy.NetworkNone, shares, "bwrap shares the network namespace it is started in only under full or the allow-list (whose executor starts it in a private one): %q", args)

	for abi := 1; abi <= LandlockMaxABI; abi++ {
		rs := Landlock(pr, abi)
		switch pr.Network {
		case policy.NetworkFull:
			require.Zero(t, rs.HandledNet)
		default:
			require.Equal(t, LandlockHandledNet(abi), rs.HandledNet, "ABI %d: every network right the ABI knows is handled", abi)
			for _, r := range rs.Net {
				require.Equal(t, policy.NetworkAllowList, pr.Network, "ABI %d: a network rule under network none: %+v", abi, r)
				require.Equal(t, uint16(ProxyPort), r.Port, "ABI %d: the only port a rule may open is the proxy's", abi)
				require.Equal(t, landlock.AccessNetSet(ll.AccessNetConnectTCP), r.Access, "ABI %d: connect only, never bind", abi)
			}
		}
	}

	text, _, _ := SBPL(pr)
	allows := regexp.MustCompile(`\(allow network[^\n]*`).FindAllString(text, -1)
	switch pr.Network {
	case policy.NetworkNone:
		require.Empty(t, allows, "SBPL under network none")
	case policy.NetworkAllowList:
		require.Equal(t, []string{fmt.Sprintf(`(allow network-outbound (remote ip "localhost:%d"))`, ProxyPort)}, allows, "SBPL under the allow-list opens the proxy's port only")
	}
	netCases.Add(1)
}

var netCases atomic.Int64

// TestAllowListOpensProxyPortOnly is the case TestSoundness once found
// (its rapid dump, now this named test): a root full of denied .env
// files, a path rule denying them, the network allow-list. At every ABI
// with TCP rules the Landlock rendering may connect to the proxy's port
// and nothing else; bwrap shares the (private) namespace it is started
// in; SBPL opens only the proxy's port on loopback.
func TestAllowListOpensProxyPortOnly(t *testing.T) {
	root := t.TempDir()
	for i := range 3 {
		dir := filepath.Join(root, fmt.Sprint("d", i))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".env"), []byte("K=V\n"), 0o600))
	}
	p := policy.Coding.Policy()
	p.Network = policy.NetworkAllowList
	p.Hosts = policy.HostRules{Allow: []string{"example.com"}}
	p.PathRules = append(p.PathRules, policy.PathRule{Pattern: ".env*", Action: policy.Deny})
	pr, err := Derive(p, root, "", root, nil)
	require.NoError(t, err)
	for abi := 1; abi <= LandlockMaxABI; abi++ {
		rs := Landlock(pr, abi)
		if abi < 4 {
			assert.Empty(t, rs.Net, "ABI %d has no TCP rules", abi)
			continue
		}
		require.Len(t, rs.Net, 1, "ABI %d", abi)
		assert.Equal(t, uint16(ProxyPort), rs.Net[0].Port, "ABI %d: the proxy's port", abi)
		assert.Equal(t, landlock.AccessNetSet(ll.AccessNetConnectTCP), rs.Net[0].Access, "ABI %d: connect only", abi)
	}
	args, _ := Bwrap(pr)
	assert.Contains(t, args, "--share-net")
	text, _, _ := SBPL(pr)
	assert.Equal(t, []string{fmt.Sprintf(`(allow network-outbound (remote ip "localhost:%d"))`, ProxyPort)},
		regexp.MustCompile(`\(allow network[^\n]*`).FindAllString(text, -1))
}
