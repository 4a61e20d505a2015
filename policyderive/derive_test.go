package policyderive

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// fixture builds a small workspace below a resolved temporary directory
// and returns it; files end without "/", directories with it.
func fixture(t testing.TB, entries ...string) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, e := range entries {
		p := filepath.Join(base, e)
		if strings.HasSuffix(e, "/") {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	return base
}

func maskPaths(pr *Profile) []string {
	var out []string
	for _, m := range pr.Masks {
		out = append(out, m.Path)
	}
	return out
}

func TestDeriveInputErrors(t *testing.T) {
	base := fixture(t, "ws/")
	p := policy.Coding.Policy()
	tests := []struct {
		name   string
		cwd    string
		grants []policy.Grant
		what   string
	}{
		{name: "relative cwd", cwd: "src", what: "cwd"},
		{name: "invalid grant op", grants: []policy.Grant{{Path: base + "/x"}}, what: "grants[0]"},
		{name: "NUL in grant", grants: []policy.Grant{{Path: base + "/x\x00", Op: policy.Read}}, what: "grants[0]"},
		{name: "empty grant", grants: []policy.Grant{{Op: policy.Read}}, what: "grants[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Derive(p, base+"/ws", base, tt.cwd, tt.grants)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Equal(t, tt.what, ie.What)
		})
	}
	q := p.Clone()
	q.System = []string{"relative/sys"}
	_, err := Derive(q, base+"/ws", base, "", nil)
	var ve *policy.ValidationError
	require.ErrorAs(t, err, &ve, "the policy validates its System paths")

	_, err = Derive(nil, base+"/ws", base, "", nil)
	require.ErrorIs(t, err, ErrInvalid)
}

func TestDeriveMasks(t *testing.T) {
	base := fixture(t, "ws/.git/hooks/pre-commit", "ws/.git/config", "ws/.env", "ws/src/.env.local", "ws/secrets/k", "ws/sub/.git/hooks/",
		"ws/.vscode/settings.json", "home/.ssh/id", "home/.env", "out/x")
	root, home := base+"/ws", base+"/home"
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*", "secrets/", "~/.ssh"}
	p.Secrets = []string{}
	pr, err := Derive(p, root, home, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{root + "/.env", root + "/.git/config", root + "/.git/hooks", root + "/.vscode", root + "/secrets", root + "/src/.env.local", root + "/sub/.git/hooks"}, maskPaths(pr))
	kinds := map[string]MaskKind{}
	for _, m := range pr.Masks {
		kinds[m.Path] = m.Kind
		assert.True(t, m.Exists)
	}
	assert.Equal(t, Hide, kinds[root+"/.env"])
	assert.Equal(t, Hide, kinds[root+"/secrets"])
	assert.Equal(t, ReadOnly, kinds[root+"/.git/hooks"], "protected: write-denied only")
	assert.Equal(t, []string{root + "/.git", root + "/src", root + "/sub", root + "/sub/.git"}, pr.Pinned)
	// The home is not granted in coding mode: nothing there is masked or searched.
	assert.Equal(t, []string{root}, pr.Scope)
	assert.Empty(t, pr.Placeholders())

	// Grant the home for reading: it is searched and ~/.ssh, ~/.env masked.
	pr, err = Derive(p, root, home, "", []policy.Grant{{Path: home, Op: policy.Read}})
	require.NoError(t, err)
	assert.Contains(t, maskPaths(pr), home+"/.ssh")
	assert.Contains(t, maskPaths(pr), home+"/.env")
	assert.Contains(t, pr.Scope, home)
}

