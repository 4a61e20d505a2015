package workspace

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

// envAllowlist is what commands get from the host environment by default.
var envAllowlist = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "TERM": true, "TZ": true, "TMPDIR": true,
}

// defaultPath is PATH when the host has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

func allowedEnv(k string) bool {
	return envAllowlist[k] || strings.HasPrefix(k, "LC_")
}

// commandEnv builds the complete environment of a command: the allowlisted
// (or, with WithInheritEnv, every) host variable as it was when Local ran,
// HOME set to the workspace's home (removed when the home is unknown),
// TMPDIR set to the executor's temporary directory when it has one
// (executor.TempDirer), GIT_CONFIG_GLOBAL=/dev/null when a sandbox hides
// the user's git config (gitConfigHidden), the toolchain caches'
// variables when sandboxed (GOMODCACHE, GOCACHE, ...: package toolcache;
// they replace inherited values, which name caches the sandbox does not
// grant), the WithEnv additions on top,
// then the root's virtualenv activated unless WithEnv set PATH.
func (w *Workspace) commandEnv(sandboxed bool) []string {
	m := make(map[string]string, len(envAllowlist)+len(w.env)+2)
	for _, kv := range w.parentEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if w.inheritEnv || allowedEnv(k) {
			m[k] = v
		}
	}
	if h := w.Home(); h != "" {
		m["HOME"] = h
	} else {
		delete(m, "HOME")
	}
	if m["PATH"] == "" {
		m["PATH"] = defaultPath
	}
	if td, ok := w.exec.(executor.TempDirer); ok {
		if dir := td.TempDir(); dir != "" {
			m["TMPDIR"] = dir
		}
	}
	if _, set := m["GIT_CONFIG_GLOBAL"]; !set && sandboxed && w.gitConfigHidden() {
		m["GIT_CONFIG_GLOBAL"] = os.DevNull
	}
	if sandboxed {
		for k, v := range w.cacheEnv {
			m[k] = v
		}
	}
	for k, v := range w.env {
		m[k] = v
	}
	if _, explicit := w.env["PATH"]; !explicit {
		if venv := w.virtualenv(); venv != "" {
			m["PATH"] = filepath.Join(venv, "bin") + string(os.PathListSeparator) + m["PATH"]
			m["VIRTUAL_ENV"] = venv
			delete(m, "PYTHONHOME")
		}
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// virtualenvDirs are the virtualenv locations at the root, in order.
var virtualenvDirs = []string{".venv", "venv"}

// virtualenv returns the absolute path of the root's virtualenv: the first
// of .venv and venv whose bin holds a python, or "".
func (w *Workspace) virtualenv() string {
	for _, d := range virtualenvDirs {
		dir := filepath.Join(w.Root(), d)
		if st, err := os.Stat(filepath.Join(dir, "bin", "python")); err == nil && !st.IsDir() {
			return dir
		}
	}
	return ""
}

// gitConfigFiles are the user's global git configuration files, relative
// to the home, that git reads when GIT_CONFIG_GLOBAL is not set
// ($XDG_CONFIG_HOME/git/config is read as well when that is set).
var gitConfigFiles = []string{".gitconfig", ".config/git/config"}

// gitConfigHidden reports whether the policy keeps commands from reading
// the user's global git configuration: git treats a global config it
// cannot read as fatal (exit 128) where a sandbox denies it (Landlock
// refuses the open), while it runs without one that does not exist (bwrap
// and docker show the home as absent). When one of them exists and the
// policy does not let commands read it, commands get
// GIT_CONFIG_GLOBAL=/dev/null, so git behaves alike in every sandbox and
// reads no host configuration the policy does not grant: no identity,
// aliases, credential helpers or hooksPath from the host. A policy that
// allows reading them (trusted mode, or a path rule such as
// {pattern: "~/.gitconfig", action: allow, ops: [read]}) keeps the
// user's configuration.
func (w *Workspace) gitConfigHidden() bool {
	home := w.Home()
	if home == "" {
		return false // no home: HOME is unset, and git reads no global config
	}
	files := gitConfigFiles
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		files = append(files[:1:1], filepath.Join(x, "git", "config"))
	}
	for _, f := range files {
		if !filepath.IsAbs(f) {
			f = filepath.Join(home, f)
		}
		if _, err := os.Stat(f); err != nil {
			continue // git reads no file that is not there
		}
		if v := w.checker.DecideResolved(f, policy.Read); v.Decision != policy.Allow {
			return true
		}
	}
	return false
}
