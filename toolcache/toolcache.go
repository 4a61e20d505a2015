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
// Cargo.toml at the root) and is installed.
//
// Asking a tool runs it on the host, unsandboxed, so nothing a command
// could have written may take part (Options.Writable says what commands
// may write: the root at least):
//   - the tool is looked up in the PATH without its entries that commands
//     may write (an activated virtualenv, node_modules/.bin), and a
//     program that resolves into such a place is not run;
//   - it runs in "/", not in the workspace (a repository's .npmrc,
//     pip.conf or go.mod toolchain line is not read), with only the
//     variables that locate the user's own settings (HOME, the XDG
//     directories, GOPATH, GOMODCACHE, GOENV, npm's and pip's cache and
//     config variables, CARGO_HOME) and the filtered PATH: no
//     PYTHONPATH, NODE_OPTIONS, LD_PRELOAD or virtualenv;
//   - it is killed with everything it started after Options.Timeout, and
//     only the first 64 KiB of its output are kept (the rest is read and dropped).
//
// A location is granted only if it looks like the tool's cache (Go's has
// cache/download, npm's _cacache index-v5 or content-v2, pip's http,
// http-v2 or wheels, cargo's registry index or cache and git db or
// checkouts), and is refused when it is the file system root, the home
// (Options.Home or the tools' HOME) or an ancestor of either, holds the
// workspace root, has a glob character in its name, or lies under a
// directory commands may write (which could be swapped for a symbolic
// link to anything before the next derivation). One inside the root is
// skipped: the root's own rules cover it.
//
// The per-workspace build cache is made from its base ($XDG_CACHE_HOME or
// ~/.cache) down without following symbolic links, each directory owned
// by the user and not writable by group or others; it is keyed by the
// root's path, device and inode, so a clone made again at the same path
// starts with an empty cache. Commands can write it: its content is as
// trustworthy as the workspace's own files (a command could plant an
// object that later sandboxed builds link, as it could change the
// sources). The user's own builds never read it. The read-only caches
// hold what every project of the user downloaded, private modules
// included: a command can read them all.
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
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/internal/abspath"
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
	// NoRule is set for a build cache that was refused (Detect's error
	// says why) or lies in the root: no rule grants it, but its variables
	// are still set, so that the tool never falls back to the user's own
	// cache.
	NoRule bool `json:"no_rule,omitempty"`
}

// LabelPrefix begins every cache's Label.
const LabelPrefix = "toolchain cache: "

// Label names the cache's rule: "toolchain cache: go module cache (go
// env GOMODCACHE)".
func (c Cache) Label() string {
	return fmt.Sprintf("%s%s %s (%s)", LabelPrefix, c.Tool, c.Kind, c.Source)
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
	// Writable reports whether commands may write the resolved path p
	// (the policy's write decision is allow); nil means inside Root. The
	// root is always writable here.
	Writable func(p string) bool
	// DryRun makes no directory: the build cache is returned whether it
	// exists or not (explain and derive show what a run would grant).
	DryRun bool
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
	ErrGlob = errors.New("refused: the path has a glob character (* ? [ { or \\)")
	// ErrNotCache reports a location that does not look like the tool's
	// cache.
	ErrNotCache = errors.New("refused: it does not look like the tool's cache")
	// ErrWritableParent reports a location under a directory commands may
	// write.
	ErrWritableParent = errors.New("refused: commands may write a directory above it, and could replace it by a symbolic link")
	// ErrUnsafeTool reports a tool program that commands could have
	// written.
	ErrUnsafeTool = errors.New("not run: the program lies where commands may write")
	// ErrUnsafeHome reports a home that lies in the workspace or that
	// commands may write: no tool is run.
	ErrUnsafeHome = errors.New("no tool run: the home is in the workspace or writable by commands, and tools read their settings from it")
	// ErrUnsafeSettings reports a settings file or directory of the tools
	// that commands may write: no tool is run.
	ErrUnsafeSettings = errors.New("no tool run: commands may write this settings file or directory of the tools")
	// ErrUnsafeDir reports a build cache directory that is a symbolic
	// link, not the user's, or writable by others.
	ErrUnsafeDir = errors.New("refused: a symbolic link, not owned by the user or writable by others")
)

