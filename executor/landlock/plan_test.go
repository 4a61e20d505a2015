package landlock

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// profile derives a coding-mode profile (network as given) of a fresh
// workspace; with socket set, a Unix socket in the root is granted.
func profile(t *testing.T, network policy.Network, socket bool) *policyderive.Profile {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := policy.Coding.Policy()
	p.Network = network
	var grants []policy.Grant
	if socket {
		sock := filepath.Join(root, "agent.sock")
		ln, err := net.Listen("unix", sock)
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		grants = append(grants, policy.Grant{Path: sock, Op: policy.Write})
	}
	pr, err := policyderive.Derive(p, root, "", root, grants)
	require.NoError(t, err)
	return pr.WithTmpDir(filepath.Join(root, ".tmp"))
}

func controls(gs []executor.Gap) []executor.Control {
	var out []executor.Control
	for _, g := range gs {
		if !slices.Contains(out, g.Control) {
			out = append(out, g.Control)
		}
	}
	slices.Sort(out)
	return out
}

func ctl(cs ...executor.Control) []executor.Control {
	slices.Sort(cs)
	return cs
}

const (
	fsRead   = executor.ControlFSRead
	fsWrite  = executor.ControlFSWrite
	protect  = executor.ControlProtect
	tcp      = executor.ControlNetTCP
	udp      = executor.ControlNetUDP
	unixSock = executor.ControlNetUnix
	abstract = executor.ControlNetAbstract
	signal   = executor.ControlSignal
	kernel   = executor.ControlKernelObjects
)

