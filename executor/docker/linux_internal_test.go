//go:build linux

package docker

import (
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containers/common/pkg/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/policyderive"
)

// shells are the POSIX shells the runner's scripts must work in: the
// host's /bin/sh (host mode) and busybox (the test image), where present.
func shells(t testing.TB) [][]string {
	var out [][]string
	for _, sh := range [][]string{{"/bin/sh"}, {"dash"}, {"busybox", "sh"}} {
		if p, err := exec.LookPath(sh[0]); err == nil {
			out = append(out, append([]string{p}, sh[1:]...))
		}
	}
	if len(out) == 0 {
		t.Skip("no POSIX shell on this host")
	}
	return out
}

// TestRunnerScript runs the runner's per-command script in each shell
// (without a container): the environment is exactly the one requested,
// the directory is changed to, and a missing directory reports nodir on
// descriptor 3.
func TestRunnerScript(t *testing.T) {
	dir := t.TempDir()
	env := []string{"A=1", "B=two words", "C=line1\nline2", "D=it's", "E="}
	script, ok := runnerScriptFor(env, dir, "pwd; env", []string{"PATH", "HOME", "HOSTNAME"})
	require.True(t, ok)
	for _, sh := range shells(t) {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			args := append(slices.Clone(sh[1:]), "-c", script+"\n", "x")
			cmd := exec.Command(sh[0], args...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/root", "HOSTNAME=h", "A=old"}
			out, err := cmd.Output()
			require.NoError(t, err)
			lines := string(out)
			assert.True(t, strings.HasPrefix(lines, dir+"\n"), "%q", lines)
			for _, kv := range env {
				assert.Contains(t, lines, kv+"\n")
			}
			for _, k := range []string{"PATH=", "HOME=", "HOSTNAME="} {
				assert.NotContains(t, "\n"+lines, "\n"+k, "unset %s", k)
			}
			assert.NotContains(t, lines, "A=old")
		})
	}
	_, ok = runnerScriptFor([]string{"not-a-name=1"}, dir, "true", nil)
	assert.False(t, ok, "a name a shell cannot export makes the command an exec of its own")
	script, ok = runnerScriptFor(nil, dir+"/missing", "echo ran", nil)
	require.True(t, ok)
	sh := shells(t)[0]
	out, _ := exec.Command(sh[0], append(slices.Clone(sh[1:]), "-c", script+"\n", "x")...).Output()
	assert.NotContains(t, string(out), "ran")
}

// TestSeccompConversion checks the conversion of the containers/common
// profile: every syscall rule kept with numeric errnos, and the
// namespace rules replaced unless nested user namespaces are allowed.
func TestSeccompConversion(t *testing.T) {
	src := seccomp.DefaultProfile()
	for _, nested := range []bool{false, true} {
		p, err := convertSeccomp(src, !nested, false)
		require.NoError(t, err)
		require.NotNil(t, p.DefaultErrnoRet)
		assert.Equal(t, string(src.DefaultAction), p.DefaultAction)
		assert.NotEmpty(t, p.ArchMap)
		allowed := func(name string) (unconditional, conditional bool) {
			for _, s := range p.Syscalls {
				if !slices.Contains(s.Names, name) || s.Action != string(seccomp.ActAllow) {
					continue
				}
				if len(s.Args) == 0 && len(s.Includes.Caps)+len(s.Excludes.Caps)+len(s.Includes.Arches)+len(s.Excludes.Arches) == 0 {
					unconditional = true
				} else {
					conditional = true
				}
			}
			return
		}
		for _, name := range []string{"unshare", "clone", "clone3"} {
			u, _ := allowed(name)
			assert.Equal(t, nested, u, "%s unconditionally allowed with nested=%v", name, nested)
		}
		if !nested {
			_, c := allowed("clone")
			assert.True(t, c, "clone without namespace flags stays allowed")
		}
		u, _ := allowed("read")
		assert.True(t, u)
		for _, s := range p.Syscalls {
			if s.Action == string(seccomp.ActErrno) {
				assert.NotNil(t, s.ErrnoRet, "%v: errno as a number", s.Names)
			}
		}
		b, err := json.Marshal(p)
		require.NoError(t, err)
		assert.NotContains(t, string(b), `"errno":`, "names of errnos are not sent")
	}
	js, desc, err := seccompProfile(false, false)
	require.NoError(t, err)
	assert.True(t, json.Valid([]byte(js)))
	assert.Contains(t, desc, "containers/common")
}

