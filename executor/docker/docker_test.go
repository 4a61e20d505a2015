//go:build unix

package docker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/docker"
	"github.com/cordon-sandbox/cordon/executor/internal/backendtest"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

var gitEnv = conformance.WithEnv("GIT_CONFIG_GLOBAL=/dev/null")

// TestConformanceImage runs the shared suite in image mode (the busybox
// test image, CORDON_DOCKER_IMAGE), commands through the runner.
func TestConformanceImage(t *testing.T) {
	cfg := imageConfig(t)
	conformance.Run(t, func(t *testing.T) executor.Executor { return newExecutor(t, cfg) }, gitEnv)
}

// TestConformanceHost runs the shared suite in host mode (an empty image
// with the host's System paths bound read-only).
func TestConformanceHost(t *testing.T) {
	conformance.Run(t, func(t *testing.T) executor.Executor { return newExecutor(t, docker.Config{}) }, gitEnv)
}

// TestConformanceExecPerCommand runs the cases that exercise how a
// command is run (environment, descriptors, output, kills) with one
// engine exec per command, the path remote engines use.
func TestConformanceExecPerCommand(t *testing.T) {
	cfg := imageConfig(t)
	cfg.ExecPerCommand = true
	conformance.Run(t, func(t *testing.T) executor.Executor { return newExecutor(t, cfg) }, gitEnv,
		conformance.Select("functional", "process", "write-inside-root", "write-outside", "denied-paths", "protect-git", "net-tcp-connect"))
}

// TestConformanceOutcomes checks that the declared gaps hide no leak:
// Describe declares gaps on fs-read (paths resolved at start), net-unix
// (sockets in read-only grants) and fs-new-files, which would let a case
// on those controls that leaks pass as "gap". Here every case of the
// filesystem, protect and Unix-socket layers must come out as expected,
// except the two the backend cannot enforce: a denied file created
// during the command (fs-new-files) and trusted mode with a bare-name
// deny, which strict mode refuses (see TestStrictRefusesLooser).
func TestConformanceOutcomes(t *testing.T) {
	for _, mode := range []struct {
		name string
		cfg  func(t *testing.T) docker.Config
	}{
		{"host", func(*testing.T) docker.Config { return docker.Config{} }},
		{"image", func(t *testing.T) docker.Config { return imageConfig(t) }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			cfg := mode.cfg(t)
			newExecutor(t, cfg) // skips where no engine answers
			rep, err := conformance.Check(t.Context(), func() (executor.Executor, error) { return docker.New(cfg) },
				gitEnv, conformance.Select("filesystem", "protect", "net-unix-*", "socket-*", "net-abstract-unix"))
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
		})
	}
}

// ws is a workspace fixture: root, home and an outside directory, under
// /var/tmp (not the sandbox's private /tmp).
type ws struct {
	base, root, home, outside string
}

func newWS(t *testing.T) *ws {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "cordon-docker-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	base, err = filepath.EvalSymlinks(base)
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
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + w.home}, Timeout: time.Minute,
	}
}

func run(t *testing.T, x executor.Executor, req *executor.Request) *executor.Result {
	t.Helper()
	res, err := x.Run(context.Background(), req)
	require.NoError(t, err)
	return res
}

// engine returns a client for the engine the tests use.
func engine(t *testing.T) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	return cli
}

// gone reports whether the container no longer exists, waiting a little
// (retired containers are removed in the background).
func gone(t *testing.T, cli *client.Client, id string) bool {
	t.Helper()
	for range 100 {
		_, err := cli.ContainerInspect(context.Background(), id)
		if cerrdefs.IsNotFound(err) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// listing returns every path below dir with its type, as the host sees it.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %v", strings.TrimPrefix(p, dir), d.Type()))
		return nil
	}))
	return out
}

// modes runs f in host mode and in image mode.
func modes(t *testing.T, f func(t *testing.T, cfg docker.Config)) {
	t.Run("host", func(t *testing.T) { f(t, docker.Config{}) })
	t.Run("image", func(t *testing.T) { f(t, imageConfig(t)) })
}

