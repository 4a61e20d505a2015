//go:build linux

package gateoracle

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Fixture is the throwaway tree every command runs in: a workspace root
// with secrets, a git repository with a bare remote, and a home, rebuilt
// from a template before each run at the same absolute paths.
type Fixture struct {
	// Base holds the template and the working copy.
	Base string
	// Root, Home and Remote are the working copy's workspace root, home
	// directory and the repository's bare remote ("origin").
	Root, Home, Remote string
	tmpl               string
	// clean is the snapshot of an unchanged working copy, nil when it
	// must be reset before the next run.
	clean map[string]fileState
}

// fixtureFiles are the files of the template, relative to its work
// directory (root/, home/).
var fixtureFiles = map[string]string{
	"root/.env":             "SECRET_ENV=1\n",
	"root/.env.local":       "SECRET_LOCAL=1\n",
	"root/secrets/api.key":  "SECRET_KEY\n",
	"root/secrets/db.txt":   "SECRET_DB\n",
	"root/src/main.go":      "package main\n\nfunc main() {}\n",
	"root/src/util.go":      "package main\n\n// TODO: util\n",
	"root/src/notes.md":     "# notes\n",
	"root/docs/guide.md":    "# guide\n",
	"root/a.txt":            "alpha\nbeta\n",
	"root/b.txt":            "beta\ngamma\n",
	"root/sub/a.txt":        "sub a\n",
	"root/list":             ".env\n",
	"root/names.txt":        "secrets/api.key\n",
	"root/script.sh":        "cat .env\n",
	"root/Makefile":         "all:\n\t@echo all\ntest:\n\t@echo test\n",
	"root/go.mod":           "module example.com/fixture\n\ngo 1.22\n",
	"root/package.json":     "{\"name\":\"fixture\",\"scripts\":{\"test\":\"echo test\"}}\n",
	"home/.ssh/id_rsa":      "SECRET_SSH\n",
	"home/.aws/credentials": "SECRET_AWS\n",
	"home/.gitconfig":       "[user]\n\tname = Oracle\n\temail = oracle@example.com\n",
	"home/notes.txt":        "home notes\n",
}

// NewFixture builds the template under base (an empty directory) and a
// first working copy.
func NewFixture(base string) (*Fixture, error) {
	base, err := filepath.EvalSymlinks(base)
	if err != nil {
		return nil, err
	}
	f := &Fixture{
		Base:   base,
		tmpl:   filepath.Join(base, "tmpl"),
		Root:   filepath.Join(base, "work", "root"),
		Home:   filepath.Join(base, "work", "home"),
		Remote: filepath.Join(base, "work", "remote.git"),
	}
	for name, content := range fixtureFiles {
		p := filepath.Join(f.tmpl, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	root := filepath.Join(f.tmpl, "root")
	if err := os.Symlink(".env", filepath.Join(root, "envlink")); err != nil {
		return nil, err
	}
	if err := os.Link(filepath.Join(root, ".env"), filepath.Join(root, "envhard")); err != nil {
		return nil, err
	}
	// The repository is made at the working copy's paths, then moved
	// into the template, so that its configured remote is the working
	// copy's remote.
	if err := os.MkdirAll(filepath.Dir(f.Root), 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(root, f.Root); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "HOME="+filepath.Join(f.tmpl, "home"), "GIT_CONFIG_NOSYSTEM=1")
	git := func(dir string, args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for _, args := range [][]string{
		{"init", "-q", "--bare", "-b", "main", f.Remote},
		{"-C", f.Root, "init", "-q", "-b", "main"},
		{"-C", f.Root, "add", "src", "docs", "a.txt", "b.txt", "Makefile"},
		{"-C", f.Root, "-c", "user.name=o", "-c", "user.email=o@example.com", "commit", "-q", "-m", "init"},
		{"-C", f.Root, "remote", "add", "origin", f.Remote},
		{"-C", f.Root, "push", "-q", "origin", "main"},
	} {
		if err := git(base, args...); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(f.Root, root); err != nil {
		return nil, err
	}
	if err := os.Rename(f.Remote, filepath.Join(f.tmpl, "remote.git")); err != nil {
		return nil, err
	}
	return f, f.Reset()
}

// Reset replaces the working copy with a fresh copy of the template.
func (f *Fixture) Reset() error {
	work := filepath.Dir(f.Root)
	if err := os.RemoveAll(work); err != nil {
		// A command may have left a directory without permissions.
		_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
			if d != nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		if err := os.RemoveAll(work); err != nil {
			return err
		}
	}
	cmd := exec.Command("cp", "-a", f.tmpl, work)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("copy fixture: %v: %s", err, out)
	}
	return nil
}

// fileState is what the snapshot records of one file.
type fileState struct {
	mode fs.FileMode
	ino  uint64
	hash [32]byte
	link string
}

// Snapshot records every file under the working copy: mode, inode,
// content hash and link target.
func (f *Fixture) Snapshot() (map[string]fileState, error) {
	out := map[string]fileState{}
	err := filepath.WalkDir(filepath.Dir(f.Root), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: reported by the diff as missing
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		st := fileState{mode: fi.Mode()}
		if s, ok := fi.Sys().(*syscall.Stat_t); ok {
			st.ino = s.Ino
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			st.link, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			if b, err := os.ReadFile(p); err == nil {
				st.hash = sha256.Sum256(b)
			}
		}
		out[p] = st
		return nil
	})
	return out, err
}

// diff returns the paths whose state differs between two snapshots.
func diff(before, after map[string]fileState) []string {
	var out []string
	for p, a := range after {
		if b, ok := before[p]; !ok || a != b {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// Inode returns the inode number of the working copy's file at p (not
// following a final symlink), or 0.
func inode(p string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return 0
	}
	return st.Ino
}