func TestDerivePlaceholders(t *testing.T) {
	base := fixture(t, "ws/src/main.go", "home/")
	root := base + "/ws"
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{"build/out/secret"}
	pr, err := Derive(p, root, base+"/home", "", nil)
	require.NoError(t, err)
	var got []string
	for _, m := range pr.Placeholders() {
		got = append(got, m.Path+" for "+m.For)
		assert.True(t, m.Dir)
	}
	// No placeholder at .git: a repository the command creates (git
	// init) is sanitized by the guard, as in any other directory.
	assert.Equal(t, []string{
		root + "/build for " + root + "/build/out/secret",
	}, got)
	assert.Equal(t, []string{root + "/build"}, pr.MountPoints())
	// With .git there and its hooks missing, the placeholder is at hooks.
	require.NoError(t, os.Mkdir(root+"/.git", 0o755))
	pr, err = Derive(p, root, base+"/home", "", nil)
	require.NoError(t, err)
	got = nil
	for _, m := range pr.Placeholders() {
		got = append(got, m.Path)
	}
	assert.Equal(t, []string{root + "/.git/config", root + "/.git/hooks", root + "/build"}, got)
	require.NoError(t, os.Remove(root+"/.git"))

	// Read-only mode: nothing can be created, so no placeholder.
	pr, err = Derive(policy.Readonly.Policy(), root, base+"/home", "", nil)
	require.NoError(t, err)
	assert.Empty(t, pr.Placeholders())
}

func TestDeriveKey(t *testing.T) {
	base := fixture(t, "ws/.git/hooks/", "ws/.env", "ws/a.go")
	root := base + "/ws"
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env"}
	derive := func() *Profile {
		pr, err := Derive(p, root, base, "", nil)
		require.NoError(t, err)
		return pr
	}
	a, b := derive(), derive()
	assert.Equal(t, a.Key(), b.Key(), "same inputs, same key")
	assert.Len(t, a.Key(), 64)
	assert.NotEqual(t, a.Key(), a.WithTmpDir(base+"/tmp").Key())
	assert.Empty(t, a.TmpDir, "WithTmpDir copies")

	// A new file in a split directory changes the Landlock rules: new key.
	require.NoError(t, os.WriteFile(root+"/b.go", nil, 0o644))
	assert.NotEqual(t, a.Key(), derive().Key())
	// A new denied file changes the masks.
	c := derive()
	require.NoError(t, os.MkdirAll(root+"/sub", 0o755))
	require.NoError(t, os.WriteFile(root+"/sub/.env", nil, 0o644))
	d := derive()
	assert.NotEqual(t, c.Key(), d.Key())
	assert.Contains(t, maskPaths(d), root+"/sub/.env")
}

func TestDeriveGrantsAndModes(t *testing.T) {
	base := fixture(t, "ws/a.go", "home/notes/n.txt", "home/.ssh/id", "out/o.txt")
	root, home := base+"/ws", base+"/home"
	hasAccess := func(l []Access, p string) bool {
		return slices.ContainsFunc(l, func(a Access) bool { return a.Path == p })
	}
	t.Run("coding reads outside only System and grants", func(t *testing.T) {
		pr, err := Derive(policy.Coding.Policy(), root, home, "", []policy.Grant{{Path: home + "/notes", Op: policy.Read}, {Path: base + "/out", Op: policy.Write}})
		require.NoError(t, err)
		assert.True(t, hasAccess(pr.Read, home+"/notes"))
		assert.False(t, hasAccess(pr.Read, "/"))
		assert.False(t, hasAccess(pr.Read, home))
		assert.True(t, hasAccess(pr.Write, root))
		assert.False(t, hasAccess(pr.Write, base+"/out"), "write outside is deny in coding: a grant cannot open it")
		assert.NotEmpty(t, pr.Notes)
	})
	t.Run("trusted reads / and asks for writes outside", func(t *testing.T) {
		pr, err := Derive(policy.Trusted.Policy(), root, home, "", []policy.Grant{{Path: base + "/out", Op: policy.Write}})
		require.NoError(t, err)
		assert.True(t, hasAccess(pr.Read, "/"))
		assert.True(t, hasAccess(pr.Write, base+"/out"))
		assert.Equal(t, policy.NetworkFull, pr.Network)
	})
	t.Run("readonly", func(t *testing.T) {
		pr, err := Derive(policy.Readonly.Policy(), root, home, "", nil)
		require.NoError(t, err)
		assert.True(t, hasAccess(pr.Read, root))
		assert.False(t, hasAccess(pr.Write, root))
	})
	t.Run("missing grant is kept but not rendered", func(t *testing.T) {
		pr, err := Derive(policy.Coding.Policy(), root, home, "", []policy.Grant{{Path: home + "/missing", Op: policy.Read}})
		require.NoError(t, err)
		i := slices.IndexFunc(pr.Read, func(a Access) bool { return a.Path == home+"/missing" })
		require.GreaterOrEqual(t, i, 0)
		assert.False(t, pr.Read[i].Exists)
		args, _ := Bwrap(pr)
		assert.NotContains(t, args, home+"/missing")
		ms, _ := OCIMounts(pr, OCIOptions{})
		for _, m := range ms {
			assert.NotEqual(t, home+"/missing", m.Destination)
		}
		for _, r := range Landlock(pr, 7).FS {
			assert.NotEqual(t, home+"/missing", r.Path)
		}
	})
	t.Run("root writable when write outside is allowed but inside denied", func(t *testing.T) {
		p := policy.Coding.Policy()
		p.Write, p.WriteOutside = policy.Deny, policy.Allow
		pr, err := Derive(p, root, home, "", nil)
		require.NoError(t, err)
		assert.False(t, hasAccess(pr.Write, "/"), "a write-only tree cannot be granted: writable means readable")
		p.ReadOutside = policy.Allow
		pr, err = Derive(p, root, home, "", nil)
		require.NoError(t, err)
		assert.True(t, hasAccess(pr.Write, "/"))
		i := slices.IndexFunc(pr.Masks, func(m Mask) bool { return m.Path == root })
		require.GreaterOrEqual(t, i, 0, "the root is masked read-only inside the writable /")
		assert.Equal(t, ReadOnly, pr.Masks[i].Kind)
	})
}