// TestContainerSettings inspects the session's container from outside —
// read-only root, no capabilities, no-new-privileges, seccomp, network
// none, limits, the caller's user, labels — and checks the same from
// inside.
func TestContainerSettings(t *testing.T) {
	modes(t, func(t *testing.T, cfg docker.Config) {
		cfg.Memory, cfg.Pids = 256<<20, 128
		x := newExecutor(t, cfg)
		w := newWS(t)
		res := run(t, x, w.req(`grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; touch /rootfs-write 2>/dev/null && echo rootfs-writable; id -u; touch owned`, nil))
		out := string(res.Stdout)
		assert.Contains(t, out, "CapEff:\t0000000000000000")
		assert.Contains(t, out, "NoNewPrivs:\t1")
		assert.Contains(t, out, "Seccomp:\t2")
		assert.NotContains(t, out, "rootfs-writable")
		assert.Contains(t, out, fmt.Sprintf("\n%d\n", os.Getuid()))
		fi, err := os.Stat(filepath.Join(w.root, "owned"))
		require.NoError(t, err)
		assert.Equal(t, uint32(os.Getuid()), owner(fi), "a file written in the workspace keeps the caller's uid")

		ins, err := engine(t).ContainerInspect(context.Background(), x.ContainerID())
		require.NoError(t, err)
		hc := ins.HostConfig
		assert.True(t, hc.ReadonlyRootfs)
		assert.Equal(t, []string{"ALL"}, []string(hc.CapDrop))
		assert.Empty(t, hc.CapAdd)
		assert.False(t, hc.Privileged)
		assert.Contains(t, hc.SecurityOpt, "no-new-privileges")
		assert.True(t, slices.ContainsFunc(hc.SecurityOpt, func(s string) bool { return strings.HasPrefix(s, "seccomp={") }), "the containers/common profile is sent")
		assert.Equal(t, "none", string(hc.NetworkMode))
		assert.Equal(t, int64(256<<20), hc.Memory)
		require.NotNil(t, hc.PidsLimit)
		assert.Equal(t, int64(128), *hc.PidsLimit)
		assert.Equal(t, fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), ins.Config.User)
		assert.NotEmpty(t, ins.Config.Labels[docker.LabelExecutor])
		assert.Equal(t, x.Image(), ins.Config.Image)
		tmp := slices.IndexFunc(hc.Mounts, func(m mountT) bool { return m.Target == "/tmp" })
		require.GreaterOrEqual(t, tmp, 0, "a private /tmp")
		assert.Equal(t, "tmpfs", string(hc.Mounts[tmp].Type))
	})
}

// TestNoDockerSocket checks that no container ever gets the engine's
// socket: in trusted mode (which reads "/") and with the socket's
// directory granted writable, no mount source is a socket, every tree
// holding the socket has /dev/null bound over it, and inside the socket
// path is not a socket. Twin: the socket exists on the host.
func TestNoDockerSocket(t *testing.T) {
	sock := localSocket(t)
	modes(t, func(t *testing.T, cfg docker.Config) {
		w := newWS(t)
		x := newExecutor(t, cfg)
		p := policy.Trusted.Policy()
		p.PathRules = append(p.PathRules, policy.PathRule{Pattern: filepath.Dir(sock), Action: policy.Allow, Ops: []policy.Op{policy.Read, policy.Write}})
		res := run(t, x, w.req(fmt.Sprintf("test -S %[1]s && echo socket; test -e %[1]s && echo exists; ls %[2]s >/dev/null && echo listed", sock, filepath.Dir(sock)), p))
		assert.NotContains(t, string(res.Stdout), "socket", "the engine's socket is not reachable inside: %s", res.Stderr)
		assert.Contains(t, string(res.Stdout), "listed", "control: its directory is visible (trusted reads /): %s", res.Stderr)
		fi, err := os.Stat(sock)
		require.NoError(t, err)
		require.NotZero(t, fi.Mode()&fs.ModeSocket, "twin: it is a socket on the host")

		ins, err := engine(t).ContainerInspect(context.Background(), x.ContainerID())
		require.NoError(t, err)
		targets := map[string]mountT{}
		for _, m := range ins.HostConfig.Mounts {
			targets[m.Target] = m
		}
		for _, m := range ins.HostConfig.Mounts {
			if m.Type != "bind" {
				continue
			}
			if fi, err := os.Stat(m.Source); err == nil {
				assert.Zero(t, fi.Mode()&fs.ModeSocket, "mount source %s is a socket", m.Source)
			}
			if rel, err := filepath.Rel(m.Source, sock); err == nil && !strings.HasPrefix(rel, "..") {
				// The bind's tree holds the socket: /dev/null covers it.
				over, ok := targets[filepath.Join(m.Target, rel)]
				assert.True(t, ok && over.Source == "/dev/null" && over.ReadOnly, "%s holds the engine's socket and nothing covers it", m.Source)
			}
		}
	})
}

