//go:build linux

package bwrap_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/internal/backendtest"
	"github.com/cordon-sandbox/cordon/policy"
)

var gitEnv = conformance.WithEnv("GIT_CONFIG_GLOBAL=/dev/null")

// suiteTempDir keeps the suite's fixtures out of /tmp: the sandbox's
// /tmp is private, so an "outside" directory under /tmp is invisible even
// where the policy lets commands read it (trusted-read-outside), while the
// root and the probe directory are bound back at their paths. The
// unprivileged run sets TMPDIR under /tmp; /var/tmp is writable by every
// user. Roots under /tmp are tested by TestConformanceRootUnderTmp.
func suiteTempDir(t *testing.T) []conformance.Option {
	dir := os.TempDir()
	if dir != "/tmp" && !strings.HasPrefix(dir, "/tmp/") {
		return nil
	}
	base, err := os.MkdirTemp("/var/tmp", "cordon-bwrap-suite-")
	if err != nil {
		t.Logf("fixtures stay under %s (%v): trusted-read-outside cannot see its outside directory there", dir, err)
		return nil
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return []conformance.Option{conformance.WithTempDir(base)}
}

// TestConformance runs the shared suite against the real executor, as
// whatever user runs the tests (root, and uid 65534 in the unprivileged
// run).
func TestConformance(t *testing.T) {
	opts := append([]conformance.Option{gitEnv}, suiteTempDir(t)...)
	conformance.Run(t, func(t *testing.T) executor.Executor { return newExecutor(t, bwrap.Config{}) }, opts...)
}

// TestConformanceOutcomes checks that the declared gaps hide no leak:
// Describe declares gaps on fs-read (paths resolved at start), net-unix
// (sockets in read-only grants) and fs-new-files, which would let a case
// on those controls that leaks pass as "gap". Here every case of the
// filesystem, protect and Unix-socket layers must come out as expected,
// except the two the backend cannot enforce: a denied file created
// during the command (fs-new-files) and trusted mode with a bare-name
// deny, which strict mode refuses (see TestBestEffortTrustedDenied).
func TestConformanceOutcomes(t *testing.T) {
	newExecutor(t, bwrap.Config{}) // skips where bwrap is unavailable
	opts := append([]conformance.Option{gitEnv, conformance.Select("filesystem", "protect", "net-unix-*", "socket-*", "net-abstract-unix")}, suiteTempDir(t)...)
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return bwrap.New(bwrap.Config{}) }, opts...)
	require.NoError(t, err)
	gaps := map[string]bool{"denied-new-file": true, "trusted-denied-paths": true}
	for _, c := range rep.Cases {
		if gaps[c.ID] {
			assert.Equal(t, conformance.Gap, c.Outcome, "%s: %s %v", c.ID, c.Reason, c.Evidence)
			continue
		}
		if c.Outcome == conformance.Unsupported {
			t.Logf("%s unsupported here: %s", c.ID, c.Reason)
			continue
		}
		assert.True(t, c.Passed, "%s: %s: %s\n%v\n%v", c.ID, c.Outcome, c.Reason, c.Evidence, c.Twin)
		assert.Equal(t, c.Expected, c.Outcome, "%s", c.ID)
	}
}

// TestConformanceRootUnderTmp runs the cases that matter for a workspace
// under /tmp ($TMPDIR in the unprivileged run), where the root and the probe directory are bound over the
// sandbox's private /tmp.
func TestConformanceRootUnderTmp(t *testing.T) {
	dir, err := os.MkdirTemp("", "cb-") // short: the fixture's Unix socket paths must fit in 108 bytes
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	conformance.Run(t, func(t *testing.T) executor.Executor { return newExecutor(t, bwrap.Config{}) }, gitEnv,
		conformance.WithTempDir(dir),
		conformance.Select("cwd", "env", "write-inside-root", "write-outside", "read-home-secrets", "system-paths",
			"denied-paths", "symlink-escape", "readonly-mode", "protect-git", "protect-rename-recreate", "protect-new-repo", "git-works"))
}

