//go:build linux

package bwrap

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/seccompbpf"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

func testRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return root
}

// TestStaleMaskNotCreated runs a sandbox from a profile derived while a
// denied file existed, after the file was removed: bwrap would create
// the mask's mount point (an empty file) in the writable root on the
// host. The executor leaves that mask out, re-derives once, and the host
// listing stays as it is. Twin: the same stale command line run
// directly does create the file.
func TestStaleMaskNotCreated(t *testing.T) {
	x, err := New(Config{})
	testenv.SkipUnavailable(t, testenv.Bwrap, err)
	defer x.Close()
	root := testRoot(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	env := filepath.Join(root, "sub", ".env")
	require.NoError(t, os.MkdirAll(filepath.Dir(env), 0o755))
	require.NoError(t, os.WriteFile(env, []byte("SECRET=1\n"), 0o600))
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*"}
	stale, err := policyderive.Derive(p, root, "", root, nil)
	require.NoError(t, err)
	require.True(t, hasMask(stale, env), "control: the profile masks the file")
	require.NoError(t, os.Remove(env))

	derives := 0
	x.derive = func(context.Context, *policy.Checker, string, []policy.Grant, []policyderive.Mask) (*policyderive.Profile, error) {
		derives++
		return stale, nil
	}
	req := &executor.Request{Command: "ls -A sub; echo done", Dir: root, Root: root, Policy: p, Env: []string{"PATH=/usr/bin:/bin"}}
	res, err := x.Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "done\n", string(res.Stdout))
	assert.Equal(t, 2, derives, "a vanished mask path makes the executor derive again")
	assert.NoFileExists(t, env, "no host path is created")

	pl, err := newPlan(stale, x.feat.disableUserns)
	require.NoError(t, err)
	argv := append([]string{x.feat.path}, splitNUL(pl.encoded)...)
	argv = append(argv, "--", "/bin/true")
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.FileExists(t, env, "twin: bwrap itself creates the missing mount point on the host")
}

// TestVanishedDestinationRetried: a denied file in a read-only grant is
// masked; when another process removes it between the plan and bwrap's
// mount (here: the hook before the start), bwrap cannot create the mount
// point in the read-only bind and fails before the command starts. Run
// plans once more from the tree as it is and the command runs. Twin: with
// the file left in place, the same command runs at once and cannot read
// it.
func TestVanishedDestinationRetried(t *testing.T) {
	x, err := New(Config{})
	testenv.SkipUnavailable(t, testenv.Bwrap, err)
	defer x.Close()
	root := testRoot(t)
	dir := testRoot(t)
	env := filepath.Join(dir, ".env")
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*"}
	req := &executor.Request{Command: "cat " + env + " 2>/dev/null; echo done", Dir: root, Root: root, Policy: p,
		Env: []string{"PATH=/usr/bin:/bin"}, Grants: []policy.Grant{{Path: dir, Op: policy.Read}}}

	for _, vanish := range []bool{false, true} {
		require.NoError(t, os.WriteFile(env, []byte("SECRET=1\n"), 0o600))
		starts := 0
		x.beforeStart = func() {
			if starts++; vanish && starts == 1 {
				require.NoError(t, os.Remove(env))
			}
		}
		res, err := x.Run(context.Background(), req)
		require.NoError(t, err, "vanish=%v", vanish)
		assert.Equal(t, "done\n", string(res.Stdout), "vanish=%v: the masked file is not read", vanish)
		if vanish {
			assert.Equal(t, 2, starts, "the failed setup is planned and started again")
			assert.NoFileExists(t, env, "no host path is created")
		} else {
			assert.Equal(t, 1, starts)
			assert.FileExists(t, env)
		}
	}
}

func hasMask(pr *policyderive.Profile, p string) bool {
	for _, m := range pr.Masks {
		if m.Path == p {
			return true
		}
	}
	return false
}