func localSocket(t *testing.T) string {
	t.Helper()
	h := os.Getenv("DOCKER_HOST")
	if h == "" {
		h = "unix:///var/run/docker.sock"
	}
	p, ok := strings.CutPrefix(h, "unix://")
	if !ok {
		t.Skipf("DOCKER_HOST %s is not a local Unix socket", h)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// TestContainerReuse checks that commands share the session's container
// while the derived mounts stay the same, that a new denied file gets a
// new container that masks it (and the old one is removed), and that
// Close removes the last one.
func TestContainerReuse(t *testing.T) {
	modes(t, func(t *testing.T, cfg docker.Config) {
		cli := engine(t)
		x, err := docker.New(cfg)
		require.NoError(t, err)
		defer x.Close()
		w := newWS(t)
		p := policy.Coding.Policy()
		p.DeniedPaths = []string{".env*"}
		require.NoError(t, os.MkdirAll(filepath.Join(w.root, "sub"), 0o755))
		run(t, x, w.req("true", p))
		first := x.ContainerID()
		require.NotEmpty(t, first)
		req := w.req("pwd", p)
		req.Dir = filepath.Join(w.root, "sub")
		assert.Equal(t, req.Dir+"\n", string(run(t, x, req).Stdout))
		assert.Equal(t, first, x.ContainerID(), "same mounts, same container (another cwd)")

		require.NoError(t, os.WriteFile(filepath.Join(w.root, ".env"), []byte("SECRET=1\n"), 0o600))
		res := run(t, x, w.req("cat .env; echo done", p))
		assert.Equal(t, "done\n", string(res.Stdout), "the new .env is masked")
		second := x.ContainerID()
		assert.NotEqual(t, first, second, "new masks, new container")
		assert.True(t, gone(t, cli, first), "the old container is removed")
		res = run(t, x, w.req("cat .env", nil))
		assert.Equal(t, "SECRET=1\n", string(res.Stdout), "twin: without denied_paths it is readable")
		third := x.ContainerID()

		require.NoError(t, x.Close())
		assert.True(t, gone(t, cli, third), "Close removes the container")
		_, err = x.Run(context.Background(), w.req("true", nil))
		assert.ErrorIs(t, err, docker.ErrClosed)
		assert.ErrorIs(t, err, executor.ErrClosed)
	})
}

// TestBackgroundKeepsContainer checks that a background process keeps its
// container while later commands need another one, and that killing it
// removes the old container.
func TestBackgroundKeepsContainer(t *testing.T) {
	cfg := imageConfig(t)
	cli := engine(t)
	x := newExecutor(t, cfg)
	w := newWS(t)
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{"secret*"}
	proc, err := x.Start(context.Background(), w.req("echo started; sleep 60", p))
	require.NoError(t, err)
	first := x.ContainerID()
	require.Eventually(t, func() bool { out, _ := proc.ReadOutput(); return strings.Contains(string(out), "started") }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "secret.txt"), []byte("s\n"), 0o600))
	res := run(t, x, w.req("cat secret.txt; echo done", p))
	assert.Equal(t, "done\n", string(res.Stdout))
	assert.NotEqual(t, first, x.ContainerID())
	_, err = cli.ContainerInspect(context.Background(), first)
	require.NoError(t, err, "the background process's container stays")
	require.NoError(t, proc.Kill())
	r := proc.Wait()
	assert.Equal(t, -1, r.ExitCode)
	assert.True(t, gone(t, cli, first), "and goes when the process is killed")
}

// TestNoHostPathCreated checks that a placeholder (the read-only ci that
// keeps a protected ci/deploy.sh, which does not exist, from being
// created) exists on the host only while a container uses it, and is
// read-only inside.
func TestNoHostPathCreated(t *testing.T) {
	modes(t, func(t *testing.T, cfg docker.Config) {
		x, err := docker.New(cfg)
		require.NoError(t, err)
		w := newWS(t)
		p := policy.Coding.Policy()
		p.Protect.Extra = []string{"ci/deploy.sh"}
		require.NoError(t, os.WriteFile(filepath.Join(w.root, "file.txt"), []byte("x\n"), 0o644))
		before := listing(t, w.root)
		res := run(t, x, w.req(`test -d ci && echo placeholder; touch ci/deploy.sh 2>/dev/null && echo planted; touch new.txt && echo wrote`, p))
		assert.Equal(t, "placeholder\nwrote\n", string(res.Stdout))
		res = run(t, x, w.req(`ls -A ci | wc -l`, p))
		assert.Equal(t, "0", strings.TrimSpace(string(res.Stdout)), "the same container, the same empty placeholder")
		require.NoError(t, os.Remove(filepath.Join(w.root, "new.txt")), "control: the write landed on the host")
		require.NoError(t, x.Close())
		assert.Equal(t, before, listing(t, w.root), "after Close the root is as it was")
	})
}

// TestStrays checks that New removes the containers of a process that
// died without Close, and leaves those of live executors alone.
func TestStrays(t *testing.T) {
	cfg := imageConfig(t)
	cli := engine(t)
	alive := newExecutor(t, cfg)
	w := newWS(t)
	run(t, alive, w.req("true", nil))

	out, err := strayHelper(t, cfg.Image, w.root)
	require.NoError(t, err, "%s", out)
	id := strings.TrimSpace(string(out))
	ins, err := cli.ContainerInspect(context.Background(), id)
	require.NoError(t, err, "control: the dead process's container is there")
	assert.NotEmpty(t, ins.Config.Labels[docker.LabelExecutor])
	control := ins.Config.Labels["org.cordon-sandbox.control"]

	x := newExecutor(t, cfg)
	assert.True(t, gone(t, cli, id), "New removed the stray")
	if control != "" {
		assert.NoDirExists(t, control, "and its command runner's directory")
	}
	_, err = cli.ContainerInspect(context.Background(), alive.ContainerID())
	assert.NoError(t, err, "a live executor's container stays")
	assert.Equal(t, "1", x.Describe(context.Background()).Info["strays_removed"])
}

// TestRequestErrors checks requests refused before anything runs, with
// the shared table.
func TestRequestErrors(t *testing.T) {
	x := newExecutor(t, imageConfig(t))
	w := newWS(t)
	backendtest.CheckRequestErrors(t, x, w.root, func(cmd string) *executor.Request { return w.req(cmd, nil) })
}

