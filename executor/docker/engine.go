package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/versions"
	"github.com/docker/docker/client"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backend"
)

// minAPIVersion is the oldest Engine API the executor uses: bind mounts
// with BindOptions.NonRecursive and tmpfs modes (API 1.40, Docker 19.03).
const minAPIVersion = "1.40"

// Labels on every container the executor creates.
const (
	// LabelExecutor names the executor instance: "<pid>-<nonce>".
	LabelExecutor = "org.cordon-sandbox.executor"
	labelHost     = "org.cordon-sandbox.host"  // os.Hostname of the creator
	labelBoot     = "org.cordon-sandbox.boot"  // the creator host's boot id (Linux)
	labelPid      = "org.cordon-sandbox.pid"   // the creating process's pid
	labelStart    = "org.cordon-sandbox.start" // its start time (clock ticks after boot, Linux)
	labelKey      = "org.cordon-sandbox.key"   // the mount key (see spec.key)
	// labelMountPoints lists, as JSON, the placeholder mount points the
	// container's runtime creates on the host, for stray cleanup.
	labelMountPoints = "org.cordon-sandbox.mountpoints"
	// labelControl is the host directory of the container's command
	// runner, for stray cleanup.
	labelControl = "org.cordon-sandbox.control"
)

// clientOptions returns the options New builds its client with: the
// environment (DOCKER_HOST, DOCKER_API_VERSION, DOCKER_CERT_PATH,
// DOCKER_TLS_VERIFY), the Docker CLI's current context when DOCKER_HOST
// is unset, API version negotiation, then the caller's.
func clientOptions(cfg Config) ([]client.Opt, string, error) {
	opts := []client.Opt{client.FromEnv}
	where := "DOCKER_HOST"
	if os.Getenv(client.EnvOverrideHost) == "" {
		ctxOpts, name, err := cliContext()
		if err != nil {
			return nil, "", err
		}
		opts = append(opts, ctxOpts...)
		where = "the client default"
		if name != "" {
			where = "docker context " + strconv.Quote(name)
		}
	}
	opts = append(opts, client.WithAPIVersionNegotiation())
	if len(cfg.ClientOptions) > 0 {
		where = "Config.ClientOptions"
	}
	return append(opts, cfg.ClientOptions...), where, nil
}

