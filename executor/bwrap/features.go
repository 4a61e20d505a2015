//go:build linux

package bwrap

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/launcher"
	"github.com/cordon-sandbox/cordon/internal/procgroup"
)

// requiredFlags are the bwrap options every command needs (bubblewrap
// 0.4 has them all).
var requiredFlags = []string{
	"--unshare-all", "--share-net", "--unshare-user", "--new-session", "--die-with-parent",
	"--cap-drop", "--clearenv", "--setenv", "--proc", "--dev", "--tmpfs", "--chdir",
	"--bind", "--ro-bind", "--remount-ro", "--symlink",
}

// Sysctls that decide whether bwrap can create user namespaces, with the
// file under /proc/sys that holds each.
const (
	sysctlAppArmor    = "kernel.apparmor_restrict_unprivileged_userns"
	sysctlMaxUserns   = "user.max_user_namespaces"
	sysctlUsernsClone = "kernel.unprivileged_userns_clone"
)

var sysctlFiles = map[string]string{
	sysctlAppArmor:    "kernel/apparmor_restrict_unprivileged_userns",
	sysctlMaxUserns:   "user/max_user_namespaces",
	sysctlUsernsClone: "kernel/unprivileged_userns_clone",
}

// features is what New detects about bwrap and the host, once per
// executor.
type features struct {
	// path is the absolute path of bwrap; version its version ("0.8.0").
	path, version string
	// flags are the options bwrap's --help lists.
	flags map[string]bool
	// setuid is set when the bwrap binary is setuid.
	setuid bool
	// euid is the effective uid of this process.
	euid int
	// sysctls holds the values of the user-namespace sysctls present.
	sysctls map[string]string
	// argsFD, jsonStatus and disableUserns say whether --args,
	// --json-status-fd and --disable-userns are used.
	argsFD, jsonStatus, disableUserns bool
	// dataMasks: --perms and --ro-bind-data, with which a hidden file is
	// an empty file nobody may read instead of /dev/null (dataOpts).
	dataMasks bool
	// disableUsernsWhy says why --disable-userns is not used.
	disableUsernsWhy string
	// probe is what the trial sandbox showed ("ok" or the failure).
	probe string
	// took is how long detection took.
	took time.Duration
}

// probeTimeout bounds each bwrap run of the detection.
const probeTimeout = 10 * time.Second

// detect finds bwrap, reads its version and options, checks the
// user-namespace sysctls and runs trial sandboxes through l (the launcher
// commands will be forked from, so a setuid bwrap meets the same
// no_new_privs as later). It fails with *executor.UnavailableError naming
// the cause and the fix.
func detect(ctx context.Context, cfg Config, l *launcher.Launcher) (*features, error) {
	began := time.Now()
	f := &features{euid: os.Geteuid(), flags: map[string]bool{}}
	name := cfg.Path
	if name == "" {
		name = "bwrap"
	}
	path, err := findProgram(name)
	if err != nil {
		return nil, &executor.UnavailableError{Backend: Backend,
			Reason: fmt.Sprintf("bubblewrap (%s) is not installed", name),
			Fix:    "install it (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap) or set Config.Path",
			Err:    fmt.Errorf("%w: %w", ErrNotInstalled, err)}
	}
	f.path = path
	if fi, err := os.Stat(path); err == nil && fi.Mode()&fs.ModeSetuid != 0 {
		f.setuid = true
	}

	out, err := runProbe(ctx, l, path, "--version")
	if err != nil {
		return nil, &executor.UnavailableError{Backend: Backend, Reason: fmt.Sprintf("%s --version failed", path),
			Fix: "reinstall bubblewrap", Err: fmt.Errorf("%w: %w", ErrVersion, err)}
	}
	f.version = parseVersion(out)
	help, _ := runProbe(ctx, l, path, "--help")
	f.flags = parseFlags(help)
	var missing []string
	for _, fl := range requiredFlags {
		if !f.flags[fl] {
			missing = append(missing, fl)
		}
	}
	if len(missing) > 0 {
		return nil, &executor.UnavailableError{Backend: Backend,
			Reason: fmt.Sprintf("bwrap %s at %s lacks %s", cmp.Or(f.version, "(unknown version)"), path, strings.Join(missing, ", ")),
			Fix:    "install bubblewrap 0.4 or later", Err: ErrVersion}
	}
	f.argsFD = f.flags["--args"]
	f.jsonStatus = f.flags["--json-status-fd"]
	f.dataMasks = f.flags["--perms"] && f.flags["--ro-bind-data"]
	switch {
	case cfg.NestedUserNamespaces:
		f.disableUsernsWhy = "Config.NestedUserNamespaces is set"
	case !f.flags["--disable-userns"]:
		f.disableUsernsWhy = fmt.Sprintf("bwrap %s has no --disable-userns (0.8 and later have it)", f.version)
	default:
		f.disableUserns = true
	}
	f.sysctls = readSysctls("/proc/sys")

	if err := f.trial(ctx, l); err != nil {
		return nil, err
	}
	f.took = time.Since(began)
	return f, nil
}

