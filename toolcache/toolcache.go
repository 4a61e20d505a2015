// Package toolcache finds the caches a project's language toolchains need
// and turns them into policy rules, so that `go build`, `go test`,
// `npm ci --offline` and the like work inside a sandbox that hides the
// user's home.
//
// A toolchain keeps two kinds of cache in the home, which a sandbox hides:
//
//   - module and package caches (Go's GOMODCACHE, npm's _cacache, pip's
//     cache, cargo's registry and git checkouts): what was downloaded.
//     Commands get them read-only: they build from what is there and
//     cannot change what the user's own, unsandboxed, builds will use.
//   - build caches (Go's GOCACHE): compiled objects and test results.
//     Commands get a build cache of their own, one per workspace root,
//     under $XDG_CACHE_HOME/cordon/build (else ~/.cache/cordon/build),
//     read-write and kept between sessions. The user's own build cache is
//     never handed to a command: an object written there would be linked
//     into the user's next build outside the sandbox.
//
// Locations come from the tools' own settings, never guesses: `go env
// GOMODCACHE`, `npm config get cache`, `python3 -m pip cache dir`, and
// cargo's documented CARGO_HOME (default ~/.cargo). A tool is asked only
// when the project uses it (a go.mod or go.work, package.json,
// requirements.txt, pyproject.toml, setup.py, setup.cfg or Pipfile,
// Cargo.toml at the root) and is installed. Tools run with the user's
// environment in "/", not in the workspace: a repository's own
// configuration (an .npmrc or pip.conf in the root, a go.mod toolchain
// line) cannot choose what is granted. A location that is the file
// system root, the home or one of its ancestors, or that holds the
// workspace root, is refused; one inside the root is skipped (the root's
// own rules cover it).
//
// Rules returns path rules for Policy.PathRules, each named by its
// Origin.Label ("toolchain cache: go module cache (go env GOMODCACHE)").
// They come after every rule of the policy, so any deny or ask rule that
// matches a cache (a managed policy's, the user's) still decides; they
// only replace the defaults (read_outside, write_outside) for these
// directories. Each cache also carries the environment variables that
// point the tool at it inside the sandbox (GOMODCACHE and GOCACHE,
// npm_config_cache, PIP_CACHE_DIR), since a tool there cannot read the
// user's configuration files that may have moved it.
package toolcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/policy"
)

// Cache is one toolchain cache granted to commands.
type Cache struct {
	// Tool is "go", "npm", "pip" or "cargo".
	Tool string `json:"tool"`
	// Kind is "module cache", "build cache", "package cache",
	// "registry" or "git checkouts".
	Kind string `json:"kind"`
	// Path is absolute and resolved.
	Path string `json:"path"`
	// Write is set for a per-workspace build cache; others are read-only.
	Write bool `json:"write"`
	// Source says where Path came from: "go env GOMODCACHE",
	// "per-workspace".
	Source string `json:"source"`
	// Env holds the variables that point the tool at Path in a sandboxed
	// command.
	Env map[string]string `json:"env,omitempty"`
}

// Label names the cache's rule: "toolchain cache: go module cache (go
// env GOMODCACHE)".
func (c Cache) Label() string {
	return fmt.Sprintf("toolchain cache: %s %s (%s)", c.Tool, c.Kind, c.Source)
}

// Rule returns the cache's path rule: allow read, or read and write for a
// build cache.
func (c Cache) Rule() policy.PathRule {
	ops := []policy.Op{policy.Read}
	if c.Write {
		ops = append(ops, policy.Write)
	}
	return policy.PathRule{Pattern: c.Path, Action: policy.Allow, Ops: ops}
}

// Options configure Detect.
type Options struct {
	// Root is the workspace root, absolute and resolved.
	Root string
	// Home is the home directory commands see ("" when unknown: no cache
	// under a home is then found).
	Home string
	// Env is the environment the tools run with; nil means os.Environ().
	Env []string
	// BuildDir holds the per-workspace build caches; "" means
	// $XDG_CACHE_HOME/cordon/build, else Home/.cache/cordon/build.
	BuildDir string
	// Timeout bounds each tool's run; 0 means 10 seconds.
	Timeout time.Duration
}