// TestCompiledOnce: a request carrying its compiled policy is compiled no
// more per command.
func TestCompiledOnce(t *testing.T) {
	x := newExecutor(t, imageConfig(t))
	backendtest.CheckCompiledOnce(t, x, newWS(t).req("", nil))
}

// TestSetupError checks that a command that cannot start (its working
// directory does not exist) is an error, not an exit status, on both
// ways of running commands; and that a command's own exit 126 is a
// result.
func TestSetupError(t *testing.T) {
	for _, perExec := range []bool{false, true} {
		t.Run(fmt.Sprintf("ExecPerCommand=%v", perExec), func(t *testing.T) {
			cfg := imageConfig(t)
			cfg.ExecPerCommand = perExec
			x := newExecutor(t, cfg)
			w := newWS(t)
			req := w.req("echo ran", nil)
			req.Dir = filepath.Join(w.root, "missing")
			_, err := x.Run(context.Background(), req)
			var se *docker.SetupError
			require.ErrorAs(t, err, &se)
			assert.ErrorIs(t, err, docker.ErrSetup)
			assert.NoDirExists(t, req.Dir, "nothing is created on the host")
			res := run(t, x, w.req("echo not really >&2; exit 126", nil))
			assert.Equal(t, 126, res.ExitCode, "control: a command's own exit 126 is a result")
			assert.Equal(t, "not really\n", string(res.Stderr))
		})
	}
}

// TestExitStatus checks exit codes and the shell's 128+N report of a
// signal, on both ways of running commands.
func TestExitStatus(t *testing.T) {
	for _, perExec := range []bool{false, true} {
		t.Run(fmt.Sprintf("ExecPerCommand=%v", perExec), func(t *testing.T) {
			cfg := imageConfig(t)
			cfg.ExecPerCommand = perExec
			x := newExecutor(t, cfg)
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
				res := run(t, x, w.req(tt.cmd, nil))
				assert.Equal(t, tt.code, res.ExitCode, tt.cmd)
				assert.Equal(t, tt.signal, res.Signal, tt.cmd)
				assert.False(t, res.TimedOut, tt.cmd)
			}
		})
	}
}

// TestKillAllInContainer checks that a command killing every process it
// may signal (kill -KILL -1) loses the session neither its container nor
// later commands.
func TestKillAllInContainer(t *testing.T) {
	modes(t, func(t *testing.T, cfg docker.Config) {
		x := newExecutor(t, cfg)
		w := newWS(t)
		res := run(t, x, w.req("kill -KILL -1; sleep 1; echo survived", nil))
		assert.NotEqual(t, 0, res.ExitCode)
		for range 3 {
			res = run(t, x, w.req("echo ok", nil))
			assert.Equal(t, "ok\n", string(res.Stdout))
			assert.Equal(t, 0, res.ExitCode)
		}
	})
}

// TestOrphansReaped checks that the container's pid 1 reaps the orphans
// commands leave, so zombies do not pile up against the process limit.
func TestOrphansReaped(t *testing.T) {
	modes(t, func(t *testing.T, cfg docker.Config) {
		x := newExecutor(t, cfg)
		w := newWS(t)
		for range 5 {
			run(t, x, w.req("(sleep 0.1 &) ; (sleep 0.1 &)", nil))
		}
		var out string
		require.Eventually(t, func() bool {
			res := run(t, x, w.req(`n=0; for s in /proc/[0-9]*/stat; do read -r l < "$s" 2>/dev/null || continue; l=${l##*) }; case $l in Z*) n=$((n+1));; esac; done; echo $n`, nil))
			out = strings.TrimSpace(string(res.Stdout))
			return out == "0"
		}, 10*time.Second, 100*time.Millisecond, "zombies: %s", out)
	})
}

// TestUser checks Config.User: the container runs as that user (commands
// then run as execs of their own), and files it writes are its own.
func TestUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("writing as another uid into the fixture needs root")
	}
	cfg := imageConfig(t)
	cfg.User = "65534:65534"
	x := newExecutor(t, cfg)
	w := newWS(t)
	require.NoError(t, os.Chmod(w.root, 0o777))
	res := run(t, x, w.req("id -u; touch mine", nil))
	assert.Equal(t, "65534\n", string(res.Stdout), "%s", res.Stderr)
	fi, err := os.Stat(filepath.Join(w.root, "mine"))
	require.NoError(t, err)
	assert.Equal(t, uint32(65534), owner(fi))
	assert.Contains(t, x.Describe(context.Background()).Info["commands"], "one engine exec per command")
}

// TestNestedUserNamespaces checks the seccomp tightening and its opt-out.
func TestNestedUserNamespaces(t *testing.T) {
	cfg := imageConfig(t)
	w := newWS(t)
	cmd := "unshare -U true && echo created"
	res := run(t, newExecutor(t, cfg), w.req(cmd, nil))
	assert.Empty(t, string(res.Stdout), "the default refuses user namespaces: %s", res.Stderr)
	cfg.NestedUserNamespaces = true
	res = run(t, newExecutor(t, cfg), w.req(cmd, nil))
	assert.Equal(t, "created\n", string(res.Stdout), "control: NestedUserNamespaces allows them: %s", res.Stderr)
}