// TestPlanChecks checks which options the executor looks at before a
// start: destinations inside host binds, and the placeholder.
func TestPlanChecks(t *testing.T) {
	root := testRoot(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), nil, 0o600))
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*"}
	p.Protect.Extra = []string{"ci/deploy.sh"}            // does not exist: a placeholder at ci
	p.Secrets = []string{}                                // host secrets under /etc would be checked too
	p.System = []string{"/usr", "/bin", "/lib", "/lib64"} // and the host's private files there
	pr, err := policyderive.Derive(p, root, "", root, nil)
	require.NoError(t, err)
	pl, err := newPlan(pr, true)
	require.NoError(t, err)

	checked := map[string]bool{}
	for _, i := range pl.checks {
		if abspath.Within(pl.options[i].dest, root) { // not the host's private files under /usr
			checked[pl.options[i].dest] = pl.options[i].placeholder
		}
	}
	assert.Equal(t, map[string]bool{filepath.Join(root, ".env"): false, filepath.Join(root, "ci"): true}, checked)
	assert.Contains(t, pl.placeholders, filepath.Join(root, "ci"))
	args := splitNUL(pl.encoded)
	assert.Equal(t, len(args), pl.nargs)
	assert.Contains(t, args, "--disable-userns")
	assert.Equal(t, "--chdir", args[len(args)-2])
}

func TestUnknownOption(t *testing.T) {
	_, err := parseOptions([]string{"--unshare-all", "--frobnicate", "x"}, nil, false)
	var ue *UnknownOptionError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "--frobnicate", ue.Option)
	_, err = parseOptions([]string{"--bind", "/a"}, nil, false)
	assert.ErrorAs(t, err, &ue, "a missing operand")
}

// TestOverMountPoints checks that a derivation given the placeholder
// mount points live in this process (DeriveWith) derives one that exists
// as the placeholder instead of masking and pinning inside it. Twin: the
// same derivation without them sees the mount point's empty directory.
func TestOverMountPoints(t *testing.T) {
	root := testRoot(t)
	p := policy.Coding.Policy()
	p.Protect.Extra = []string{"ci/deploy.sh"} // a placeholder at ci
	fresh, err := policyderive.Derive(p, root, "", root, nil)
	require.NoError(t, err)
	ph := fresh.Placeholders()
	require.Len(t, ph, 1)
	ci := ph[0].Path

	_, gen0 := backend.Default.Live()
	backend.Default.Lock()
	backend.Default.Acquire(ph) // ci does not exist: "created" by this process
	backend.Default.Unlock()
	require.NoError(t, os.Mkdir(ci, 0o755)) // what bwrap does
	live, gen := backend.Default.Live()
	assert.NotEqual(t, gen0, gen, "a new live mount point is a new generation")
	assert.Equal(t, ph, live)

	pc, err := policy.NewChecker(p, root, "")
	require.NoError(t, err)
	d := policyderive.NewDeriver(policyderive.Options{})
	seen, err := d.DeriveWith(context.Background(), pc, root, nil, nil)
	require.NoError(t, err)
	assert.NotEqual(t, fresh.Key(), seen.Key(), "control: the mount point changes a derivation that is not told")
	got, err := d.DeriveWith(context.Background(), pc, root, nil, live)
	require.NoError(t, err)
	assert.Equal(t, fresh.Masks, got.Masks)
	assert.Equal(t, fresh.Pinned, got.Pinned)
	assert.Equal(t, fresh.Key(), got.Key())

	assert.Empty(t, backend.Default.Release(ph))
	assert.NoDirExists(t, ci, "the last user removes what this process created")
	live, gen2 := backend.Default.Live()
	assert.Empty(t, live)
	assert.NotEqual(t, gen, gen2)
}

