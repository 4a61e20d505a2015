package workspace

import (
	"os"

	"github.com/cordon-sandbox/cordon/executor"
	"path/filepath"
	"sort"
	"strings"
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
// (executor.TempDirer), the WithEnv additions on top, then the root's virtualenv activated unless
// WithEnv set PATH.
func (w *Workspace) commandEnv() []string {
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