// TestStrictRefusesLooser checks strict mode and its best-effort twin on
// a profile the backend cannot enforce: trusted reads of "/" with a
// bare-name deny, which no mount can mask outside the searched trees.
func TestStrictRefusesLooser(t *testing.T) {
	cfg := imageConfig(t)
	w := newWS(t)
	p := policy.Trusted.Policy()
	p.DeniedPaths = []string{".env*"}
	require.NoError(t, os.WriteFile(filepath.Join(w.root, ".env"), []byte("SECRET=root\n"), 0o600))

	strict := newExecutor(t, cfg)
	_, err := strict.Run(context.Background(), w.req("cat .env; touch ran", p))
	var ue *executor.UnenforceableError
	require.ErrorAs(t, err, &ue)
	require.NotEmpty(t, ue.Gaps)
	assert.Equal(t, executor.ControlFSRead, ue.Gaps[0].Control)
	assert.NoFileExists(t, filepath.Join(w.root, "ran"), "nothing ran")
	assert.Empty(t, strict.ContainerID(), "no container was made")

	cfg.BestEffort = true
	loose := newExecutor(t, cfg)
	res := run(t, loose, w.req("cat .env; touch ran", p))
	assert.NotContains(t, string(res.Stdout), "SECRET", "the root's .env is still masked")
	assert.FileExists(t, filepath.Join(w.root, "ran"))
	caps := loose.Describe(context.Background())
	assert.True(t, caps.BestEffort)
	_, gap := caps.Gap(executor.ControlFSRead)
	assert.True(t, gap)
	assert.NotContains(t, caps.Enforced, executor.ControlFSRead)
}

// TestUnavailable checks that New names an unreachable engine or a
// missing image with *executor.UnavailableError and the cause.
func TestUnavailable(t *testing.T) {
	newExecutor(t, docker.Config{}) // skips where no engine answers
	tests := []struct {
		name  string
		cfg   docker.Config
		cause error
	}{
		{"no engine", docker.Config{ClientOptions: []client.Opt{client.WithHost("unix:///nonexistent/docker.sock")}}, docker.ErrNoEngine},
		{"no image", docker.Config{Image: "cordon-test/no-such-image:0"}, docker.ErrNoImage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := docker.New(tt.cfg)
			var ue *executor.UnavailableError
			require.ErrorAs(t, err, &ue)
			assert.ErrorIs(t, err, errors.ErrUnsupported)
			assert.ErrorIs(t, err, tt.cause)
			assert.Equal(t, docker.Backend, ue.Backend)
			assert.NotEmpty(t, ue.Fix)
		})
	}
}