// TestBestEffortTrustedDenied runs trusted-denied-paths in best effort:
// the bare-name deny cannot be masked in all of "/", but it is masked in
// the searched trees (root and home) and the literal one everywhere.
func TestBestEffortTrustedDenied(t *testing.T) {
	x := newExecutor(t, bwrap.Config{BestEffort: true})
	opts := append([]conformance.Option{conformance.Select("trusted-denied-paths")}, suiteTempDir(t)...)
	rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return x, nil }, opts...)
	require.NoError(t, err)
	require.Len(t, rep.Cases, 1)
	c := rep.Cases[0]
	assert.Equal(t, conformance.Denied, c.Outcome, "%s: %v", c.Reason, c.Evidence)
	caps := x.Describe(context.Background())
	assert.True(t, caps.BestEffort)
	_, gap := caps.Gap(executor.ControlFSRead)
	assert.True(t, gap, "the unenforced bare-name deny is listed: %v", caps.Gaps)
	assert.NotContains(t, caps.Enforced, executor.ControlFSRead)
}

// ws is a workspace fixture: root, home and an outside directory.
type ws struct {
	base, root, home, outside string
}

func newWS(t *testing.T) *ws {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	w := &ws{base: base, root: filepath.Join(base, "root"), home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{w.root, w.home, w.outside} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.outside, "canary.txt"), []byte("canary\n"), 0o644))
	return w
}

func (w *ws) req(cmd string, p *policy.Policy) *executor.Request {
	if p == nil {
		p = policy.Coding.Policy()
	}
	return &executor.Request{
		Command: cmd, Dir: w.root, Root: w.root, Home: w.home, Policy: p,
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + w.home}, Timeout: 30 * time.Second,
	}
}

func run(t *testing.T, x executor.Executor, req *executor.Request) *executor.Result {
	t.Helper()
	res, err := x.Run(context.Background(), req)
	require.NoError(t, err)
	return res
}

// listing returns every path below dir with its type, mode and size, as
// the host sees it.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size := fi.Size()
		if fi.IsDir() {
			size = 0
		}
		out = append(out, fmt.Sprintf("%s %v %d", strings.TrimPrefix(p, dir), fi.Mode(), size))
		return nil
	}))
	return out
}

// placeholderPolicy is the coding preset protecting ci/deploy.sh, which
// does not exist: the sandbox gets a read-only placeholder at ci.
func placeholderPolicy() *policy.Policy {
	p := policy.Coding.Policy()
	p.Protect.Extra = []string{"ci/deploy.sh"}
	return p
}

// TestNoHostPathCreated checks that a placeholder (the read-only ci that
// keeps a protected ci/deploy.sh from being created) exists only while
// sandboxes use it: the host's listing of the root is the same before
// and after single runs, concurrent runs, and a background process
// overlapping runs — while inside, ci is there and cannot be written.
func TestNoHostPathCreated(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	p := placeholderPolicy()
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "file.txt"), []byte("x\n"), 0o644))
	before := listing(t, w.root)

	res := run(t, x, w.req(`test -d ci && echo placeholder; touch ci/deploy.sh 2>/dev/null && echo planted; touch new.txt && echo wrote`, p))
	assert.Equal(t, "placeholder\nwrote\n", string(res.Stdout), "inside: ci is a read-only placeholder; writes elsewhere in the root work")
	require.NoError(t, os.Remove(filepath.Join(w.root, "new.txt")), "control: the write landed on the host")
	assert.Equal(t, before, listing(t, w.root), "after one run")

	bg, err := x.Start(context.Background(), w.req("sleep 30", p))
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := os.Lstat(filepath.Join(w.root, "ci")); return err == nil }, 5*time.Second, 5*time.Millisecond,
		"control: while a sandbox runs, its mount point exists on the host")
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			res, err := x.Run(context.Background(), w.req(`test -d ci && touch ci/deploy.sh 2>/dev/null; ls -A ci | wc -l`, p))
			if assert.NoError(t, err) {
				assert.Equal(t, "0\n", string(res.Stdout), "concurrent sandboxes share the same empty, read-only placeholder")
				assert.Empty(t, res.Violations)
			}
		})
	}
	wg.Wait()
	_, err = os.Lstat(filepath.Join(w.root, "ci"))
	require.NoError(t, err, "the background process still uses the placeholder")
	require.NoError(t, bg.Kill())
	assert.Equal(t, before, listing(t, w.root), "after the background process")
}