// trial runs the sandbox every command gets, around /bin/sh -c :, and
// when it fails, narrower ones to name the cause.
func (f *features) trial(ctx context.Context, l *launcher.Launcher) error {
	base := func(extra ...string) []string {
		args := []string{"--unshare-all", "--unshare-user", "--ro-bind", "/", "/"}
		args = append(args, extra...)
		return append(args, "--", executor.Shell, "-c", ":")
	}
	full := func(disableUserns bool) []string {
		extra := []string{"--new-session", "--die-with-parent", "--cap-drop", "ALL",
			"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--clearenv"}
		if disableUserns {
			extra = append(extra, "--disable-userns")
		}
		return base(extra...)
	}
	_, err := runProbe(ctx, l, f.path, full(f.disableUserns)...)
	if err == nil {
		f.probe = "ok: user, PID, network, mount, IPC, UTS and cgroup namespaces, a fresh /proc and /dev"
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if _, err := runProbe(ctx, l, f.path, base()...); err != nil {
		return diagnoseUserns(f, errText(err))
	}
	if _, err := runProbe(ctx, l, f.path, base("--proc", "/proc")...); err != nil {
		return &executor.UnavailableError{Backend: Backend,
			Reason: "bwrap cannot mount a fresh /proc (--proc /proc, which the sandbox's PID namespace needs; cordon never binds the host's /proc instead, which would show every host process)",
			Fix:    "this happens inside containers whose /proc has masked or read-only submounts (Docker's /proc/kcore, /proc/sys, ...): run the container with --security-opt systempaths=unconfined (Docker ≥ 20.10) or --privileged, or use the landlock backend",
			Err:    fmt.Errorf("%w: %w", ErrProc, err)}
	}
	if f.disableUserns {
		if _, derr := runProbe(ctx, l, f.path, base("--disable-userns")...); derr != nil {
			if _, err = runProbe(ctx, l, f.path, full(false)...); err == nil {
				f.disableUserns = false
				f.disableUsernsWhy = "--disable-userns fails on this host: " + errText(derr)
				f.probe = "ok, without --disable-userns"
				return nil
			}
		}
	}
	return &executor.UnavailableError{Backend: Backend,
		Reason: "bwrap fails with the options every command needs (--new-session --die-with-parent --cap-drop ALL --proc --dev --tmpfs --clearenv)",
		Fix:    "run bwrap with those options by hand to see which one the host refuses",
		Err:    fmt.Errorf("%w: %w", ErrTrial, err)}
}

// usernsCause is why user namespaces fail, as far as the sysctls tell.
type usernsCause uint8

const (
	causeUnknown     usernsCause = iota // a container's seccomp or AppArmor profile, most likely
	causeMaxUserns                      // user.max_user_namespaces = 0
	causeAppArmor                       // kernel.apparmor_restrict_unprivileged_userns = 1, unprivileged
	causeUsernsClone                    // kernel.unprivileged_userns_clone = 0, unprivileged
	causeSetuid                         // a setuid bwrap, neutralised by no_new_privs
)

func usernsCauseOf(f *features) usernsCause {
	unprivileged := f.euid != 0
	switch {
	case f.sysctls[sysctlMaxUserns] == "0":
		return causeMaxUserns
	case unprivileged && f.sysctls[sysctlAppArmor] == "1":
		return causeAppArmor
	case unprivileged && f.sysctls[sysctlUsernsClone] == "0":
		return causeUsernsClone
	case unprivileged && f.setuid:
		return causeSetuid
	}
	return causeUnknown
}

// diagnoseUserns names why bwrap could not create its namespaces, from
// the sysctls that govern user namespaces, and the fix.
func diagnoseUserns(f *features, msg string) *executor.UnavailableError {
	e := &executor.UnavailableError{Backend: Backend}
	switch usernsCauseOf(f) {
	case causeMaxUserns:
		e.Reason = "user namespaces are disabled: user.max_user_namespaces is 0"
		e.Fix = "sysctl -w user.max_user_namespaces=15000 as root (persist it in /etc/sysctl.d/)"
	case causeAppArmor:
		e.Reason = "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, the Ubuntu 24.04 default), so bwrap cannot create its sandbox"
		e.Fix = fmt.Sprintf("allow bwrap an AppArmor profile: write /etc/apparmor.d/bwrap containing `abi <abi/4.0>, include <tunables/global> profile bwrap %s flags=(unconfined) { userns, }` and run apparmor_parser -r /etc/apparmor.d/bwrap; or lift the restriction for every program: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (persist it in /etc/sysctl.d/)", f.path)
	case causeUsernsClone:
		e.Reason = "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)"
		e.Fix = "sysctl -w kernel.unprivileged_userns_clone=1 as root (persist it in /etc/sysctl.d/)"
	case causeSetuid:
		e.Reason = "bwrap is setuid root, but cordon starts it with no_new_privs, which makes the kernel ignore setuid; unprivileged user namespaces are then needed and fail here"
		e.Fix = "enable unprivileged user namespaces (user.max_user_namespaces > 0; on Ubuntu an AppArmor profile allowing bwrap userns)"
	default:
		e.Reason = "bwrap cannot create user namespaces on this host"
		e.Fix = "inside a container user namespaces are usually blocked by its seccomp or AppArmor profile: run it with --security-opt seccomp=unconfined --security-opt apparmor=unconfined (or --privileged), or use the landlock backend"
	}
	e.Err = ErrUserNamespaces
	if msg != "" {
		e.Err = fmt.Errorf("%w: %s", ErrUserNamespaces, msg)
	}
	return e
}

// readSysctls reads the user-namespace sysctls present under dir
// (/proc/sys).
func readSysctls(dir string) map[string]string {
	out := map[string]string{}
	for name, file := range sysctlFiles {
		if b, err := os.ReadFile(filepath.Join(dir, file)); err == nil {
			out[name] = strings.TrimSpace(string(b))
		}
	}
	return out
}

// findProgram resolves name to an absolute path: as given when it holds
// a slash, else from the host's PATH.
func findProgram(name string) (string, error) {
	if strings.Contains(name, "/") {
		p, err := filepath.Abs(name)
		if err != nil {
			return "", err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", &fs.PathError{Op: "exec", Path: p, Err: fs.ErrPermission}
		}
		return p, nil
	}
	return exec.LookPath(name)
}

// probeError is a detection run that failed: bwrap's exit status and
// what it printed.
type probeError struct {
	args   []string
	exit   int
	signal string
	stderr string
	err    error
}

func (e *probeError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	s := fmt.Sprintf("exit %d", e.exit)
	if e.signal != "" {
		s = "killed by signal " + e.signal
	}
	if e.stderr != "" {
		s += ": " + e.stderr
	}
	return s
}

func (e *probeError) Unwrap() error { return e.err }

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// runProbe runs bwrap with args (empty environment, stdin /dev/null) and
// returns its stdout, or a *probeError.
func runProbe(ctx context.Context, l *launcher.Launcher, path string, args ...string) (string, error) {
	res, err := procgroup.Run(ctx, &procgroup.Spec{
		Path:        path,
		Args:        append([]string{path}, args...),
		Env:         []string{},
		Dir:         "/",
		Timeout:     probeTimeout,
		OutputLimit: 16 << 10,
		Launcher:    l,
	})
	if err != nil {
		return "", &probeError{args: args, err: err}
	}
	if res.ExitCode != 0 || res.TimedOut {
		return "", &probeError{args: args, exit: res.ExitCode, signal: res.Signal, stderr: strings.TrimSpace(string(res.Stderr))}
	}
	return string(res.Stdout), nil
}

var (
	versionRE = regexp.MustCompile(`(?m)^bubblewrap\s+(\S+)`)
	flagRE    = regexp.MustCompile(`(?m)^\s+(--[a-z0-9-]+)`)
)

func parseVersion(out string) string {
	if m := versionRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return strings.TrimSpace(out)
}

func parseFlags(help string) map[string]bool {
	out := map[string]bool{}
	for _, m := range flagRE.FindAllStringSubmatch(help, -1) {
		out[m[1]] = true
	}
	return out
}