func TestFidelityErr(t *testing.T) {
	base := fixture(t, "ws/.git/hooks/", "ws/.env", "home/")
	root, home := base+"/ws", base+"/home"
	coding := policy.Coding.Policy()
	coding.DeniedPaths = []string{".env*"}
	pr, err := Derive(coding, root, home, "", nil)
	require.NoError(t, err)
	_, bf := Bwrap(pr)
	assert.NoError(t, bf.Err(), "coding on bwrap: only inherent gaps")
	assert.NotEmpty(t, bf.Looser())
	_, _, sf := SBPL(pr)
	assert.NoError(t, sf.Err())

	rs := Landlock(pr, 7)
	err = rs.Fidelity.Err()
	var le *LooserError
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, ErrLooser)
	assert.True(t, rs.Fidelity.Mitigate(FeatureNetUDP, "seccomp filter"))
	assert.True(t, rs.Fidelity.Mitigate(FeatureNetOther, "seccomp filter"))
	assert.False(t, rs.Fidelity.Mitigate(Feature("no such element"), "x"))
	assert.NoError(t, rs.Fidelity.Err(), "mitigated by the backend's seccomp filter")

	trusted := policy.Trusted.Policy()
	trusted.DeniedPaths = []string{".env*"}
	pr, err = Derive(trusted, root, home, "", nil)
	require.NoError(t, err)
	_, bf = Bwrap(pr)
	require.ErrorAs(t, bf.Err(), &le, "a bare-name deny outside the search scope cannot be masked")
	assert.Equal(t, "denied_paths[0]", le.Elements[0].Rule)
	_, _, sf = SBPL(pr)
	assert.NoError(t, sf.Err(), "Seatbelt expresses the pattern")
}