// TestPlaceholderKeepsHostContent checks that a placeholder mount point
// a host program filled meanwhile (the user creating ci/ while a sandbox
// runs) is left alone.
func TestPlaceholderKeepsHostContent(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	p, err := x.Start(context.Background(), w.req("sleep 30", placeholderPolicy()))
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := os.Lstat(filepath.Join(w.root, "ci")); return err == nil }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "ci", "README"), []byte("ci\n"), 0o644))
	require.NoError(t, p.Kill())
	b, err := os.ReadFile(filepath.Join(w.root, "ci", "README"))
	require.NoError(t, err)
	assert.Equal(t, "ci\n", string(b))
}

// TestArgsThroughDescriptor passes an environment far larger than a
// pipe's buffer through --args, and checks from outside that values stay out of the bwrap
// process's command line.
func TestArgsThroughDescriptor(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	big := strings.Repeat("v", 100<<10) // each below execve's 128 KiB per string
	req := w.req(`printf %s "$BIG0$BIG1$BIG2$BIG3" | wc -c; echo "$SECRET"; sleep 30`, nil)
	for i := range 4 {
		req.Env = append(req.Env, fmt.Sprintf("BIG%d=%s", i, big))
	}
	req.Env = append(req.Env, "SECRET=cordon-secret-token")
	p, err := x.Start(context.Background(), req)
	require.NoError(t, err)
	defer p.Kill()
	var out strings.Builder
	require.Eventually(t, func() bool {
		b, _ := p.ReadOutput()
		out.Write(b)
		return strings.Contains(out.String(), "cordon-secret-token")
	}, 10*time.Second, 10*time.Millisecond, "output so far: %q", &out)
	assert.Equal(t, fmt.Sprintf("%d\ncordon-secret-token\n", 4*len(big)), out.String())
	pid := p.(interface{ Pid() int }).Pid()
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	require.NoError(t, err)
	assert.Contains(t, string(cmdline), "--args", "control: this is bwrap's command line")
	assert.NotContains(t, string(cmdline), "cordon-secret-token")
	assert.NotContains(t, string(cmdline), w.root, "the mounts are behind --args too")
}

// TestRequestErrors checks requests refused before anything runs (a NUL
// in an environment entry would otherwise smuggle options into --args),
// with the shared table.
func TestRequestErrors(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	backendtest.CheckRequestErrors(t, x, w.root, func(cmd string) *executor.Request { return w.req(cmd, nil) })
}

// TestCompiledOnce: a request carrying its compiled policy is compiled no
// more per command.
func TestCompiledOnce(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	backendtest.CheckCompiledOnce(t, x, newWS(t).req("", nil))
}

// TestExitStatus checks exit codes and bwrap's 128+N report of a signal,
// mapped back.
func TestExitStatus(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	tests := []struct {
		cmd    string
		code   int
		signal string
	}{
		{"exit 0", 0, ""},
		{"exit 3", 3, ""},
		{"exit 128", 128, ""},
		{"kill -TERM $$", -1, "terminated"},
		{"kill -KILL $$", -1, "killed"},
		{"exit 255", 255, ""},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			res := run(t, x, w.req(tt.cmd, nil))
			assert.Equal(t, tt.code, res.ExitCode)
			assert.Equal(t, tt.signal, res.Signal)
			assert.False(t, res.TimedOut)
		})
	}
}

