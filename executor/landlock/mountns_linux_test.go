//go:build linux

package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// TestMountPlan: the plan binds the top writable regions and remounts
// every other mount point, /proc included, keeping its nosuid/nodev/noexec
// flags.
func TestMountPlan(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(tmp+"/sub", 0o755))
	rs := &policyderive.LandlockRuleset{FS: []policyderive.LandlockRule{
		{Path: tmp, Access: writeRights, Dir: true},
		{Path: tmp + "/sub", Access: writeRights, Dir: true}, // nested: covered
		{Path: "/usr", Access: policyderive.LandlockRead, Dir: true},
		{Path: "/dev/null", Access: policyderive.LandlockWriteFile},
	}}
	tops, _ := existingRegions(mountRegions(&policyderive.Profile{}, rs))
	mp, err := newMountPlan(tops, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{tmp}, mp.writable, "the top writable grant; /dev/null works read-only")
	assert.Contains(t, mp.readonly, "/")
	assert.Len(t, mp.flags, len(mp.readonly))
	for _, p := range mp.readonly {
		assert.False(t, p == tmp || strings.HasPrefix(p, tmp+"/"), p)
	}
	assert.Contains(t, mp.readonly, "/proc", "root may chmod generic /proc entries")
	assert.Equal(t, uintptr(unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RELATIME), mountFlags("rw,nosuid,nodev,noexec,relatime"))
	assert.Equal(t, uintptr(unix.MS_NOATIME), mountFlags("ro,noatime"), "ro is what the remount adds; it is not kept from here")
	back, err := decodeMounts(encodeMounts(mp))
	require.NoError(t, err)
	assert.Equal(t, mp, back)
	_, err = decodeMounts("mzz")
	assert.Error(t, err)
}

// BenchmarkMountNamespace is what the read-only mount namespace adds to
// starting a command: `true` started by the same path with and without
// it, interleaved, without Landlock or seccomp, so that the difference is
// the namespace alone (the mount table read included).
func BenchmarkMountNamespace(b *testing.B) {
	if !canSpawn {
		b.Skip("the cgo start path only (CGO_ENABLED=0 here)")
	}
	mode, why := detectMounts()
	if mode == mountsNone {
		b.Skip("no mount namespace here: " + why)
	}
	tmp, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	start := func(rs *ruleset) func() error {
		return func() error {
			p, err := spawner(rs, "", nil, nil)("/bin/true", []string{"true"}, &os.ProcAttr{Files: []*os.File{null, null, null}, Dir: tmp})
			if err != nil {
				return err
			}
			_, err = p.Wait()
			return err
		}
	}
	testenv.Interleave(b,
		testenv.Op{Name: "plain", Run: start(&ruleset{filter: "-"})},
		testenv.Op{Name: "mountns", Base: "plain", Run: start(&ruleset{filter: "-", mounts: mode, writable: []string{tmp}})},
	)
}

// TestMountRegions: the root is one writable region however many rules
// Landlock splits it into; the denied paths inside it are the masks, a
// directory holding nothing but denied files is one mask, and a mask
// that a writable rule covers (Landlock lets the command write it) is
// none.
func TestMountRegions(t *testing.T) {
	const root = "/w"
	pr := &policyderive.Profile{
		Write: []policyderive.Access{{Path: root, Dir: true, Exists: true}, {Path: "/tmp/x", Dir: true, Exists: true}},
		Masks: []policyderive.Mask{
			{Path: root + "/.env", Exists: true},
			{Path: root + "/fixtures/c1.pem", Exists: true},
			{Path: root + "/fixtures/c2.pem", Exists: true},
			{Path: root + "/lib/k.pem", Exists: true},
			{Path: root + "/src/.git/config", Exists: true}, // under a writable rule: Landlock lets it be written
			{Path: root + "/.git", Exists: false},           // a placeholder: nothing to bind
		},
		Dirs: []policyderive.Listing{
			{Path: root, Entries: []policyderive.Entry{{Name: ".env"}, {Name: "fixtures"}, {Name: "lib"}, {Name: "src"}}},
			{Path: root + "/fixtures", Entries: []policyderive.Entry{{Name: "c1.pem"}, {Name: "c2.pem"}}},
			{Path: root + "/lib", Entries: []policyderive.Entry{{Name: "k.pem"}, {Name: "a.js"}}},
		},
	}
	rs := &policyderive.LandlockRuleset{FS: []policyderive.LandlockRule{
		{Path: root + "/lib/a.js", Access: writeRights},
		{Path: root + "/src", Access: writeRights, Dir: true},
		{Path: "/tmp/x", Access: writeRights, Dir: true},
		{Path: "/usr", Access: policyderive.LandlockRead, Dir: true},
	}}
	tops, masks := mountRegions(pr, rs)
	assert.Equal(t, []string{"/tmp/x", root}, tops)
	assert.Equal(t, []string{root + "/.env", root + "/fixtures", root + "/lib/k.pem"}, masks)
}

// TestCommandCgroupSurvivesStaleNames: cgroups named as an earlier
// process with this pid (killed outright, so it could not remove them)
// would have named them do not make the next command's cgroup fail.
func TestCommandCgroupSurvivesStaleNames(t *testing.T) {
	base := t.TempDir()
	next := cgroupSeq.Load()
	for i := uint64(1); i <= 50; i++ {
		stale := filepath.Join(base, fmt.Sprintf("cordon-%d-%d", os.Getpid(), next+i))
		require.NoError(t, os.Mkdir(stale, 0o755))
	}
	c, err := newCommandCgroup(base)
	require.NoError(t, err, "a stale cgroup name broke the next command")
	_, err = os.Stat(c.dir)
	require.NoError(t, err)
}