func TestLandlockABI(t *testing.T) {
	base := fixture(t, "ws/a.go", "home/")
	pr, err := Derive(policy.Coding.Policy(), base+"/ws", base+"/home", "", nil)
	require.NoError(t, err)
	looser := func(rs *LandlockRuleset) []string {
		var out []string
		for _, e := range rs.Fidelity.Blocking() {
			out = append(out, e.Subject)
		}
		return out
	}
	stricter := func(rs *LandlockRuleset, subject string) bool {
		return slices.ContainsFunc(rs.Fidelity.Stricter(), func(e Element) bool { return e.Subject == subject })
	}
	tests := []struct {
		abi     int
		blocked []string
		refer   bool
	}{
		{abi: 0, blocked: []string{"landlock"}},
		{abi: 1, blocked: []string{"truncate", "abstract unix sockets", "signals", "network tcp", "network udp", "network other sockets"}, refer: true},
		{abi: 2, blocked: []string{"truncate", "abstract unix sockets", "signals", "network tcp", "network udp", "network other sockets"}},
		{abi: 3, blocked: []string{"abstract unix sockets", "signals", "network tcp", "network udp", "network other sockets"}},
		{abi: 4, blocked: []string{"abstract unix sockets", "signals", "network udp", "network other sockets"}},
		{abi: 6, blocked: []string{"network udp", "network other sockets"}},
		{abi: 10, blocked: []string{"network other sockets"}},
		{abi: 99, blocked: []string{"network other sockets"}},
	}
	for _, tt := range tests {
		rs := Landlock(pr, tt.abi)
		assert.Equal(t, tt.blocked, looser(rs), "ABI %d", tt.abi)
		assert.Equal(t, tt.refer, stricter(rs, "refer"), "ABI %d", tt.abi)
		assert.Equal(t, LandlockHandledFS(rs.ABI), rs.HandledFS)
		for _, r := range rs.FS {
			assert.Zero(t, r.Access&^rs.HandledFS, "ABI %d: rule %s has rights the ABI lacks", tt.abi, r.Path)
			if !r.Dir {
				assert.Zero(t, r.Access&^landlockFileRights, "file rule %s", r.Path)
			}
		}
	}
	assert.Equal(t, LandlockMaxABI, Landlock(pr, 99).ABI)
	assert.Zero(t, Landlock(pr, 3).HandledNet)
	assert.Equal(t, LandlockHandledNet(4), Landlock(pr, 4).HandledNet)
	assert.NotZero(t, Landlock(pr, 4).HandledNet&ll.AccessNetConnectTCP)

	full := policy.Coding.Policy()
	full.Network = policy.NetworkFull
	pr, err = Derive(full, base+"/ws", base+"/home", "", nil)
	require.NoError(t, err)
	assert.Zero(t, Landlock(pr, 7).HandledNet, "network full: not handled")
	assert.Len(t, Landlock(pr, 7).Rules(), len(Landlock(pr, 7).FS)-len(Landlock(pr, 7).PerProcessRules()))
}

func TestBwrapArgs(t *testing.T) {
	base := fixture(t, "ws/.git/hooks/", "ws/.env", "ws/secrets/k", "home/")
	root := base + "/ws"
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env", "secrets"}
	pr, err := Derive(p, root, base+"/home", root, nil)
	require.NoError(t, err)
	args, _ := Bwrap(pr)
	joined := strings.Join(args, " ")
	for _, want := range []string{
		"--unshare-all --unshare-user --new-session --die-with-parent --cap-drop ALL",
		"--proc /proc --dev /dev --tmpfs /tmp",
		"--bind " + root + " " + root,
		"--ro-bind /dev/null " + root + "/.env",
		"--tmpfs " + root + "/secrets",
		"--ro-bind " + root + "/.git/hooks " + root + "/.git/hooks",
		"--bind " + root + "/.git " + root + "/.git",
		"--remount-ro " + root + "/secrets",
		"--chdir " + root,
	} {
		assert.Contains(t, joined, want)
	}
	assert.NotContains(t, args, "--share-net")
	// Order: the root before what lies in it, remounts last.
	idx := func(s string) int { return strings.Index(joined, s) }
	assert.Less(t, idx("--bind "+root+" "), idx("--ro-bind "+root+"/.git/hooks"))
	assert.Less(t, idx("--bind "+root+"/.git "), idx("--ro-bind "+root+"/.git/hooks"))
	assert.Less(t, idx("--ro-bind /dev/null"), idx("--remount-ro"))

	p.Network = policy.NetworkFull
	pr, err = Derive(p, root, base+"/home", root, nil)
	require.NoError(t, err)
	args, _ = Bwrap(pr)
	assert.Contains(t, args, "--share-net")
}