// TestDockerContext checks that, without DOCKER_HOST, the Docker CLI's
// current context names the engine (DOCKER_CONTEXT, or config.json's
// currentContext), and that an ssh:// context is reported as unusable.
func TestDockerContext(t *testing.T) {
	sock := localSocket(t)
	newExecutor(t, docker.Config{})
	dir := t.TempDir()
	writeContext := func(name, host string) {
		sum := sha256hex(name)
		meta := filepath.Join(dir, "contexts", "meta", sum)
		require.NoError(t, os.MkdirAll(meta, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(meta, "meta.json"),
			[]byte(fmt.Sprintf(`{"Name":%q,"Metadata":{},"Endpoints":{"docker":{"Host":%q,"SkipTLSVerify":false}}}`, name, host)), 0o644))
	}
	writeContext("cordon-test", "unix://"+sock)
	writeContext("remote-ssh", "ssh://user@example.invalid")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"currentContext":"cordon-test"}`), 0o644))
	t.Setenv("DOCKER_HOST", "")
	os.Unsetenv("DOCKER_HOST")
	t.Setenv("DOCKER_CONFIG", dir)

	x := newExecutor(t, docker.Config{})
	assert.Contains(t, x.Describe(context.Background()).Info["engine"], `docker context "cordon-test"`)

	t.Setenv("DOCKER_CONTEXT", "remote-ssh")
	_, err := docker.New(docker.Config{})
	var ue *executor.UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.ErrorIs(t, err, docker.ErrNoEngine)

	t.Setenv("DOCKER_CONTEXT", "missing")
	_, err = docker.New(docker.Config{})
	assert.ErrorIs(t, err, docker.ErrNoEngine)
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  docker.Config
		ok   bool
	}{
		{"zero", docker.Config{}, true},
		{"image", docker.Config{Image: "busybox:local", User: "1000:1000", Memory: 1 << 30, Pids: 100, FullNetwork: "bridge"}, true},
		{"user name", docker.Config{User: "nobody"}, true},
		{"bad user", docker.Config{User: "1000:1000:1"}, false},
		{"empty gid", docker.Config{User: "1000:"}, false},
		{"image with space", docker.Config{Image: "a b"}, false},
		{"full network none", docker.Config{FullNetwork: "none"}, false},
		{"container network", docker.Config{FullNetwork: "container:abc"}, false},
		{"negative wait", docker.Config{WaitDelay: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			var ce *docker.ConfigError
			assert.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, docker.ErrInvalidConfig)
			_, err = docker.New(tt.cfg)
			assert.ErrorIs(t, err, docker.ErrInvalidConfig)
		})
	}
}

// TestDescribe checks what the executor declares.
func TestDescribe(t *testing.T) {
	modes(t, func(t *testing.T, cfg docker.Config) {
		x := newExecutor(t, cfg)
		caps := x.Describe(context.Background())
		assert.Equal(t, docker.Backend, caps.Backend)
		assert.True(t, caps.Sandboxed)
		assert.False(t, caps.BestEffort)
		for _, c := range []executor.Control{executor.ControlFSWrite, executor.ControlFSMetadata, executor.ControlProtect,
			executor.ControlNetTCP, executor.ControlNetUDP, executor.ControlNetUnix, executor.ControlNetAbstract, executor.ControlSignal, executor.ControlProcInfo,
			executor.ControlProcessTree} {
			assert.Contains(t, caps.Enforced, c)
		}
		for _, c := range []executor.Control{executor.ControlFSNewFiles} {
			g, ok := caps.Gap(c)
			if assert.True(t, ok, "gap %s declared", c) {
				assert.NotEmpty(t, g.Reason)
			}
			assert.NotContains(t, caps.Enforced, c)
		}
		engineVersion, api := x.EngineVersion()
		assert.Equal(t, engineVersion, caps.Info["engine_version"])
		assert.Equal(t, api, caps.Info["api_version"])
		assert.Equal(t, x.Image(), caps.Info["image"])
		assert.Equal(t, fmt.Sprint(cfg.Image == ""), caps.Info["host_mode"])
		assert.Contains(t, caps.Info["seccomp"], "containers/common")
	})
}

// execPaths runs f on the command runner's path and with one exec per
// command.
func execPaths(t *testing.T, f func(t *testing.T, cfg docker.Config)) {
	for _, perExec := range []bool{false, true} {
		t.Run(fmt.Sprintf("ExecPerCommand=%v", perExec), func(t *testing.T) {
			cfg := imageConfig(t)
			cfg.ExecPerCommand = perExec
			f(t, cfg)
		})
	}
}

var tags atomic.Int64

// taggedReq is w.req(cmd) with a fresh tag in its environment, by which
// tagged finds the command's processes in the host's /proc.
func (w *ws) taggedReq(cmd string) (*executor.Request, string) {
	tag := fmt.Sprintf("cordon-tag-%d-%d", os.Getpid(), tags.Add(1))
	req := w.req(cmd, nil)
	req.Env = append(req.Env, "CORDON_TEST_TAG="+tag)
	return req, tag
}

// TestOutputHeldOpen checks that a process which left the command's
// session and keeps its output open does not hold Run up: Run returns
// after the wait delay with the command's own output and status, and
// (seen from the host's /proc) that process is gone: the sweep killed it.
func TestOutputHeldOpen(t *testing.T) {
	execPaths(t, func(t *testing.T, cfg docker.Config) {
		cfg.WaitDelay = 200 * time.Millisecond
		x := newExecutor(t, cfg)
		w := newWS(t)
		// The escapee reports once it has its own session, so the shell
		// cannot exit (and its group be killed) before.
		req, tag := w.taggedReq(`setsid sh -c ': > held.ready; exec sleep 60' & while [ ! -e held.ready ]; do sleep 0.01; done; echo hi; exit 4`)
		res := run(t, x, req)
		assert.Equal(t, "hi\n", string(res.Stdout))
		assert.Equal(t, 4, res.ExitCode)
		assert.Empty(t, tagged(tag), "the escaped process is gone when Run returns")
		require.FileExists(t, filepath.Join(w.root, "held.ready"), "control: the escapee ran")
	})
}

// TestSurvivorKilled: a process that leaves the command's tree (setsid,
// its parent exits first) and would write a file a second after the
// command ended is gone when Run returns (no process carrying the
// command's tag in the host's /proc) and never writes; the twin, whose
// command waits for it, shows the fixture writes. Runner and exec paths.
func TestSurvivorKilled(t *testing.T) {
	execPaths(t, func(t *testing.T, cfg docker.Config) {
		x := newExecutor(t, cfg)
		w := newWS(t)
		do := func(name, wait string) []string {
			// Its output goes elsewhere: a process holding the command's
			// output open keeps the command running until the wait
			// delay (TestOutputHeldOpen).
			req, tag := w.taggedReq(`(setsid sh -c 'sleep 1; echo late > ` + name + `' >/dev/null 2>&1 &); sleep ` + wait)
			run(t, x, req)
			return tagged(tag)
		}
		assert.Empty(t, do("act.txt", "0.2"), "no process of the command is left when Run returns")
		assert.Empty(t, do("twin.txt", "2.5"))
		time.Sleep(1500 * time.Millisecond) // past the moment the survivor would have written
		assert.NoFileExists(t, filepath.Join(w.root, "act.txt"), "the survivor never wrote")
		assert.FileExists(t, filepath.Join(w.root, "twin.txt"), "control: the same process writes while its command still runs")
	})
}

// TestRunnerProtocolAbuse: a command cannot stay behind by abusing the
// command runner, whose processes run as the same user as it: neither by
// forging its request's report (a fake "exit 0" on the control FIFO,
// padded past what the host reads, then its output closed, so the host
// takes it for ended while it lives on under its supervisor), nor by
// replaying its request's id into the runner's stdin (a second
// supervisor runs the script again, outside the first run's tree). In
// both the left-behind run writes late.txt and a hook two seconds later;
// from the host: no process carrying the command's tag is left when Run
// returns, and nothing is written. The twin runs the same late write
// inside the command, so the fixture writes. (helper-42's findings.)
func TestRunnerProtocolAbuse(t *testing.T) {
	const late = `sleep 2; echo late > late.txt; mkdir -p sub/.git/hooks && echo pwned > sub/.git/hooks/pre-commit`
	for name, cmd := range map[string]string{
		"forged-report": `o=$(readlink /proc/$$/fd/1); c=${o%.out}.ctl
