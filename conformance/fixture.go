//go:build unix

package conformance

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/conformance/internal/canary"
)

// homeSecrets are the canary files of the fake home, relative to it.
var homeSecrets = []string{".ssh/id_rsa", ".aws/credentials", ".gitconfig"}

// fixture is one case's world: a workspace root, a fake home with canary
// secrets, an outside directory, counting canaries, and a canary variable
// and descriptor in the parent. Everything is removed by close.
type fixture struct {
	tag string
	// base holds root, home, outside and s (sockets); all resolved.
	base, root, home, outside, sockDir string
	// secrets maps a home-relative path to the token it holds.
	secrets map[string]string
	// outsideFile is outside/canary.txt, holding outsideToken.
	outsideFile, outsideToken string

	tcp, udp, unixStream, unixDgram, abstract *canary.Canary

	envToken       string
	envPrev        string
	envHad         bool
	fd             int
	fdPath, fdText string
}

// token returns a fresh unique token naming its purpose.
func token(kind string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "cordon-" + kind + "-" + hex.EncodeToString(b)
}

// defaultTempDir is where fixtures and the probe live without
// WithTempDir: $TMPDIR when set, else /var/tmp when it is a writable
// directory, else os.TempDir(). Not /tmp by default: sandboxes give
// commands a private /tmp, which would hide the outside directory even
// where the policy lets commands read it (trusted mode), and workspaces do
// not normally live there.
func defaultTempDir() string {
	if d := os.Getenv("TMPDIR"); d != "" {
		return d
	}
	if runtime.GOOS == "linux" {
		if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() && unix.Access("/var/tmp", unix.W_OK|unix.X_OK) == nil {
			return "/var/tmp"
		}
	}
	return os.TempDir()
}

func newFixture(tempDir string) (fx *fixture, err error) {
	fx = &fixture{tag: token("case"), secrets: map[string]string{}, fd: -1}
	defer func() {
		if err != nil {
			fx.close()
			fx = nil
		}
	}()
	base, err := os.MkdirTemp(tempDir, "cordon-conformance-")
	if err != nil {
		return fx, err
	}
	fx.base = base // set before resolving, so close removes it
	if fx.base, err = filepath.EvalSymlinks(base); err != nil {
		return fx, err
	}
	// Permissive modes, so that only the sandbox, not file permissions,
	// keeps a command out (the control twins prove the permissions allow).
	if err := os.Chmod(fx.base, 0o755); err != nil {
		return fx, err
	}
	fx.root = filepath.Join(fx.base, "root")
	fx.home = filepath.Join(fx.base, "home")
	fx.outside = filepath.Join(fx.base, "outside")
	fx.sockDir = filepath.Join(fx.base, "s")
	for _, d := range []string{fx.root, fx.home, fx.outside, fx.sockDir, filepath.Join(fx.home, ".aws")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fx, err
		}
	}
	if err := os.Mkdir(filepath.Join(fx.home, ".ssh"), 0o700); err != nil {
		return fx, err
	}
	for _, rel := range homeSecrets {
		tok := token("secret")
		fx.secrets[rel] = tok
		content, mode := "", fs.FileMode(0o600)
		switch rel {
		case ".gitconfig":
			content, mode = "[user]\n\tname = "+tok+"\n", 0o644
		case ".aws/credentials":
			content = "[default]\naws_secret_access_key = " + tok + "\n"
		default:
			content = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + tok + "\n-----END OPENSSH PRIVATE KEY-----\n"
		}
		if err := os.WriteFile(filepath.Join(fx.home, rel), []byte(content), mode); err != nil {
			return fx, err
		}
	}
	fx.outsideFile = filepath.Join(fx.outside, "canary.txt")
	fx.outsideToken = token("outside")
	if err := os.WriteFile(fx.outsideFile, []byte(fx.outsideToken+"\n"), 0o644); err != nil {
		return fx, err
	}

	if fx.tcp, err = canary.TCP(); err != nil {
		return fx, fmt.Errorf("tcp canary: %w", err)
	}
	if fx.udp, err = canary.UDP(); err != nil {
		return fx, fmt.Errorf("udp canary: %w", err)
	}
	if fx.unixStream, err = canary.Unix(filepath.Join(fx.sockDir, "stream.sock")); err != nil {
		return fx, fmt.Errorf("unix stream canary: %w", err)
	}
	if fx.unixDgram, err = canary.Unixgram(filepath.Join(fx.sockDir, "dgram.sock")); err != nil {
		return fx, fmt.Errorf("unix datagram canary: %w", err)
	}
	if runtime.GOOS == "linux" {
		if fx.abstract, err = canary.Abstract(fx.tag); err != nil {
			return fx, fmt.Errorf("abstract unix canary: %w", err)
		}
	}

	fx.envToken = token("parent-env")
	fx.envPrev, fx.envHad = os.LookupEnv(ParentCanaryEnv)
	if err := os.Setenv(ParentCanaryEnv, fx.envToken); err != nil {
		return fx, err
	}

	// A descriptor left inheritable on purpose: the executor must not pass it.
	fx.fdPath = filepath.Join(fx.base, "fd-canary")
	fx.fdText = token("fd")
	if err := os.WriteFile(fx.fdPath, []byte(fx.fdText), 0o644); err != nil {
		return fx, err
	}
	fd, err := unix.Open(fx.fdPath, unix.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		return fx, fmt.Errorf("canary descriptor: %w", err)
	}
	fx.fd = fd
	if err := fx.inheritable(); err != nil {
		return fx, err
	}
	return fx, nil
}

// inheritable clears FD_CLOEXEC on the canary descriptor again: an
// executor's descriptor sweep may have set it during an earlier run.
func (fx *fixture) inheritable() error {
	if _, err := unix.FcntlInt(uintptr(fx.fd), unix.F_SETFD, 0); err != nil {
		return fmt.Errorf("clearing FD_CLOEXEC on the canary descriptor: %w", err)
	}
	return nil
}

// close removes everything the fixture made.
func (fx *fixture) close() error {
	var errs []error
	for _, c := range []*canary.Canary{fx.tcp, fx.udp, fx.unixStream, fx.unixDgram, fx.abstract} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	if fx.envToken != "" {
		if fx.envHad {
			errs = append(errs, os.Setenv(ParentCanaryEnv, fx.envPrev))
		} else {
			errs = append(errs, os.Unsetenv(ParentCanaryEnv))
		}
	}
	if fx.fd >= 0 {
		errs = append(errs, unix.Close(fx.fd))
	}
	if fx.base != "" {
		errs = append(errs, removeAll(fx.base))
	}
	return errors.Join(errs...)
}

// removeAll removes dir even when a command left read-only directories.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