func TestSBPLNoPathInText(t *testing.T) {
	odd := "ws \"q\" (p) *[x]\\ \n\xff"
	base := fixture(t, odd+"/a", "home/")
	root := base + "/" + odd
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*", "~/.ssh", "sec?ets/*.pem"}
	pr, err := Derive(p, root, base+"/home", "", []policy.Grant{{Path: base + "/home", Op: policy.Read}})
	require.NoError(t, err)
	text, params, f := SBPL(pr)
	assert.NotContains(t, text, odd)
	assert.NotContains(t, text, base)
	assert.NotContains(t, text, "\xff")
	assert.NotContains(t, text, "\\")
	for _, line := range strings.Split(text, "\n") {
		assert.Equal(t, strings.Count(line, "("), strings.Count(line, ")"), "balanced: %s", line)
		assert.Zero(t, strings.Count(line, `"`)%2, "quotes: %s", line)
	}
	assert.Contains(t, params, "ROOT="+root)
	assert.Contains(t, params, "GRANT_0="+base+"/home")
	assert.Contains(t, text, "(version 1)\n(deny default)\n")
	assert.Contains(t, text, "(deny network*)")
	// The root holds bytes a regex cannot: the deny regexes are widened.
	assert.NotEmpty(t, f.Stricter())
	assert.NoError(t, f.Err())
}

func TestDockerMounts(t *testing.T) {
	ms := []specs.Mount{
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}},
		{Destination: "/w", Type: "bind", Source: "/w", Options: []string{"rbind", "rw", "rprivate", "nosuid", "nodev"}},
		{Destination: "/w/.git/hooks", Type: "bind", Source: "/w/.git/hooks", Options: []string{"rbind", "ro", "rprivate"}},
		{Destination: "/w/secrets", Type: "tmpfs", Source: "tmpfs", Options: []string{"mode=0555", "size=1m"}},
		{Destination: "/w/.env", Type: "bind", Source: "/dev/null", Options: []string{"rbind", "ro"}},
	}
	got, err := DockerMounts(ms)
	require.NoError(t, err)
	require.Len(t, got, 5)
	assert.Equal(t, mount.TypeTmpfs, got[0].Type)
	assert.Equal(t, os.ModeSticky|0o777, got[0].TmpfsOptions.Mode)
	assert.Equal(t, mount.Mount{Type: mount.TypeBind, Source: "/w", Target: "/w", BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}}, got[1])
	assert.True(t, got[2].ReadOnly)
	assert.Equal(t, int64(1<<20), got[3].TmpfsOptions.SizeBytes)
	assert.Equal(t, os.FileMode(0o555), got[3].TmpfsOptions.Mode)
	assert.Equal(t, "/dev/null", got[4].Source)

	_, err = DockerMounts([]specs.Mount{{Destination: "/x", Type: "overlay"}})
	var me *MountError
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, ErrUnsupportedMount)
	_, err = DockerMounts([]specs.Mount{{Destination: "/x", Type: "bind", Source: "/x", Options: []string{"exec-me"}}})
	require.ErrorAs(t, err, &me)
	assert.Equal(t, "exec-me", me.Option)
}

func TestClassText(t *testing.T) {
	for _, c := range []Class{Exact, Stricter, Looser} {
		b, err := c.MarshalText()
		require.NoError(t, err)
		var d Class
		require.NoError(t, d.UnmarshalText(b))
		assert.Equal(t, c, d)
	}
	var d Class
	assert.Error(t, d.UnmarshalText([]byte("close")))
	_, err := Class(9).MarshalText()
	assert.Error(t, err)
	assert.True(t, errors.Is(&LooserError{}, ErrLooser))
}

func TestDeriverCache(t *testing.T) {
	base := fixture(t, "ws/.git/hooks/", "ws/src/a.go", "home/")
	root := base + "/ws"
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*"}
	scans := NewScanCache(nil)
	defer scans.Close()
	d := NewDeriver(Options{Scans: scans})
	ctx := t.Context()
	first, err := d.Derive(ctx, p, root, base+"/home", "", nil)
	require.NoError(t, err)
	uncached, err := Derive(p, root, base+"/home", "", nil)
	require.NoError(t, err)
	assert.Equal(t, uncached.Key(), first.Key(), "the cache does not change the profile")

	// Concurrent derivations agree.
	keys := make(chan string, 8)
	for range 8 {
		go func() {
			pr, err := d.Derive(ctx, p, root, base+"/home", "", nil)
			if err != nil {
				keys <- err.Error()
				return
			}
			keys <- pr.Key()
		}()
	}
	for range 8 {
		assert.Equal(t, first.Key(), <-keys)
	}

	// A denied file created since is masked by the next derivation.
	require.NoError(t, os.WriteFile(root+"/src/.env", nil, 0o644))
	next, err := d.Derive(ctx, p, root, base+"/home", "", nil)
	require.NoError(t, err)
	assert.Contains(t, maskPaths(next), root+"/src/.env")
	assert.NotEqual(t, first.Key(), next.Key())
}

// TestSocketSearchBoundIsReported: a /run too large to search for daemon
// sockets is a looser note, never a silent downgrade; its twin, a /run
// within the bound, has none.
func TestSocketSearchBoundIsReported(t *testing.T) {
	note := func(entries int) bool {
		run := t.TempDir()
		for i := range entries {
			require.NoError(t, os.WriteFile(filepath.Join(run, strconv.Itoa(i)), nil, 0o644))
		}
		saved := runDir
		runDir = run
		defer func() { runDir = saved }()
		root := t.TempDir()
		pr, err := Derive(policy.Trusted.Policy(), root, "", root, nil)
		require.NoError(t, err)
		return slices.ContainsFunc(pr.Notes, func(e Element) bool {
			return e.Class == Looser && e.Control == policy.ControlNetUnix && strings.HasPrefix(e.Subject, "sockets under ")
		})
	}
	assert.True(t, note(maxSocketEntries+1), "past the bound: reported")
	assert.False(t, note(10), "control: within the bound, nothing to report")
}

// TestProcRuleDeclared: a read-denying rule under /proc, which no backend
// enforces where /proc is granted (the sandbox's own /proc, or Landlock's
// whole /proc), is declared in every rendering as an inherent looser
// fs-read element, so Assess reports it (found by an attack review: a
// denied /proc/self/environ was auto-allowed under docker and bwrap).
// Twin: the same policy without the rule declares nothing of the kind.
func TestProcRuleDeclared(t *testing.T) {
	root := t.TempDir()
	p := policy.Coding.Policy()
	derive := func(p *policy.Policy) *Profile {
		pr, err := Derive(p, root, "", root, nil)
		require.NoError(t, err)
		return pr
	}
	procLooser := func(f *Fidelity) []Element {
		var out []Element
		for _, e := range f.Looser() {
			if e.Feature == FeatureProcRule {
				out = append(out, e)
			}
		}
		return out
	}
	p.DeniedPaths = append(p.DeniedPaths, ".env*", "*.pem", "secrets/", "/etc/shadow")
	twin := derive(p)
	_, bf := Bwrap(twin)
	assert.Empty(t, procLooser(bf), "twin: nothing declared without a rule matching under /proc")

	// A literal, a glob and a bare name: each is a rule no backend enforces
	// in /proc (the glob and the name were missed by a literal-only check).
	p.DeniedPaths = append(p.DeniedPaths, "/proc/self/environ", "/proc/*/cmdline", "maps")
	pr := derive(p)
	_, bf = Bwrap(pr)
	_, of := OCIMounts(pr, OCIOptions{HostSystem: true})
	// (SBPL is for macOS, which has no /proc.)
	for name, f := range map[string]*Fidelity{"bwrap": bf, "landlock": Landlock(pr, LandlockMaxABI).Fidelity, "oci": of} {
		els := procLooser(f)
		require.Len(t, els, 3, name)
		for _, e := range els {
			assert.Equal(t, policy.ControlFSRead, e.Control, name)
			assert.True(t, e.Inherent, name)
		}
	}
}