// TestSetupError checks that a sandbox bwrap cannot set up is an error,
// not the command's exit status 1: here the working directory does not
// exist (and is not created).
func TestSetupError(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	req := w.req("true", nil)
	req.Dir = filepath.Join(w.root, "missing")
	_, err := x.Run(context.Background(), req)
	var se *bwrap.SetupError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, bwrap.ErrSetup)
	assert.NotEmpty(t, se.Message)
	assert.NoDirExists(t, req.Dir)

	res := run(t, x, w.req("echo bwrap: not really >&2; exit 1", nil))
	assert.Equal(t, 1, res.ExitCode, "control: a command's own exit 1 is a result")
}

// TestUnavailable checks that New names a missing, broken or unusable
// bwrap with *executor.UnavailableError and the cause. The unusable ones
// are wrappers around the real bwrap that fail the way hosts do.
func TestUnavailable(t *testing.T) {
	bw := newExecutor(t, bwrap.Config{}).Path()
	dir := t.TempDir()
	wrapper := func(name, failWhen, msg string) string {
		p := filepath.Join(dir, name)
		script := fmt.Sprintf("#!/bin/sh\ncase \" $* \" in *\" --version \"*|*\" --help \"*) exec %s \"$@\";; esac\n"+
			"case \" $* \" in %s) echo %q >&2; exit 1;; esac\nexec %s \"$@\"\n", bw, failWhen, msg, bw)
		require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
		return p
	}
	tests := []struct {
		path  string
		cause error
	}{
		{"/nonexistent/bwrap", bwrap.ErrNotInstalled},
		{"cordon-no-such-bwrap", bwrap.ErrNotInstalled},
		{"/", bwrap.ErrNotInstalled},
		{"/bin/false", bwrap.ErrVersion},
		{wrapper("no-userns", "*", "bwrap: No permissions to create new namespace"), bwrap.ErrUserNamespaces},
		{wrapper("no-proc", `*" --proc "*`, "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"), bwrap.ErrProc},
		{wrapper("no-tmpfs", `*" --tmpfs "*`, "bwrap: Can't mount tmpfs"), bwrap.ErrTrial},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			_, err := bwrap.New(bwrap.Config{Path: tt.path})
			var ue *executor.UnavailableError
			require.ErrorAs(t, err, &ue)
			assert.ErrorIs(t, err, errors.ErrUnsupported)
			assert.ErrorIs(t, err, tt.cause)
			assert.Equal(t, bwrap.Backend, ue.Backend)
			assert.NotEmpty(t, ue.Fix)
		})
	}
	x, err := bwrap.New(bwrap.Config{Path: wrapper("no-disable-userns", `*" --disable-userns "*`, "bwrap: no")})
	require.NoError(t, err, "a bwrap refusing --disable-userns runs without it")
	defer x.Close()
	assert.Contains(t, x.Describe(context.Background()).Info["nested_user_namespaces"], "allowed")
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  bwrap.Config
		ok   bool
	}{
		{"zero", bwrap.Config{}, true},
		{"binds", bwrap.Config{ExtraBinds: []bwrap.Bind{{Path: "/opt"}, {Path: "/srv", Write: true}}}, true},
		{"relative bind", bwrap.Config{ExtraBinds: []bwrap.Bind{{Path: "opt"}}}, false},
		{"nul path", bwrap.Config{Path: "/usr/bin/bwrap\x00"}, false},
		{"negative wait", bwrap.Config{WaitDelay: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			var ce *bwrap.ConfigError
			assert.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, bwrap.ErrInvalidConfig)
			_, err = bwrap.New(tt.cfg)
			assert.ErrorIs(t, err, bwrap.ErrInvalidConfig)
		})
	}
}