// TestABIDowngrade is the downgrade logic as data: for each pretended ABI,
// with and without seccomp, under network none and full, which gaps make
// strict mode refuse, and what the seccomp filter denies. The inherent
// gaps are declared in every case and never refuse.
func TestABIDowngrade(t *testing.T) {
	cases := []struct {
		name    string
		abi     int
		seccomp bool
		network policy.Network
		socket  bool
		refuse  []executor.Control
		filter  filterSpec
	}{
		{"no landlock", 0, true, policy.NetworkNone, false, ctl(fsRead, fsWrite, protect, signal), filterSpec{inet: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"no landlock, no seccomp", 0, false, policy.NetworkNone, false, ctl(kernel, fsRead, fsWrite, protect, signal, abstract, tcp, udp, unixSock), filterSpec{}},
		{"abi 1", 1, true, policy.NetworkNone, false, ctl(fsWrite, signal), filterSpec{inet: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 2", 2, true, policy.NetworkNone, false, ctl(fsWrite, signal), filterSpec{inet: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 3", 3, true, policy.NetworkNone, false, ctl(signal), filterSpec{inet: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 4", 4, true, policy.NetworkNone, false, ctl(signal), filterSpec{inet: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 5", 5, true, policy.NetworkNone, false, ctl(signal), filterSpec{inet: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 6", 6, true, policy.NetworkNone, false, nil, filterSpec{inet: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 7", 7, true, policy.NetworkNone, false, nil, filterSpec{inet: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 9", 9, true, policy.NetworkNone, false, nil, filterSpec{inet: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 10", 10, true, policy.NetworkNone, false, nil, filterSpec{inet: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 1 no seccomp", 1, false, policy.NetworkNone, false, ctl(kernel, fsWrite, signal, abstract, tcp, udp, unixSock), filterSpec{}},
		{"abi 3 no seccomp", 3, false, policy.NetworkNone, false, ctl(kernel, signal, abstract, tcp, udp, unixSock), filterSpec{}},
		{"abi 4 no seccomp", 4, false, policy.NetworkNone, false, ctl(kernel, signal, abstract, tcp, udp, unixSock), filterSpec{}},
		{"abi 6 no seccomp", 6, false, policy.NetworkNone, false, ctl(kernel, tcp, udp, unixSock), filterSpec{}},
		{"abi 9 no seccomp", 9, false, policy.NetworkNone, false, ctl(kernel, tcp, udp), filterSpec{}},
		{"abi 10 no seccomp", 10, false, policy.NetworkNone, false, ctl(kernel, tcp), filterSpec{}},
		{"abi 3 full", 3, true, policy.NetworkFull, false, ctl(signal), filterSpec{unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 7 full", 7, true, policy.NetworkFull, false, nil, filterSpec{unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 7 full no seccomp", 7, false, policy.NetworkFull, false, ctl(kernel, unixSock), filterSpec{}},
		{"abi 9 full", 9, true, policy.NetworkFull, false, nil, filterSpec{ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 7 socket grant", 7, true, policy.NetworkNone, true, ctl(unixSock), filterSpec{inet: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 5 socket grant", 5, true, policy.NetworkNone, true, ctl(unixSock, abstract, signal), filterSpec{inet: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
		{"abi 9 socket grant", 9, true, policy.NetworkNone, true, nil, filterSpec{inet: true, ioURing: true, kernelObjects: true, otherProcesses: true}},
	}
	inherent := []executor.Control{executor.ControlFSMetadata, executor.ControlFSNewFiles, executor.ControlProcessTree}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr := profile(t, tc.network, tc.socket)
			// No network namespaces: network none is the filter's (see
			// TestLoopbackPlan for the private loopback).
			f := features{abi: tc.abi, seccomp: tc.seccomp, seccompWhy: "pretended", arch: "amd64", netnsWhy: "pretended", childNetWhy: "pretended"}
			pl := assess(pr, f, Config{})
			assert.Equal(t, tc.refuse, controls(pl.blocking), "blocking gaps: %v", pl.blocking)
			assert.Equal(t, tc.filter, pl.filter)
			gaps := controls(pl.gaps)
			for _, c := range tc.refuse {
				assert.Contains(t, gaps, c)
			}
			assert.Contains(t, gaps, protect, "the guard's window is declared")
			if tc.abi > 0 {
				for _, c := range inherent {
					assert.Contains(t, gaps, c)
				}
				assert.Contains(t, gaps, executor.ControlProcInfo)
				assert.True(t, pl.procRule)
			}
			for _, g := range pl.blocking {
				assert.Contains(t, pl.gaps, g, "a refusing gap is a declared gap")
			}
		})
	}
}

// TestLoopbackPlan: under network none, where a network namespace can be
// had, Landlock leaves TCP alone and the filter keeps only the families
// that stay in the namespace; the executor's (root) or the child's own
// (user namespace). Config.NoLoopback, or no namespace, keeps the filter
// refusing every family but AF_UNIX.
func TestLoopbackPlan(t *testing.T) {
	pr := profile(t, policy.NetworkNone, false)
	root := features{abi: 7, seccomp: true, arch: "amd64"}
	child := features{abi: 7, seccomp: true, arch: "amd64", netnsWhy: "pretended", mounts: mountsUserNS}
	neither := features{abi: 7, seccomp: true, arch: "amd64", netnsWhy: "pretended", childNetWhy: "pretended", mounts: mountsUserNS}
	loop := filterSpec{loopback: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}
	none := filterSpec{inet: true, unix: true, ioURing: true, kernelObjects: true, otherProcesses: true}
	for _, tc := range []struct {
		name            string
		f               features
		cfg             Config
		loopback, child bool
		filter          filterSpec
	}{
		{"root", root, Config{}, true, false, loop},
		{"user namespace", child, Config{}, false, true, loop},
		{"neither", neither, Config{}, false, false, none},
		{"NoLoopback", root, Config{NoLoopback: true}, false, false, none},
		// Found by an attack review: without the filter nothing bounds
		// the families (vsock reaches the hypervisor from any namespace).
		{"no seccomp", features{abi: 7, arch: "amd64"}, Config{}, false, false, filterSpec{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := assess(pr, tc.f, tc.cfg)
			assert.Equal(t, tc.loopback, pl.loopback)
			assert.Equal(t, tc.child, pl.loopbackChild)
			assert.Equal(t, tc.filter, pl.filter)
			if !tc.f.seccomp {
				// UDP and the other sockets stay reported.
				assert.Contains(t, controls(pl.blocking), executor.ControlNetUDP)
				return
			}
			assert.Empty(t, pl.blocking)
			if tc.loopback || tc.child {
				assert.Zero(t, pl.ruleset.HandledNet, "the namespace confines TCP")
			} else {
				assert.NotZero(t, pl.ruleset.HandledNet, "every TCP bind and connect denied")
			}
		})
	}
	full := assess(profile(t, policy.NetworkFull, false), root, Config{})
	assert.False(t, full.loopback || full.loopbackChild, "network full has the host's network")
}

// TestMaxABI: Config.MaxABI caps the kernel's ABI; it never raises it.
func TestMaxABI(t *testing.T) {
	pr := profile(t, policy.NetworkNone, false)
	assert.Equal(t, 3, assess(pr, features{abi: 7, seccomp: true}, Config{MaxABI: 3}).abi)
	assert.Equal(t, 5, assess(pr, features{abi: 5, seccomp: true}, Config{MaxABI: 9}).abi)
}

// TestKernelProtect: by default protect masks are dropped (the guard
// undoes changes); with KernelProtect they are rendered and protection
// is no gap.
func TestKernelProtect(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	mkRepo(t, root)
	pr, err := policyderive.Derive(policy.Coding.Policy(), root, "", root, nil)
	require.NoError(t, err)
	f := features{abi: 7, seccomp: true}

	guard := assess(pr, f, Config{})
	for _, r := range guard.ruleset.FS {
		if r.Path == root {
			assert.NotZero(t, r.Access&ll.AccessFSMakeReg, "the root keeps make_reg: it is granted whole")
		}
	}
	assert.Contains(t, controls(guard.gaps), protect)

	kernel := assess(pr, f, Config{KernelProtect: true})
	assert.NotContains(t, controls(kernel.gaps), protect)
	for _, r := range kernel.ruleset.FS {
		if r.Path == root {
			assert.Zero(t, r.Access&ll.AccessFSMakeReg, "the root is split: no new entries directly in it")
		}
	}
	assert.Equal(t, []string{root}, guard.guardTrees)
}

func mkRepo(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]\n"), 0o644))
}

// TestMountsMitigateMetadata: with a mount namespace (as root, or in a
// user namespace) metadata changes are closed and only their visibility
// stays declared; without one, the reason says why.
func TestMountsMitigateMetadata(t *testing.T) {
	pr := profile(t, policy.NetworkNone, false)
	find := func(pl *plan, subject string) *policyderive.Element {
		for i := range pl.fidelity.Elements {
			if e := &pl.fidelity.Elements[i]; e.Subject == subject {
				return e
			}
		}
		return nil
	}
	for _, m := range []mountMode{mountsRoot, mountsUserNS} {
		pl := assess(pr, features{abi: 7, seccomp: true, mounts: m}, Config{})
		assert.Equal(t, m, pl.mounts)
		e := find(pl, "metadata")
		require.NotNil(t, e)
		assert.Contains(t, e.Mitigated, "read-only")
		v := find(pl, "metadata visibility")
		require.NotNil(t, v)
		assert.True(t, v.Inherent)
		assert.Contains(t, v.Detail, "stat")
	}
	pl := assess(pr, features{abi: 7, seccomp: true, mountsWhy: "pretended"}, Config{})
	assert.Equal(t, mountsNone, pl.mounts)
	e := find(pl, "metadata")
	require.NotNil(t, e)
	assert.Empty(t, e.Mitigated)
	assert.Contains(t, e.Reason, "pretended")
	assert.Nil(t, find(pl, "metadata visibility"))
	// No Landlock layer: nothing to pair the namespace with.
	assert.Equal(t, mountsNone, assess(pr, features{abi: 0, mounts: mountsRoot}, Config{}).mounts)
}

// TestCgroupMitigatesProcessTree: with a cgroup per command survivors
// are killed, so the process tree is no gap; without, the reason says
// why.
func TestCgroupMitigatesProcessTree(t *testing.T) {
	pr := profile(t, policy.NetworkNone, false)
	with := assess(pr, features{abi: 7, seccomp: true, cgroup: "/sys/fs/cgroup/x"}, Config{})
	assert.True(t, with.cgroup)
	assert.NotContains(t, controls(with.gaps), executor.ControlProcessTree)
	without := assess(pr, features{abi: 7, seccomp: true, cgroupWhy: "pretended"}, Config{})
	assert.False(t, without.cgroup)
	assert.Contains(t, controls(without.gaps), executor.ControlProcessTree)
	for _, g := range without.gaps {
		if g.Control == executor.ControlProcessTree {
			assert.Contains(t, g.Reason, "pretended")
		}
	}
}