// TestDiagnoseUserns checks the cause named for failing user namespaces,
// from the sysctls as data.
func TestDiagnoseUserns(t *testing.T) {
	tests := []struct {
		name    string
		euid    int
		setuid  bool
		sysctls map[string]string
		want    usernsCause
	}{
		{"ubuntu 24.04 user", 1000, false, map[string]string{sysctlAppArmor: "1", sysctlMaxUserns: "63000"}, causeAppArmor},
		{"ubuntu, restriction lifted", 1000, false, map[string]string{sysctlAppArmor: "0", sysctlMaxUserns: "63000"}, causeUnknown},
		{"apparmor does not restrict root", 0, false, map[string]string{sysctlAppArmor: "1"}, causeUnknown},
		{"no user namespaces at all", 0, false, map[string]string{sysctlMaxUserns: "0"}, causeMaxUserns},
		{"max before apparmor", 1000, false, map[string]string{sysctlAppArmor: "1", sysctlMaxUserns: "0"}, causeMaxUserns},
		{"old debian kernel", 1000, false, map[string]string{sysctlUsernsClone: "0"}, causeUsernsClone},
		{"setuid bwrap", 1000, true, map[string]string{}, causeSetuid},
		{"container", 1000, false, map[string]string{sysctlMaxUserns: "15000"}, causeUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &features{euid: tt.euid, setuid: tt.setuid, sysctls: tt.sysctls, path: "/usr/bin/bwrap"}
			assert.Equal(t, tt.want, usernsCauseOf(f))
			err := diagnoseUserns(f, "bwrap: No permissions to create new namespace")
			assert.NotEmpty(t, err.Reason)
			assert.NotEmpty(t, err.Fix)
			assert.True(t, errors.Is(err, errors.ErrUnsupported))
		})
	}
}

func TestReadSysctls(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "kernel"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "user"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kernel", "apparmor_restrict_unprivileged_userns"), []byte("1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "user", "max_user_namespaces"), []byte("63000\n"), 0o644))
	assert.Equal(t, map[string]string{sysctlAppArmor: "1", sysctlMaxUserns: "63000"}, readSysctls(dir))
	assert.Empty(t, readSysctls(filepath.Join(dir, "missing")))
}

func TestParseHelp(t *testing.T) {
	assert.Equal(t, "0.8.0", parseVersion("bubblewrap 0.8.0\n"))
	flags := parseFlags("usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]\n\n    --help   Print this help\n    --args FD   Parse\n    --disable-userns   Disable\n")
	assert.Equal(t, map[string]bool{"--help": true, "--args": true, "--disable-userns": true}, flags)
}

func TestMapSignal(t *testing.T) {
	tests := []struct {
		in, code int
		signal   string
	}{
		{0, 0, ""}, {1, 1, ""}, {128, 128, ""}, {129, -1, "hangup"}, {137, -1, "killed"}, {143, -1, "terminated"}, {192, -1, "signal 64"}, {193, 193, ""}, {255, 255, ""},
	}
	for _, tt := range tests {
		r := &executor.Result{ExitCode: tt.in}
		mapSignal(r)
		assert.Equal(t, tt.code, r.ExitCode, "%d", tt.in)
		assert.Equal(t, tt.signal, r.Signal, "%d", tt.in)
	}
}