// tool is one toolchain: the files at the root that say a project uses
// it, and how to find its caches.
type tool struct {
	name    string
	markers []string
	find    func(d *detector, ctx context.Context) []Cache
}

// looks lists, per tool and kind, entries one of which a real cache holds.
var looks = map[string][]string{
	"go module cache":     {"cache/download"},
	"npm package cache":   {"index-v5", "content-v2"},
	"pip package cache":   {"http", "http-v2", "wheels"},
	"cargo registry":      {"index", "cache"},
	"cargo git checkouts": {"db", "checkouts"},
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
	// toolHome is the tools' own HOME, resolved.
	toolHome string
	// path is the tools' PATH: the absolute entries commands may not
	// write.
	path string
}

// writable reports whether commands may write p (resolved).
func (d *detector) writable(p string) bool {
	return abspath.Within(p, d.o.Root) || d.o.Writable(p)
}

// safePath returns the user's PATH without the entries commands may
// write and without relative ones.
func (d *detector) safePath() string {
	var keep []string
	for _, e := range filepath.SplitList(d.getenv("PATH")) {
		if !filepath.IsAbs(e) {
			continue
		}
		r := resolve(e)
		if r == "" || d.writable(r) {
			continue
		}
		keep = append(keep, r) // resolved: a link swapped later is not followed
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// toolEnv are the variables a tool runs with: those that locate the
// user's own settings and caches.
var toolEnv = []string{"HOME", "USER", "LOGNAME", "LANG", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
	"GOPATH", "GOMODCACHE", "GOENV", "GOROOT",
	"npm_config_cache", "NPM_CONFIG_CACHE", "npm_config_userconfig", "NPM_CONFIG_USERCONFIG", "npm_config_globalconfig", "NPM_CONFIG_GLOBALCONFIG",
	"PIP_CACHE_DIR", "PIP_CONFIG_FILE", "PIP_NO_CACHE_DIR", "CARGO_HOME"}

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
	if d.o.Writable == nil {
		d.o.Writable = func(string) bool { return false }
	}
	d.toolHome = resolve(d.getenv("HOME"))
	d.path = d.safePath()
	var out []Cache
	for _, t := range tools {
		if !d.uses(t) {
			continue
		}
		for _, c := range t.find(d, ctx) {
			if err := d.check(c); err != nil {
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

// getenv returns the value of k in the tools' environment, or "".
func (d *detector) getenv(k string) string {
	v, _ := d.lookupEnv(k)
	return v
}

// run runs a tool in "/" with the variables of toolEnv and the filtered
// PATH, and returns its trimmed output's last line; failures are recorded
// and give "".
func (d *detector) run(ctx context.Context, name string, args ...string) string {
	bin, err := lookPath(name, d.path)
	if err != nil {
		return "" // not installed: nothing to grant, nothing to report
	}
	real := resolve(bin)
	if real == "" || d.writable(real) || d.writable(filepath.Dir(real)) || d.writable(filepath.Dir(filepath.Dir(real))) {
		// The program, its directory or its installation (where an
		// interpreter loads its libraries from) could be the commands'.
		d.errs = append(d.errs, &Error{Tool: name, Path: bin, Err: ErrUnsafeTool})
		return ""
	}
	if err := d.safeSettings(); err != nil {
		d.errs = append(d.errs, &Error{Tool: name, Path: err.path, Err: err.err})
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, real, args...)
	cmd.Args[0] = name
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + d.path, "GOTOOLCHAIN=local", "GOFLAGS=", "GOTELEMETRY=off", "PIP_DISABLE_PIP_VERSION_CHECK=1", "npm_config_update_notifier=false"}
	for _, k := range toolEnv {
		if v, ok := d.lookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	setGroup(cmd) // killed with everything it started
	cmd.WaitDelay = time.Second
	var stdout, stderr limited
	stdout.max, stderr.max = 64<<10, 4<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	killGroup(cmd) // nothing it started outlives it
	if err != nil {
		d.errs = append(d.errs, &Error{Tool: name, Err: fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))})
		return ""
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// settingsError names the setting that stops every tool from running.
type settingsError struct {
	path string
	err  error
}

// settingFiles are the files and directories, relative to the tools' home
// unless absolute, from which the tools asked here read settings or load
// code: Go's env file, npm's user config and node's home module
// directories, pip's user configs, Python's user site.
var settingFiles = []string{".config/go/env", ".npmrc", ".node_modules", ".node_libraries", ".config/pip", ".pip", ".local/lib"}

// safeSettings refuses to run any tool when the homes or the tools'
// settings could be the commands': a home inside the root or writable,
// or one of settingFiles, the variables that name settings files, or the
// XDG directories writable.
func (d *detector) safeSettings() *settingsError {
	var homes []string
	for _, h := range []string{d.o.Home, d.getenv("HOME")} {
		if !filepath.IsAbs(h) {
			continue
		}
		h = resolveOr(filepath.Clean(h)) // one that does not exist yet counts too
		if !slices.Contains(homes, h) {
			homes = append(homes, h)
		}
	}
	var paths []string
	for _, h := range homes {
		if abspath.Within(h, d.o.Root) || d.writable(h) {
			return &settingsError{h, ErrUnsafeHome}
		}
		for _, f := range settingFiles {
			paths = append(paths, filepath.Join(h, f))
		}
	}
	for _, k := range []string{"GOENV", "npm_config_userconfig", "NPM_CONFIG_USERCONFIG", "npm_config_globalconfig", "NPM_CONFIG_GLOBALCONFIG", "PIP_CONFIG_FILE", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		if v := d.getenv(k); filepath.IsAbs(v) {
			paths = append(paths, v)
		}
	}
	for _, p := range paths {
		if r := resolveOr(p); d.writable(r) {
			return &settingsError{r, ErrUnsafeSettings}
		}
	}
	return nil
}

// lookPath finds name in path (absolute entries only).
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// limited keeps the first max bytes written to it.
type limited struct {
	bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// lookupEnv returns the value of k in the tools' environment.
func (d *detector) lookupEnv(k string) (string, bool) {
	for i := len(d.o.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(d.o.Env[i], k+"="); ok {
			return v, true
		}
	}
	return "", false
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

// check refuses a location that is too broad, not a cache, or under a
// directory commands may write.
func (d *detector) check(c Cache) error {
	if c.NoRule {
		return nil // no rule: its variables only
	}
	p := c.Path
	if cp, err := policy.CompilePattern(p, ""); err != nil || !cp.Literal() {
		return ErrGlob // a rule reads its path as a pattern
	}
	if p == "/" || abspath.Within(d.o.Root, p) {
		return ErrTooBroad
	}
	for _, h := range []string{resolve(d.o.Home), d.toolHome} {
		if h != "" && abspath.Within(h, p) {
			return ErrTooBroad
		}
	}
	if d.writableAbove(filepath.Dir(p)) {
		return ErrWritableParent
	}
	if c.Write {
		return nil // made by buildCache, which checked every directory
	}
	st, err := os.Stat(p)
	if err != nil || !st.IsDir() {
		return ErrNotDir
	}
	for _, e := range looks[c.Tool+" "+c.Kind] {
		if st, err := os.Stat(filepath.Join(p, e)); err == nil && st.IsDir() {
			return nil
		}
	}
	return ErrNotCache
}

// inRoot reports whether p is inside the workspace root: the root's own
// rules decide it, and no cache rule is made.
func (d *detector) inRoot(p string) bool { return abspath.Below(p, d.o.Root) }

// writableAbove reports whether commands may write p or a directory above
// it (which could be swapped for a symbolic link before the next
// derivation).
func (d *detector) writableAbove(p string) bool {
	for ; ; p = filepath.Dir(p) {
		if d.writable(p) {
			return true
		}
		if p == "/" {
			return false
		}
	}
}

// readCache returns a read-only cache at the resolved p, or nothing.
func (d *detector) readCache(toolName, kind, p, source string, env map[string]string) []Cache {
	r := resolve(p)
	if r == "" || d.inRoot(r) {
		return nil
	}
	return []Cache{{Tool: toolName, Kind: kind, Path: r, Source: source, Env: env}}
}

// safeMkdir makes dir (mode 0700) unless it exists, and refuses it unless
// it is a directory, not a symbolic link, and (on Unix) owned by this user
// and not writable by group or others.
func safeMkdir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() || !ownedSafe(st) {
		return ErrUnsafeDir
	}
	return nil
}

// maxBase bounds the root's base name in the build cache's directory
// name, which must stay under NAME_MAX with the hash.
const maxBase = 64

// buildCache makes (once) and returns the per-workspace build cache
// BuildDir/<root's base name>-<hash of the root's path, device and
// inode>/name, made from BuildDir down without following symbolic links.
func (d *detector) buildCache(toolName, kind, name string, env func(path string) map[string]string) []Cache {
	// base is the user's own directory (its symbolic links are the
	// user's choice); everything below it is made here, never followed.
	base, parts := d.o.BuildDir, []string(nil)
	if base == "" {
		base = d.getenv("XDG_CACHE_HOME")
		if !filepath.IsAbs(base) {
			if d.o.Home == "" {
				return nil
			}
			base = filepath.Join(d.o.Home, ".cache")
		}
		parts = []string{"cordon", "build"}
	}
	id, err := rootID(d.o.Root)
	if err != nil {
		d.errs = append(d.errs, &Error{Tool: toolName, Path: d.o.Root, Err: err})
		return nil
	}
	sum := sha256.Sum256([]byte(id))
	short := filepath.Base(d.o.Root)
	if len(short) > maxBase {
		short = short[:maxBase]
	}
	parts = append(parts, short+"-"+hex.EncodeToString(sum[:6]), name)
	top := resolve(base)
	if top == "" {
		top = filepath.Clean(base) // not made yet
	}
	intended := filepath.Join(append([]string{top}, parts...)...)
	// A refused build cache still names the tool's cache, without a rule:
	// left unset, the tool would fall back to the user's own (Go's
	// ~/.cache/go-build), which a policy may let commands write.
	refuse := func(path string, err error) []Cache {
		d.errs = append(d.errs, &Error{Tool: toolName, Path: path, Err: err})
		return []Cache{{Tool: toolName, Kind: kind, Path: intended, Write: true, Source: "per-workspace", Env: env(intended), NoRule: true}}
	}
	if d.inRoot(intended) {
		return []Cache{{Tool: toolName, Kind: kind, Path: intended, Write: true, Source: "per-workspace", Env: env(intended), NoRule: true}}
	}
	if d.writableAbove(top) {
		return refuse(intended, ErrWritableParent)
	}
	if !d.o.DryRun {
		if err := os.MkdirAll(base, 0o700); err != nil {
			return refuse(base, err)
		}
		if r := resolve(base); r != top {
			return refuse(base, ErrUnsafeDir) // made meanwhile as a link elsewhere
		}
	}
	dir := top
	for _, part := range parts {
		dir = filepath.Join(dir, part)
		if d.o.DryRun {
			continue
		}
		if err := safeMkdir(dir); err != nil {
			return refuse(dir, err)
		}
	}
	return []Cache{{Tool: toolName, Kind: kind, Path: dir, Write: true, Source: "per-workspace", Env: env(dir)}}
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
	// -I: no user site, no PYTHON* variables, not the working directory.
	c := d.run(ctx, py, "-I", "-m", "pip", "cache", "dir")
	if c == "" {
		return nil
	}
	return d.readCache("pip", "package cache", c, "python3 -I -m pip cache dir", map[string]string{"PIP_CACHE_DIR": resolveOr(c)})
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
		if have[l] || c.NoRule {
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

// WritableBy returns an Options.Writable for policy p in the workspace at
// root: whether p allows commands to write the path, or asks (an approval
// would let them), compiled once, on the first call. A policy that does not compile writes everywhere, so
// nothing is granted.
func WritableBy(p *policy.Policy, root, home string) func(string) bool {
	c := sync.OnceValues(func() (*policy.Checker, error) { return policy.NewChecker(p, root, home) })
	return func(path string) bool {
		ch, err := c()
		if err != nil {
			return true
		}
		// An ask may be approved: it counts as writable.
		return ch.DecideResolved(path, policy.Write).Decision != policy.Deny
	}
}