// TestHideEngine checks, on a model tree, that an engine socket inside a
// bound tree gets /dev/null bound over it, that a bind of the socket
// itself is dropped, and that a bind around the engine's data root is
// rebuilt around it where the host's mount does not propagate.
func TestHideEngine(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "engine.sock")
	data := filepath.Join(dir, "data")
	for _, d := range []string{filepath.Dir(sock), data, filepath.Join(dir, "a", "b")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	require.NoError(t, os.Symlink("file", filepath.Join(dir, "link")))
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	x := &Executor{eng: &engine{socket: sock, rootDir: data}, log: slog.Default()}
	bind := func(p string) specs.Mount {
		return specs.Mount{Destination: p, Type: "bind", Source: p, Options: []string{"rbind", "ro", "rprivate", "nosuid", "nodev"}}
	}
	fid := &policyderive.Fidelity{}
	ms := x.hideEngine([]specs.Mount{bind(filepath.Dir(sock)), bind(sock)}, fid)
	dests := map[string]specs.Mount{}
	for _, m := range ms {
		dests[m.Destination] = m
	}
	assert.Equal(t, "/dev/null", dests[sock].Source, "/dev/null over the socket")
	assert.Len(t, ms, 2, "the bind of the socket itself is dropped: %v", ms)

	if hostPropagates(dir) {
		t.Skip("the host's mount propagates here: the bind is made rslave instead")
	}
	ms = x.hideEngine([]specs.Mount{bind(dir)}, fid)
	var got []string
	for _, m := range ms {
		got = append(got, m.Destination+" "+m.Source)
	}
	slices.Sort(got)
	want := []string{
		filepath.Join(dir, "a") + " " + filepath.Join(dir, "a"),
		filepath.Join(dir, "file") + " " + filepath.Join(dir, "file"),
		filepath.Join(dir, "run") + " " + filepath.Join(dir, "run"),
		sock + " /dev/null",
	}
	assert.Equal(t, want, got, "rebuilt around the data root (left out), the symbolic link left out, the socket covered")
	assert.True(t, slices.ContainsFunc(fid.Elements, func(e policyderive.Element) bool {
		return e.Class == policyderive.Stricter && strings.Contains(e.Detail, "rebuilt")
	}), "reported as stricter")
}

// TestUnixRules evaluates the socket rules of the profile that refuses
// AF_UNIX as the engine's libseccomp does (a rule matches when every
// comparison holds; rules are alternatives): every domain from 2 to 63
// is allowed but AF_NETLINK with NETLINK_AUDIT, AF_UNIX is not, also
// with high bits set (the kernel reads the low 32). The profile carries
// no other socket rule and no socketcall.
func TestUnixRules(t *testing.T) {
	match := func(a engineArg, args [3]uint64) bool {
		v := args[a.Index]
		switch a.Op {
		case string(seccomp.OpNotEqual):
			return v != a.Value
		case string(seccomp.OpMaskedEqual):
			return v&a.Value == a.ValueTwo
		}
		t.Fatalf("unexpected op %s", a.Op)
		return false
	}
	allowed := func(args [3]uint64) bool {
		for _, r := range unixRules() {
			require.Equal(t, string(seccomp.ActAllow), r.Action)
			if !slices.ContainsFunc(r.Args, func(a engineArg) bool { return !match(a, args) }) {
				return true
			}
		}
		return false
	}
	for d := uint64(0); d < 80; d++ {
		want := d >= 2 && d <= 63
		assert.Equal(t, want, allowed([3]uint64{d, 0, 0}), "domain %d", d)
		assert.Equal(t, want, allowed([3]uint64{1<<32 | d, 0, 0}), "domain %d with high bits set", d)
	}
	assert.False(t, allowed([3]uint64{unix.AF_NETLINK, 0, unix.NETLINK_AUDIT}))
	assert.True(t, allowed([3]uint64{unix.AF_NETLINK, 0, 0}))

	p, err := convertSeccomp(seccomp.DefaultProfile(), true, true)
	require.NoError(t, err)
	n := 0
	for _, s := range p.Syscalls {
		if slices.Contains(s.Names, "socketcall") {
			t.Errorf("socketcall is in a rule: %+v", s)
		}
		if slices.Contains(s.Names, "socket") {
			n++
		}
	}
	assert.Equal(t, len(unixRules()), n, "only unixRules name socket")
}