// TestDescribe checks what the executor declares on this host.
func TestDescribe(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	caps := x.Describe(context.Background())
	assert.Equal(t, bwrap.Backend, caps.Backend)
	assert.True(t, caps.Sandboxed)
	assert.False(t, caps.BestEffort)
	for _, c := range []executor.Control{executor.ControlFSWrite, executor.ControlFSMetadata, executor.ControlProtect,
		executor.ControlNetTCP, executor.ControlNetUDP, executor.ControlNetUnix, executor.ControlNetAbstract, executor.ControlSignal,
		executor.ControlProcessTree, executor.ControlProcInfo} {
		assert.Contains(t, caps.Enforced, c)
	}
	for _, c := range []executor.Control{executor.ControlFSNewFiles, executor.ControlFSRead} {
		g, ok := caps.Gap(c)
		if assert.True(t, ok, "gap %s declared", c) {
			assert.NotEmpty(t, g.Reason)
		}
		assert.NotContains(t, caps.Enforced, c)
	}
	assert.Equal(t, x.Version(), caps.Info["bwrap_version"])
	assert.Equal(t, x.Path(), caps.Info["bwrap"])
	assert.Contains(t, caps.Info, "user_namespaces")
	assert.Equal(t, strconv.Itoa(os.Geteuid()), caps.Info["uid"])
}

// TestStrictRefusesLooser checks strict mode and its best-effort twin on
// a profile bwrap cannot enforce: trusted reads of "/" with a bare-name
// deny, which no mount can mask outside the searched trees.
func TestStrictRefusesLooser(t *testing.T) {
	w := newWS(t)
	p := policy.Trusted.Policy()
	p.DeniedPaths = []string{".env*"}
	require.NoError(t, os.WriteFile(filepath.Join(w.root, ".env"), []byte("SECRET=root\n"), 0o600))

	strict := newExecutor(t, bwrap.Config{})
	_, err := strict.Run(context.Background(), w.req("cat .env; touch ran", p))
	var ue *executor.UnenforceableError
	require.ErrorAs(t, err, &ue)
	require.NotEmpty(t, ue.Gaps)
	assert.Equal(t, executor.ControlFSRead, ue.Gaps[0].Control)
	assert.NoFileExists(t, filepath.Join(w.root, "ran"), "nothing ran")

	loose := newExecutor(t, bwrap.Config{BestEffort: true})
	res := run(t, loose, w.req("cat .env; touch ran", p))
	assert.NotContains(t, string(res.Stdout), "SECRET", "the root's .env is still masked")
	assert.FileExists(t, filepath.Join(w.root, "ran"))
	_, gap := loose.Describe(context.Background()).Gap(executor.ControlFSRead)
	assert.True(t, gap)
}

// TestExtraBinds checks that extra binds open what the policy asks
// about, read-only or read-write, and never what it denies.
func TestExtraBinds(t *testing.T) {
	w := newWS(t)
	canary := filepath.Join(w.outside, "canary.txt")
	x := newExecutor(t, bwrap.Config{ExtraBinds: []bwrap.Bind{{Path: w.outside}}})
	res := run(t, x, w.req(fmt.Sprintf("cat %[1]s; echo changed > %[1]s", canary), nil))
	assert.Equal(t, "canary\n", string(res.Stdout), "a read-only extra bind is readable")
	b, _ := os.ReadFile(canary)
	assert.Equal(t, "canary\n", string(b), "and not writable")

	control := newExecutor(t, bwrap.Config{})
	res = run(t, control, w.req("cat "+canary, nil))
	assert.Empty(t, string(res.Stdout), "control: without the bind, outside is invisible")

	rw := newExecutor(t, bwrap.Config{ExtraBinds: []bwrap.Bind{{Path: w.outside, Write: true}}})
	run(t, rw, w.req(fmt.Sprintf("echo coding > %s", canary), nil))
	b, _ = os.ReadFile(canary)
	assert.Equal(t, "canary\n", string(b), "coding denies writes outside the root: a read-write extra bind does not override it")
	run(t, rw, w.req(fmt.Sprintf("echo trusted > %s", canary), policy.Trusted.Policy()))
	b, _ = os.ReadFile(canary)
	assert.Equal(t, "trusted\n", string(b), "trusted asks about writes outside: the extra bind approves them")

	p := policy.Trusted.Policy()
	p.DeniedPaths = []string{w.outside}
	res = run(t, rw, w.req("cat "+canary+"; echo denied > "+canary, p))
	b, _ = os.ReadFile(canary)
	assert.Equal(t, "trusted\n", string(b), "a denied path stays denied")
	assert.NotContains(t, string(res.Stdout), "trusted")
}