// Error reports a cache that was not granted: a tool that failed, or a
// location refused. Detect joins them; none stops the others.
type Error struct {
	Tool string
	// Path is the location refused, or "".
	Path string
	Err  error
}

func (e *Error) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("toolchain cache %s %q: %v", e.Tool, e.Path, e.Err)
	}
	return fmt.Sprintf("toolchain cache %s: %v", e.Tool, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errors wrapped by *Error for a refused location.
var (
	// ErrTooBroad reports a location that is "/", the home, an ancestor
	// of the home, or holds the workspace root.
	ErrTooBroad = errors.New("refused: the location is the file system root, the home or an ancestor of it, or holds the workspace root")
	// ErrNotDir reports a location that is not an existing directory.
	ErrNotDir = errors.New("not an existing directory")
	// ErrGlob reports a location whose name has a glob character, which a
	// path rule would read as a pattern.
	ErrGlob = errors.New("refused: the path has a glob character (* ? [ or \\)")
)

// tool is one toolchain: the files at the root that say a project uses
// it, and how to find its caches.
type tool struct {
	name    string
	markers []string
	find    func(d *detector, ctx context.Context) []Cache
}

var tools = []tool{
	{"go", []string{"go.mod", "go.work"}, (*detector).goCaches},
	{"npm", []string{"package.json"}, (*detector).npmCaches},
	{"pip", []string{"requirements.txt", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile"}, (*detector).pipCaches},
	{"cargo", []string{"Cargo.toml"}, (*detector).cargoCaches},
}

type detector struct {
	o    Options
	errs []error
}

// Detect finds the caches of the toolchains the project at o.Root uses.
// The error joins every *Error met; the caches found are returned either
// way.
func Detect(ctx context.Context, o Options) ([]Cache, error) {
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	d := &detector{o: o}
	var out []Cache
	for _, t := range tools {
		if !d.uses(t) {
			continue
		}
		for _, c := range t.find(d, ctx) {
			if err := d.check(c.Path); err != nil {
				d.errs = append(d.errs, &Error{Tool: c.Tool, Path: c.Path, Err: err})
				continue
			}
			out = append(out, c)
		}
	}
	return out, errors.Join(d.errs...)
}

// uses reports whether the root holds one of t's markers.
func (d *detector) uses(t tool) bool {
	for _, m := range t.markers {
		if st, err := os.Stat(filepath.Join(d.o.Root, m)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// getenv returns the value of k in the tools' environment.
func (d *detector) getenv(k string) string {
	for i := len(d.o.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(d.o.Env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// run runs a tool in "/" with the user's environment and returns its
// trimmed output's last line; failures are recorded and give "".
func (d *detector) run(ctx context.Context, name string, args ...string) string {
	bin, err := exec.LookPath(name)
	if err != nil {
		return "" // not installed: nothing to grant, nothing to report
	}
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = "/"
	cmd.Env = append(slices.Clip(d.o.Env), "GOTOOLCHAIN=local", "PIP_DISABLE_PIP_VERSION_CHECK=1", "npm_config_update_notifier=false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		d.errs = append(d.errs, &Error{Tool: name, Err: fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))})
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// resolve returns p absolute and resolved, or "" when it does not exist.
func resolve(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// check refuses a location that is too broad or not a directory.
func (d *detector) check(p string) error {
	st, err := os.Stat(p)
	if err != nil || !st.IsDir() {
		return ErrNotDir
	}
	if strings.ContainsAny(p, "*?[\\") {
		return ErrGlob
	}
	if p == "/" || within(d.o.Root, p) {
		return ErrTooBroad
	}
	if h := resolve(d.o.Home); h != "" && within(h, p) {
		return ErrTooBroad
	}
	return nil
}

// within reports whether p is base or below it.
func within(p, base string) bool {
	return p == base || strings.HasPrefix(p, strings.TrimSuffix(base, "/")+"/")
}

// inRoot reports whether p is inside the workspace root: the root's own
// rules decide it, and no cache rule is made.
func (d *detector) inRoot(p string) bool { return within(p, d.o.Root) && p != d.o.Root }

// readCache returns a read-only cache at the resolved p, or nothing.
func (d *detector) readCache(toolName, kind, p, source string, env map[string]string) []Cache {
	r := resolve(p)
	if r == "" || d.inRoot(r) {
		return nil
	}
	return []Cache{{Tool: toolName, Kind: kind, Path: r, Source: source, Env: env}}
}

// buildCache makes (once) and returns the per-workspace build cache
// BuildDir/<root's base name>-<hash of the root>/name.
func (d *detector) buildCache(toolName, kind, name string, env func(path string) map[string]string) []Cache {
	base := d.o.BuildDir
	if base == "" {
		x := d.getenv("XDG_CACHE_HOME")
		if !filepath.IsAbs(x) {
			if d.o.Home == "" {
				return nil
			}
			x = filepath.Join(d.o.Home, ".cache")
		}
		base = filepath.Join(x, "cordon", "build")
	}
	sum := sha256.Sum256([]byte(d.o.Root))
	dir := filepath.Join(base, filepath.Base(d.o.Root)+"-"+hex.EncodeToString(sum[:6]), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		d.errs = append(d.errs, &Error{Tool: toolName, Path: dir, Err: err})
		return nil
	}
	r := resolve(dir)
	if r == "" || d.inRoot(r) {
		return nil
	}
	return []Cache{{Tool: toolName, Kind: kind, Path: r, Write: true, Source: "per-workspace", Env: env(r)}}
}

func (d *detector) goCaches(ctx context.Context) []Cache {
	mod := d.run(ctx, "go", "env", "GOMODCACHE")
	if mod == "" {
		return nil
	}
	out := d.readCache("go", "module cache", mod, "go env GOMODCACHE", map[string]string{"GOMODCACHE": resolveOr(mod)})
	return append(out, d.buildCache("go", "build cache", "go-build", func(p string) map[string]string {
		return map[string]string{"GOCACHE": p}
	})...)
}

func (d *detector) npmCaches(ctx context.Context) []Cache {
	c := d.run(ctx, "npm", "config", "get", "cache")
	if c == "" {
		return nil
	}
	return d.readCache("npm", "package cache", filepath.Join(c, "_cacache"), "npm config get cache", map[string]string{"npm_config_cache": resolveOr(c)})
}

func (d *detector) pipCaches(ctx context.Context) []Cache {
	py := "python3"
	if _, err := exec.LookPath(py); err != nil {
		return nil
	}
	c := d.run(ctx, py, "-m", "pip", "cache", "dir")
	if c == "" {
		return nil
	}
	return d.readCache("pip", "package cache", c, "python3 -m pip cache dir", map[string]string{"PIP_CACHE_DIR": resolveOr(c)})
}

// cargoCaches grants CARGO_HOME's registry and git checkouts, never
// CARGO_HOME itself (it holds credentials.toml).
func (d *detector) cargoCaches(context.Context) []Cache {
	home := d.getenv("CARGO_HOME")
	source := "CARGO_HOME"
	if !filepath.IsAbs(home) {
		if d.o.Home == "" {
			return nil
		}
		home, source = filepath.Join(d.o.Home, ".cargo"), "~/.cargo, cargo's default CARGO_HOME"
	}
	out := d.readCache("cargo", "registry", filepath.Join(home, "registry"), source, nil)
	return append(out, d.readCache("cargo", "git checkouts", filepath.Join(home, "git"), source, nil)...)
}

// resolveOr returns p resolved, or p when it cannot be.
func resolveOr(p string) string {
	if r := resolve(p); r != "" {
		return r
	}
	return p
}

// Extend returns a copy of p with a rule for each cache after its own
// rules, each named by an Origin whose Label is the cache's. A cache
// whose label p already has (a policy extended before) is not added
// twice.
func Extend(p *policy.Policy, caches []Cache) *policy.Policy {
	q := p.Clone()
	have := map[string]bool{}
	for _, o := range q.Origins {
		if o.Label != "" {
			have[o.Label] = true
		}
	}
	for _, c := range caches {
		l := c.Label()
		if have[l] {
			continue
		}
		have[l] = true
		n := len(q.PathRules)
		q.PathRules = append(q.PathRules, c.Rule())
		q.Origins = append(q.Origins, policy.Origin{List: "path_rules", Start: n, End: n + 1, Label: l})
	}
	return q
}

// Env returns the variables of every cache, in a map.
func Env(caches []Cache) map[string]string {
	m := map[string]string{}
	for _, c := range caches {
		for k, v := range c.Env {
			m[k] = v
		}
	}
	return m
}