// cliContext reads the Docker CLI's current context (DOCKER_CONTEXT, else
// currentContext in the CLI's config.json) and returns options for its
// Docker endpoint; none for the "default" context.
func cliContext() ([]client.Opt, string, error) {
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, "", nil
		}
		dir = filepath.Join(home, ".docker")
	}
	name := os.Getenv("DOCKER_CONTEXT")
	if name == "" {
		b, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err != nil {
			return nil, "", nil
		}
		var conf struct {
			CurrentContext string `json:"currentContext"`
		}
		if err := json.Unmarshal(b, &conf); err != nil {
			return nil, "", fmt.Errorf("docker executor: reading %s: %w", filepath.Join(dir, "config.json"), err)
		}
		name = conf.CurrentContext
	}
	if name == "" || name == "default" {
		return nil, "", nil
	}
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	metaPath := filepath.Join(dir, "contexts", "meta", id, "meta.json")
	b, err := os.ReadFile(metaPath)
	if err != nil {
		return nil, name, &executor.UnavailableError{Backend: Backend, Reason: fmt.Sprintf("docker context %q has no metadata at %s", name, metaPath),
			Fix: "docker context ls; docker context use default, or set DOCKER_HOST", Err: errors.Join(ErrNoEngine, err)}
	}
	var meta struct {
		Endpoints map[string]struct {
			Host          string `json:"Host"`
			SkipTLSVerify bool   `json:"SkipTLSVerify"`
		} `json:"Endpoints"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, name, fmt.Errorf("docker executor: reading %s: %w", metaPath, err)
	}
	ep, ok := meta.Endpoints["docker"]
	if !ok || ep.Host == "" {
		return nil, name, &executor.UnavailableError{Backend: Backend, Reason: fmt.Sprintf("docker context %q has no Docker endpoint", name),
			Fix: "docker context inspect " + name, Err: ErrNoEngine}
	}
	if strings.HasPrefix(ep.Host, "ssh://") {
		return nil, name, &executor.UnavailableError{Backend: Backend, Reason: fmt.Sprintf("docker context %q uses %s, and the engine client has no SSH transport", name, ep.Host),
			Fix: "forward the remote socket (ssh -NL /tmp/docker.sock:/var/run/docker.sock HOST) and set DOCKER_HOST=unix:///tmp/docker.sock", Err: ErrNoEngine}
	}
	opts := []client.Opt{client.WithHost(ep.Host)}
	tlsDir := filepath.Join(dir, "contexts", "tls", id, "docker")
	ca, cert, key := filepath.Join(tlsDir, "ca.pem"), filepath.Join(tlsDir, "cert.pem"), filepath.Join(tlsDir, "key.pem")
	if _, err := os.Stat(cert); err == nil {
		if _, err := os.Stat(ca); err != nil {
			ca = ""
		}
		opts = append(opts, client.WithTLSClientConfig(ca, cert, key))
	}
	return opts, name, nil
}

// localSocket returns the path of the engine's Unix socket when the
// client talks to a local one, else "".
func localSocket(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.Scheme != "unix" {
		return ""
	}
	p := u.Path
	if p == "" {
		p = u.Opaque
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode()&os.ModeSocket == 0 {
		return ""
	}
	return p
}

// engine is what New learned about the engine.
type engine struct {
	host       string // the client's daemon address
	where      string // where the address came from
	version    string // engine version
	apiVersion string // negotiated API version
	os, arch   string
	seccomp    bool // the engine supports seccomp profiles
	security   []string
	socket     string // local Unix socket of the engine, or ""
	rootDir    string // the engine's data root (on the engine's host)
}

// remote reports whether the engine is reached other than through a
// local Unix socket: bind sources then name paths on the engine's host.
func (e *engine) remote() bool { return e.socket == "" }

// connect makes the client and checks that the engine answers and can run
// Linux containers.
func connect(ctx context.Context, cfg Config) (*client.Client, *engine, error) {
	opts, where, err := clientOptions(cfg)
	if err != nil {
		return nil, nil, err
	}
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, nil, &executor.UnavailableError{Backend: Backend, Reason: "the engine client cannot be configured (" + where + ")",
			Fix: "check DOCKER_HOST, DOCKER_CERT_PATH and DOCKER_TLS_VERIFY", Err: errors.Join(ErrNoEngine, err)}
	}
	e := &engine{host: cli.DaemonHost(), where: where}
	fail := func(cause error, reason, fix string, err error) (*client.Client, *engine, error) {
		cli.Close()
		return nil, nil, &executor.UnavailableError{Backend: Backend, Reason: reason, Fix: fix, Err: errors.Join(cause, err)}
	}
	if _, err := cli.Ping(ctx); err != nil {
		return fail(ErrNoEngine, fmt.Sprintf("no Docker Engine answers at %s (%s)", e.host, where),
			"start dockerd (make docker-up starts a private one for cordon's tests), or point DOCKER_HOST at a running engine", err)
	}
	v, err := cli.ServerVersion(ctx)
	if err != nil {
		return fail(ErrNoEngine, "the engine at "+e.host+" does not report its version", "check the engine's log", err)
	}
	e.version, e.os, e.arch, e.apiVersion = v.Version, v.Os, v.Arch, cli.ClientVersion()
	if e.os != "linux" {
		return fail(ErrEngine, fmt.Sprintf("the engine at %s runs %s containers; cordon needs Linux containers", e.host, e.os),
			"switch the engine to Linux containers", nil)
	}
	if versions.LessThan(e.apiVersion, minAPIVersion) {
		return fail(ErrEngine, fmt.Sprintf("the engine at %s speaks API %s; cordon needs %s (Docker 19.03) or later", e.host, e.apiVersion, minAPIVersion),
			"upgrade the engine", nil)
	}
	info, err := cli.Info(ctx)
	if err != nil {
		return fail(ErrNoEngine, "the engine at "+e.host+" does not report its configuration", "check the engine's log", err)
	}
	e.rootDir = filepath.Clean(info.DockerRootDir)
	e.security = info.SecurityOptions
	e.seccomp = slices.ContainsFunc(info.SecurityOptions, func(s string) bool { return strings.Contains(s, "name=seccomp") })
	e.socket = localSocket(e.host)
	return cli, e, nil
}

// emptyTar is a tar archive with no entries: the root file system of
// HostImage.
func emptyTar() []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	_ = tw.Close()
	return b.Bytes()
}

// ensureImage checks that ref is present on the engine (host mode
// creates HostImage when it is not) and returns its environment's
// variable names, which the engine adds to every exec.
func ensureImage(ctx context.Context, cli *client.Client, ref string, host bool) ([]string, error) {
	ii, err := cli.ImageInspect(ctx, ref)
	if err != nil && cerrdefs.IsNotFound(err) && host {
		rc, ierr := cli.ImageImport(ctx, image.ImportSource{Source: bytes.NewReader(emptyTar()), SourceName: "-"}, ref, image.ImportOptions{})
		if ierr != nil {
			return nil, &executor.UnavailableError{Backend: Backend, Reason: "creating the host-mode image " + ref + " (an import of an empty archive)",
				Fix: "check the engine's log", Err: errors.Join(ErrNoImage, ierr)}
		}
		msg, rerr := readJSONStream(rc)
		rc.Close()
		if rerr != nil {
			return nil, &executor.UnavailableError{Backend: Backend, Reason: "creating the host-mode image " + ref + ": " + msg,
				Fix: "check the engine's log", Err: errors.Join(ErrNoImage, rerr)}
		}
		ii, err = cli.ImageInspect(ctx, ref)
	}
	if err != nil {
		reason := fmt.Sprintf("image %q is not present on the engine, and cordon never pulls", ref)
		fix := "build or load it locally: make docker-up (scripts/docker.sh image imports a busybox-static root file system with docker import), or docker load -i IMAGE.tar; or use host mode (Config.Image \"\")"
		if !cerrdefs.IsNotFound(err) {
			reason = fmt.Sprintf("inspecting image %q", ref)
			fix = "check the engine's log"
		}
		return nil, &executor.UnavailableError{Backend: Backend, Reason: reason, Fix: fix, Err: errors.Join(ErrNoImage, err)}
	}
	if ii.Os != "" && ii.Os != "linux" {
		return nil, &executor.UnavailableError{Backend: Backend, Reason: fmt.Sprintf("image %q is a %s image", ref, ii.Os), Fix: "use a Linux image", Err: ErrNoImage}
	}
	var names []string
	if ii.Config != nil {
		for _, kv := range ii.Config.Env {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
	}
	return names, nil
}

// readJSONStream drains an engine progress stream and returns the first
// error message it carries.
func readJSONStream(r io.Reader) (string, error) {
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	for {
		var m struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return "", nil
			}
			return "", err
		}
		if m.Error != "" {
			return m.Error, errors.New(m.Error)
		}
	}
}

// removeStrays removes the containers of executors whose creating process
// has died (a crash, a kill), and their placeholder mount points. It only
// judges containers created on this host; it returns how many it removed.
func removeStrays(ctx context.Context, cli *client.Client, self owner, log func(msg string, args ...any)) int {
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelExecutor))})
	if err != nil {
		log("docker: listing stray containers", "err", err)
		return 0
	}
	n := 0
	inUse := map[string]bool{} // mount points of the containers that stay
	var dead []container.Summary
	for _, c := range list {
		o := owner{host: c.Labels[labelHost], boot: c.Labels[labelBoot], start: c.Labels[labelStart]}
		o.pid, _ = strconv.Atoi(c.Labels[labelPid])
		// Another machine's containers, or ones without an owner, are
		// not ours to judge.
		if o.host != self.host || o.pid <= 0 || (o.boot == self.boot && o.alive()) {
			for _, p := range mountPointsOf(c.Labels) {
				inUse[p] = true
			}
			continue
		}
		dead = append(dead, c)
	}
	for _, c := range dead {
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
			log("docker: removing a stray container", "id", shortID(c.ID), "err", err)
			continue
		}
		n++
		mps := mountPointsOf(c.Labels)
		for i := len(mps) - 1; i >= 0; i-- {
			if !inUse[mps[i]] && !backend.Default.InUse(mps[i]) {
				_ = backend.Remove(mps[i])
			}
		}
		removeControlDir(c.Labels[labelControl])
		log("docker: removed a stray container of a dead process", "id", shortID(c.ID), "pid", c.Labels[labelPid])
	}
	return n
}

func mountPointsOf(labels map[string]string) []string {
	var mps []string
	_ = json.Unmarshal([]byte(labels[labelMountPoints]), &mps)
	return mps
}

// removeControlDir removes a dead container's command runner directory:
// only a real directory (not a link) named like the ones controlDir
// makes.
func removeControlDir(d string) {
	if d == "" || !filepath.IsAbs(d) || !strings.HasPrefix(filepath.Base(d), controlPrefix) {
		return
	}
	if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
		_ = os.RemoveAll(d)
	}
}