printf 'exit 0\n' > "$c"; head -c 8192 /dev/zero > "$c"
exec >/dev/null 2>&1 </dev/null
` + late,
		"replayed-request": `if [ -e .replayed ]; then exec >/dev/null 2>&1 </dev/null; ` + late + `; exit 0; fi
: > .replayed
o=$(readlink /proc/$$/fd/1); id=${o##*/}; id=${id%.out}
for d in /proc/[0-9]*; do if grep -q cordon-runner $d/cmdline 2>/dev/null; then R=${d#/proc/}; fi; done
echo "$id" > /proc/$R/fd/0
sleep 0.5`,
		"twin": late,
	} {
		t.Run(name, func(t *testing.T) {
			cfg := imageConfig(t)
			cfg.WaitDelay = 300 * time.Millisecond
			x := newExecutor(t, cfg)
			w := newWS(t)
			req, tag := w.taggedReq(cmd)
			res := run(t, x, req)
			if name == "twin" {
				assert.FileExists(t, filepath.Join(w.root, "late.txt"), "control: the late write takes effect inside the command")
				return
			}
			assert.Empty(t, tagged(tag), "no process of the command is left when Run returns (exit %d, %v)", res.ExitCode, res.Violations)
			time.Sleep(3 * time.Second) // past the moment the left-behind run would have written
			assert.NoFileExists(t, filepath.Join(w.root, "late.txt"))
			assert.NoFileExists(t, filepath.Join(w.root, "sub", ".git", "hooks", "pre-commit"))
		})
	}
}

// TestRunnerStartsOnce: with the sweep on, each fresh session's command
// runner starts once and serves every command (its pid must be known for
// the sweep to keep its supervisors; the engine's exec inspection did
// not always know it yet, and the runner was dropped for execs).
func TestRunnerStartsOnce(t *testing.T) {
	for i := range 5 {
		x := newExecutor(t, imageConfig(t))
		w := newWS(t)
		for range 3 {
			run(t, x, w.req("true", nil))
		}
		starts, running := x.RunnerStartsForTest()
		assert.Equal(t, 1, starts, "session %d: runner starts", i)
		assert.True(t, running, "session %d: the runner still runs", i)
		require.NoError(t, x.Close())
	}
}

// TestSweepKeepsRunningCommands: the sweeps that run before and after
// every command kill only what left a command's tree: a background
// process (Start) keeps running through several commands, with its own
// children, and its output keeps coming; a process that left its tree is
// killed by the next command's sweep.
func TestSweepKeepsRunningCommands(t *testing.T) {
	execPaths(t, func(t *testing.T, cfg docker.Config) {
		x := newExecutor(t, cfg)
		w := newWS(t)
		req, tag := w.taggedReq(`(setsid sh -c 'exec sleep 60' >/dev/null 2>&1 &); sh -c 'while :; do echo tick; sleep 0.05; done' & wait`)
		p, err := x.Start(context.Background(), req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Kill() })
		require.Eventually(t, func() bool { return len(tagged(tag)) >= 3 }, 10*time.Second, 20*time.Millisecond, "the background process and its children run")
		for i := range 3 {
			res := run(t, x, w.req(fmt.Sprintf("echo %d", i), nil))
			assert.Equal(t, fmt.Sprintf("%d\n", i), string(res.Stdout))
		}
		select {
		case <-p.Done():
			t.Fatalf("the background process ended: %+v", p.Wait())
		default:
		}
		_, _ = p.ReadOutput()
		assert.Eventually(t, func() bool {
			out, _ := p.ReadOutput()
			return strings.Contains(string(out), "tick")
		}, 10*time.Second, 20*time.Millisecond, "its output keeps coming")
		for _, pid := range tagged(tag) {
			b, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			assert.NotContains(t, string(b), "sleep\x0060", "the process that left its tree (setsid sleep 60) is gone")
		}
	})
}

// tagged returns the host pids of processes whose environment holds tag.
func tagged(tag string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && strings.Contains(string(b), tag) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestRunnerExitStatus runs many short commands through the session's
// command runner: every exit status must arrive, whatever order the
// runner's reports and the end of the output are seen in.
func TestRunnerExitStatus(t *testing.T) {
	x := newExecutor(t, imageConfig(t))
	w := newWS(t)
	for i := range 200 {
		code := i % 4
		res := run(t, x, w.req(fmt.Sprintf("exit %d", code), nil))
		require.Equal(t, code, res.ExitCode, "run %d: notes %v", i, res.Violations)
	}
}

// TestPidsLimitEnforced: the pids limit is enforced by the kernel, not
// only set: under a limit of 32, starting 64 sleeping processes fails
// part way (the host reads how far the loop got from a file in the
// workspace); the twin with a limit of 1024 starts them all.
func TestPidsLimitEnforced(t *testing.T) {
	cmd := `for i in $(seq 64); do sleep 30 & echo $i > count; done; kill $(jobs -p) 2>/dev/null; true`
	count := func(t *testing.T, pids int64) int {
		cfg := imageConfig(t)
		cfg.Pids = pids
		x := newExecutor(t, cfg)
		w := newWS(t)
		run(t, x, w.req(cmd, nil))
		b, err := os.ReadFile(filepath.Join(w.root, "count"))
		require.NoError(t, err, "the loop started no process at all")
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		return n
	}
	assert.Less(t, count(t, 32), 64, "the limit stops the loop before the 64th process")
	assert.Equal(t, 64, count(t, 1024), "control: a high limit starts all 64")
}

// TestBrokenContainerIsReplaced exercises the last resort of a kill that
// failed (breakBox): the session's container is killed with everything
// in it, a background process there ends, and the next command runs in a
// fresh container.
func TestBrokenContainerIsReplaced(t *testing.T) {
	x := newExecutor(t, imageConfig(t))
	w := newWS(t)
	p, err := x.Start(context.Background(), w.req("sleep 1000", nil))
	require.NoError(t, err)
	old := x.ContainerID()
	require.NotEmpty(t, old)
	note := x.BreakForTest("test: the kill failed")
	assert.Contains(t, note, "was killed")
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("a process in the killed container still runs")
	}
	ins, err := engine(t).ContainerInspect(context.Background(), old)
	if err == nil {
		assert.False(t, ins.State.Running, "the broken container is not running")
	}
	res := run(t, x, w.req("echo fresh", nil))
	assert.Equal(t, "fresh\n", string(res.Stdout))
	assert.NotEqual(t, old, x.ContainerID(), "the next command runs in a new container")
}

// TestExplainIsRun: what Explain shows (and sandbox-probe derive prints)
// is what Run gives the engine: the mounts, network mode and seccomp of
// the container a command then runs in, read back from the engine, in
// host and image mode, for the coding preset with a denied file and a
// grant.
func TestExplainIsRun(t *testing.T) {
	for name, cfg := range map[string]docker.Config{"host": {}, "image": imageConfig(t)} {
		t.Run(name, func(t *testing.T) {
			x := newExecutor(t, cfg)
			w := newWS(t)
			require.NoError(t, os.WriteFile(filepath.Join(w.root, ".env"), []byte("K=V\n"), 0o600))
			p := policy.Coding.Policy()
			p.DeniedPaths = append(p.DeniedPaths, ".env*")
			req := w.req("true", p)
			req.Grants = []policy.Grant{{Path: w.outside, Op: policy.Read}}
			e, err := x.Explain(context.Background(), req)
			require.NoError(t, err)
			require.NotEmpty(t, e.Mounts)
			res := run(t, x, req)
			require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)

			ins, err := engine(t).ContainerInspect(context.Background(), x.ContainerID())
			require.NoError(t, err)
			want, err := json.Marshal(e.Mounts)
			require.NoError(t, err)
			for i, m := range ins.HostConfig.Mounts {
				if m.Target == "/.cordon-run" { // the runner's, made with the container
					ins.HostConfig.Mounts[i].Source = docker.ControlDirShown
				}
			}
			got, err := json.Marshal(ins.HostConfig.Mounts)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "the engine's mounts are the explained ones")
			assert.Equal(t, e.Network, string(ins.HostConfig.NetworkMode))
			assert.NotEmpty(t, e.Seccomp)
			assert.True(t, slices.ContainsFunc(ins.HostConfig.SecurityOpt, func(s string) bool { return strings.HasPrefix(s, "seccomp={") }))
			env := slices.IndexFunc(e.Mounts, func(m mountT) bool { return m.Target == filepath.Join(w.root, ".env") })
			assert.GreaterOrEqual(t, env, 0, "the denied file is masked in the plan")

			gaps, err := x.Assess(context.Background(), req)
			require.NoError(t, err)
			for _, g := range gaps {
				assert.True(t, slices.ContainsFunc(e.Fidelity.Looser(), func(el policyderive.Element) bool { return el.Control == g.Control }), "gap %s is a looser element of the plan", g.Control)
			}
		})
	}
}
