package policyderive

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive/internal/sbplmodel"
)

// A System tree grants what every user of the host may read: a file
// others may not read, and a directory others may not enter, are masked
// unless the policy names them — by a System entry, an approved grant or
// an allow rule of their own path. A world-readable file beside them
// stays granted (twin), and Landlock grants the readable entries instead
// of the tree.
func TestDerivePrivateSystemFiles(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	sys, root := base+"/etc", base+"/ws"
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{
		{"etc/pub.conf", 0o644}, {"etc/key.json", 0o600}, {"etc/group-only", 0o640},
		{"etc/named.key", 0o600}, {"etc/granted.key", 0o600}, {"etc/ruled.key", 0o600},
		{"etc/sub/deep.key", 0o400}, {"etc/sub/ok", 0o444}, {"etc/tool", 0o755},
		{"ws/file", 0o600},
	} {
		p := filepath.Join(base, f.path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), f.mode))
	}
	require.NoError(t, os.Mkdir(sys+"/private", 0o700))
	require.NoError(t, os.WriteFile(sys+"/private/k", []byte("x"), 0o644))
	require.NoError(t, os.Symlink("key.json", sys+"/link"))

	p := policy.Coding.Policy()
	p.Secrets = []string{}
	p.System = append(policy.DefaultSystem(), sys, sys+"/named.key")
	p.PathRules = []policy.PathRule{{Pattern: sys + "/ruled.key", Action: policy.Allow, Ops: []policy.Op{policy.Read}}}
	pr, err := Derive(p, root, "", "", []policy.Grant{{Path: sys + "/granted.key", Op: policy.Read}})
	require.NoError(t, err)
	var got []string
	for _, m := range pr.Masks {
		if m.Reason == "private system file" {
			assert.Equal(t, Hide, m.Kind, m.Path)
			got = append(got, m.Path)
		}
	}
	assert.Equal(t, []string{sys + "/group-only", sys + "/key.json", sys + "/private", sys + "/sub/deep.key"}, got)
	assert.NotContains(t, maskPaths(pr), root+"/file", "the root is not a System tree: its own files are the user's")

	rs := Landlock(pr, 7)
	var granted []string
	for _, r := range rs.FS {
		// Listing a directory that holds one is fine; reading is not.
		if abspath.Within(r.Path, sys) && r.Access&ll.AccessFSReadFile != 0 {
			granted = append(granted, r.Path)
		}
	}
	for _, masked := range got {
		for _, g := range granted {
			assert.False(t, abspath.Within(masked, g), "landlock grants %s, which holds %s", g, masked)
		}
	}
	assert.True(t, slices.Contains(granted, sys+"/pub.conf"), "the readable twin is granted: %v", granted)
	assert.True(t, slices.Contains(granted, sys+"/sub/ok"), "%v", granted)

	args, _ := Bwrap(pr)
	assert.Contains(t, args, sys+"/key.json")
	text, params, _ := SBPL(pr)
	pm, err := sbplmodel.ParseParams(params)
	require.NoError(t, err)
	prof, err := sbplmodel.Parse(text, pm)
	require.NoError(t, err, "the rendered profile is outside the evaluated subset:\n%s", text)
	for path, want := range map[string]bool{
		sys + "/key.json": false, sys + "/private/k": false, sys + "/sub/deep.key": false,
		sys + "/pub.conf": true, sys + "/sub/ok": true, sys + "/named.key": true, sys + "/granted.key": true,
	} {
		ok, err := prof.Allows("file-read-data", path)
		require.NoError(t, err)
		assert.Equal(t, want, ok, "seatbelt reads %s", path)
	}

	// A chmod is seen by the next derivation, either way.
	require.NoError(t, os.Chmod(sys+"/key.json", 0o644))
	require.NoError(t, os.Chmod(sys+"/pub.conf", 0o600))
	pr, err = Derive(p, root, "", "", nil)
	require.NoError(t, err)
	assert.NotContains(t, maskPaths(pr), sys+"/key.json")
	assert.Contains(t, maskPaths(pr), sys+"/pub.conf")
	assert.Contains(t, maskPaths(pr), sys+"/granted.key", "without the grant it is masked")
}

// A System entry that is itself private is masked as a whole unless it is
// named by a grant or rule; /proc/self is never searched (its files are
// the opener's).
func TestDerivePrivateSystemRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(base+"/opt", 0o711))
	require.NoError(t, os.WriteFile(base+"/opt/bin", []byte("x"), 0o755))
	p := policy.Coding.Policy()
	p.Secrets = []string{}
	p.System = append(policy.DefaultSystem(), base+"/opt")
	pr, err := Derive(p, base+"/ws", "", "", nil)
	require.NoError(t, err)
	assert.NotContains(t, maskPaths(pr), base+"/opt", "a System entry is named by its own path")
	for _, m := range pr.Masks {
		assert.False(t, abspath.Within(m.Path, "/proc"), "%v", m)
	}
}

// /usr is searched like /etc: /usr/local/etc and packages' own private
// files live there (before, /usr was skipped as a package tree). The
// world-readable twin beside the private file stays granted. It needs a
// writable /usr (root on Linux) and skips elsewhere.
func TestDerivePrivateUnderUsr(t *testing.T) {
	parent := "/usr/local/share"
	dir, err := os.MkdirTemp(parent, "cordon-private-")
	if err != nil {
		t.Skipf("needs a writable %s (root): %v", parent, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.WriteFile(dir+"/key.json", []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(dir+"/pub.conf", []byte("x"), 0o644))
	old := privateSearched
	privateSearched = func(tree string) bool { return tree == dir || old(tree) }
	t.Cleanup(func() { privateSearched = old })

	p := policy.Coding.Policy()
	p.Secrets = []string{}
	p.System = []string{dir} // /usr itself would be searched whole
	pr, err := Derive(p, t.TempDir(), "", "", nil)
	require.NoError(t, err)
	assert.Contains(t, maskPaths(pr), dir+"/key.json", "a private file under /usr is masked")
	assert.NotContains(t, maskPaths(pr), dir+"/pub.conf", "its world-readable twin is not")
}

// The trees skipped are those whose content is public by construction,
// never a tree for its size.
func TestPublicTrees(t *testing.T) {
	for _, s := range policy.DefaultSystem() {
		if s == "/usr" || s == "/etc" || s == "/opt" || s == "/opt/homebrew" || s == "/Library" {
			assert.False(t, abspath.WithinAny(s, publicTrees), "%s is searched", s)
		}
	}
	assert.ElementsMatch(t, []string{"/nix/store", "/System"}, publicTrees)
}