// TestPlanSeccomp checks when the plan carries the seccomp program that
// refuses socket(AF_UNIX) and io_uring (its semantics are
// internal/seccompbpf's tests'): for a policy that names no socket, and
// not for one whose path rule names a socket (the twin: that socket must
// stay reachable, so the sockets found are masked instead and the gap is
// declared).
func TestPlanSeccomp(t *testing.T) {
	root := testRoot(t)
	sock := filepath.Join(root, "d.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	want, err := seccompbpf.Build(seccompbpf.Spec{Unix: true, IOURing: true}, runtime.GOARCH)
	require.NoError(t, err)

	p := policy.Coding.Policy()
	pr, err := policyderive.Derive(p, root, "", root, nil)
	require.NoError(t, err)
	pl, err := newPlan(pr, true)
	require.NoError(t, err)
	assert.Equal(t, seccompbpf.Bytes(want), pl.seccomp)
	assert.True(t, slices.ContainsFunc(pl.fidelity.Elements, func(e policyderive.Element) bool {
		return e.Control == executor.ControlNetUnix && e.Class == policyderive.Exact && e.Subject == "unix sockets"
	}), "net-unix is enforced")
	assert.False(t, slices.ContainsFunc(pl.fidelity.Looser(), func(e policyderive.Element) bool { return e.Control == executor.ControlNetUnix }),
		"no Unix-socket gap is left")

	p.PathRules = append(p.PathRules, policy.PathRule{Pattern: sock, Action: policy.Allow})
	pr, err = policyderive.Derive(p, root, "", root, nil)
	require.NoError(t, err)
	require.Equal(t, []string{sock}, pr.Sockets)
	pl, err = newPlan(pr, true)
	require.NoError(t, err)
	assert.Nil(t, pl.seccomp, "a named socket: no filter")
	assert.True(t, slices.ContainsFunc(pl.fidelity.Looser(), func(e policyderive.Element) bool { return e.Control == executor.ControlNetUnix }),
		"and the gap is declared")
}

// TestExplainIsRun: the command line Explain shows (and sandbox-probe
// derive prints) is the one Run executes, read back from the running
// bwrap's /proc/PID/cmdline (options inline, as on a bwrap without
// --args), apart from the descriptors Run adds (--json-status-fd, and
// --seccomp, which Explain's fidelity names) and the hidden files, which
// Run binds from descriptors as empty unreadable files.
func TestExplainIsRun(t *testing.T) {
	x, err := New(Config{})
	testenv.SkipUnavailable(t, testenv.Bwrap, err)
	defer x.Close()
	x.argsInline = true
	root := testRoot(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("K=V\n"), 0o600))
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*"}
	req := &executor.Request{Command: "sleep 30", Root: root, Dir: root, Policy: p, Env: []string{"PATH=/usr/bin:/bin", "A=b c"}}
	argv, fid, err := x.Explain(context.Background(), req)
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(fid.Elements, func(e policyderive.Element) bool { return e.Subject == "mask "+filepath.Join(root, ".env") }), "control: the plan masks the file")

	proc, err := x.Start(context.Background(), req)
	require.NoError(t, err)
	defer proc.Kill()
	// The leader is exec'ing bwrap right after Start: wait until its
	// command line is bwrap's (it was read empty once, mid-exec).
	cmdline := "/proc/" + strconv.Itoa(proc.(interface{ Pid() int }).Pid()) + "/cmdline"
	var ran []string
	require.Eventually(t, func() bool {
		raw, err := os.ReadFile(cmdline)
		ran = strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
		return err == nil && ran[0] == argv[0]
	}, 10*time.Second, 5*time.Millisecond, "the leader's command line: %q", ran)
	var got []string
	dataMasks := 0
	for i := 0; i < len(ran); i++ {
		if ran[i] == "--" {
			got = append(got, ran[i:]...)
			break
		}
		if ran[i] == "--json-status-fd" || ran[i] == "--seccomp" {
			i++
			continue
		}
		if ran[i] == "--perms" && i+4 < len(ran) && ran[i+1] == "0000" && ran[i+2] == "--ro-bind-data" {
			// A hidden file as Run binds it (dataOpts: an empty
			// unreadable file from a descriptor), shown by Explain in the
			// form a command line can carry.
			dataMasks++
			got = append(got, "--ro-bind", "/dev/null", ran[i+4])
			i += 4
			continue
		}
		got = append(got, ran[i])
	}
	assert.Positive(t, dataMasks, "control: Run binds hidden files as empty unreadable files")
	assert.Equal(t, argv, got, "Run's command line is the explained one")
	assert.Contains(t, got, filepath.Join(root, ".env"), "control: the mask is on it")
}

// TestWithoutNewSession: on a terminal of the command's own, the
// --new-session option is left out by its place, never by value: an
// operand spelled like it (a link named --new-session) stays, and the
// options after it keep their operands.
func TestWithoutNewSession(t *testing.T) {
	ops, err := parseOptions([]string{"--unshare-user", "--new-session", "--symlink", "--new-session", "/x/link", "--tmpfs", "/etc/ssl/private", "--chdir", "/w"}, nil, false)
	require.NoError(t, err)
	skip := withoutNewSession(ops, map[int]bool{})
	opts, _ := encode(ops, skip)
	assert.Equal(t, []string{"--unshare-user", "--symlink", "--new-session", "/x/link", "--tmpfs", "/etc/ssl/private", "--chdir", "/w"}, splitNUL(opts))
	opts, _ = encode(ops, nil)
	assert.Equal(t, "--new-session", splitNUL(opts)[1], "twin: without a terminal it stays")
}