// TestNestedUserNamespaces checks --disable-userns and its opt-out.
func TestNestedUserNamespaces(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	x := newExecutor(t, bwrap.Config{})
	if x.Describe(context.Background()).Info["nested_user_namespaces"] != "disabled (--disable-userns)" {
		t.Skipf("bwrap %s cannot disable user namespaces", x.Version())
	}
	w := newWS(t)
	cmd := unshare + " --user true && echo created"
	assert.Empty(t, string(run(t, x, w.req(cmd, nil)).Stdout), "the default denies nested user namespaces")
	nested := newExecutor(t, bwrap.Config{NestedUserNamespaces: true})
	assert.Equal(t, "created\n", string(run(t, nested, w.req(cmd, nil)).Stdout), "control: NestedUserNamespaces allows them")
}

// TestTooManyArgs checks that a sandbox beyond bwrap's argument limit is
// refused before it runs.
func TestTooManyArgs(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	req := w.req("touch ran", nil)
	for i := range bwrap.MaxArgs / 3 {
		req.Env = append(req.Env, fmt.Sprintf("V%d=x", i))
	}
	_, err := x.Run(context.Background(), req)
	var ue *executor.UnenforceableError
	require.ErrorAs(t, err, &ue)
	assert.NoFileExists(t, filepath.Join(w.root, "ran"))
	req.Env = req.Env[:len(req.Env)-100]
	res := run(t, x, req)
	assert.Equal(t, 0, res.ExitCode, "control: just under the limit runs: %s", res.Stderr)
}

// TestArgsMatchesRun checks that Args is the sandbox Run uses: the same
// command line run directly denies and allows the same things.
func TestArgsMatchesRun(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.root, ".git", "hooks"), 0o755))
	req := w.req("touch ok; touch .git/hooks/pre-commit; cat "+filepath.Join(w.outside, "canary.txt")+"; echo done", nil)
	argv, err := x.Args(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []string{"--", "/bin/sh", "-c", req.Command}, argv[len(argv)-4:])
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	require.NoError(t, err)
	assert.Equal(t, "done\n", string(out))
	assert.FileExists(t, filepath.Join(w.root, "ok"))
	assert.NoFileExists(t, filepath.Join(w.root, ".git", "hooks", "pre-commit"))

	// A policy strict mode refuses (a bare-name deny that cannot be
	// searched under /) is refused by Args as by Run.
	trusted := policy.Trusted.Policy()
	trusted.DeniedPaths = []string{".env*"}
	_, runErr := x.Run(context.Background(), w.req("true", trusted))
	_, argsErr := x.Args(context.Background(), w.req("true", trusted))
	var ue *executor.UnenforceableError
	require.ErrorAs(t, runErr, &ue, "Run refuses it")
	assert.ErrorAs(t, argsErr, &ue, "and so does Args")
}

// TestMetadata checks fs-metadata on what the sandbox can see but not
// change: denied files and directories (masks), protected paths, System
// paths. chmod, utimes, hard links and renames fail, and the host's
// modes and times are unchanged. Twin: the same on an ordinary file of
// the root takes effect.
func TestMetadata(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	paths := map[string]string{}
	for _, f := range []string{".env", "secret/key", ".git/config", ".git/hooks/pre-commit.sample", "plain"} {
		p := filepath.Join(w.root, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o644))
		paths[f] = p
	}
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*", "secret"}
	targets := []string{".env", "secret", ".git/config", ".git/hooks", ".git/hooks/pre-commit.sample", "/etc/hostname", "/usr/bin"}
	stat := func() map[string]string {
		out := map[string]string{}
		for _, f := range targets {
			p := f
			if !filepath.IsAbs(f) {
				p = filepath.Join(w.root, f)
			}
			if fi, err := os.Lstat(p); err == nil {
				out[f] = fmt.Sprintf("%v %v", fi.Mode(), fi.ModTime().UnixNano())
			}
		}
		return out
	}
	before := stat()
	var script []string
	for _, f := range targets {
		script = append(script, fmt.Sprintf("chmod 777 %[1]s 2>/dev/null && echo chmod %[1]s; touch -d 2001-01-01 %[1]s 2>/dev/null && echo touch %[1]s", f))
	}
	script = append(script, "ln .env l1 2>/dev/null && echo link", "mv .env e2 2>/dev/null && echo mv", "mv .git g2 2>/dev/null && echo mv-git",
		"chmod 600 plain && echo twin-chmod")
	res := run(t, x, w.req(strings.Join(script, "\n"), p))
	assert.Equal(t, "twin-chmod\n", string(res.Stdout), "only the ordinary file changed: %s", res.Stderr)
	assert.Equal(t, before, stat(), "host-side modes and times unchanged")
	fi, err := os.Stat(paths["plain"])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "twin: the chmod reached the host")
}

// TestStdio: the wrapper's streams (input, streamed output, a terminal of
// the command's own, signals), with the shared checks.
func TestStdio(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	backendtest.CheckStdio(t, x, false, func(cmd string) *executor.Request { return w.req(cmd, nil) })
}

// TestHiddenFileLooks: a denied file is shown to the command as what a
// model expects of a file it may not touch: a regular empty file whose
// read fails with "Permission denied" and whose write fails with
// "Read-only file system", not a character device that reads as empty.
// The host's file is unchanged (hash from outside); twin: an ordinary
// file beside it reads and writes.
func TestHiddenFileLooks(t *testing.T) {
	x := newExecutor(t, bwrap.Config{})
	w := newWS(t)
	secret := filepath.Join(w.root, ".env")
	require.NoError(t, os.WriteFile(secret, []byte("TOKEN=hidden\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "plain.txt"), []byte("plain\n"), 0o644))
	before, err := os.ReadFile(secret)
	require.NoError(t, err)
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*"}
	res := run(t, x, w.req(`stat -c '%F %a %s' .env; cat .env; echo "read=$?"; echo x > .env; echo "write=$?"; cat plain.txt; echo more >> plain.txt && echo twin-wrote`, p))
	assert.Contains(t, string(res.Stdout), "regular empty file 0 0\n", string(res.Stderr))
	assert.Contains(t, string(res.Stdout), "read=1\n")
	assert.Contains(t, string(res.Stderr), "Permission denied")
	assert.Contains(t, string(res.Stdout), "write=2\n")
	assert.Contains(t, string(res.Stderr), "Read-only file system")
	assert.NotContains(t, string(res.Stdout), "TOKEN")
	assert.Contains(t, string(res.Stdout), "plain\ntwin-wrote\n", "twin: an ordinary file reads and writes")
	after, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the host's file is unchanged")
	fds := run(t, x, w.req(`ls /proc/self/fd | wc -l`, p))
	assert.Equal(t, "4\n", string(fds.Stdout), "no mask descriptor reaches the command (0, 1, 2 and ls's own)")
}
