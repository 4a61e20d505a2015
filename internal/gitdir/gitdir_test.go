package gitdir_test

import (
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/gitdir"
)

func TestIsGitDir(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  bool
	}{
		{[]string{"HEAD", "objects", "refs"}, true},
		{[]string{"HEAD", "commondir"}, true},
		{[]string{"HEAD", "objects"}, false},
		{[]string{"objects", "refs", "config"}, false},
		{nil, false},
	} {
		m := map[string]bool{}
		for _, n := range tc.names {
			m[n] = true
		}
		if got := gitdir.IsGitDir(m); got != tc.want {
			t.Errorf("IsGitDir(%v) = %v, want %v", tc.names, got, tc.want)
		}
	}
}

func TestNewRepoAction(t *testing.T) {
	for name, want := range map[string]string{
		"config": "sanitize", "hooks": "remove", "config.worktree": "remove",
		".git": "remove", "extra": "remove", "config.lock": "remove",
		"commondir": "keep", "info": "keep", "remotes": "keep", "branches": "keep",
		"objects": "keep", "refs": "keep", "HEAD": "keep", "index.lock": "keep", "packed-refs": "keep",
	} {
		if got := gitdir.NewRepoAction(name); got != want {
			t.Errorf("NewRepoAction(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestBelowDotGit(t *testing.T) {
	for p, want := range map[string]bool{
		"/w/.git/modules/x": true, "/w/sub/.GIT/refs": true, "/w/.git": true,
		"/w/lib.git/refs": false, "/w/.gitx/a": false, "/w/a": false,
	} {
		if got := gitdir.BelowDotGit(p); got != want {
			t.Errorf("BelowDotGit(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestSanitize(t *testing.T) {
	in := "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch /tmp/x\n" +
		"[remote \"origin\"]\n\turl = https://example.invalid/x.git\n\tuploadpack = touch /tmp/y\n" +
		"[include]\n\tpath = /tmp/evil\n"
	out, removed := gitdir.Sanitize([]byte(in))
	for _, bad := range []string{"fsmonitor", "uploadpack", "include", "/tmp/"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("Sanitize kept %q:\n%s", bad, out)
		}
	}
	for _, good := range []string{"repositoryformatversion", "https://example.invalid/x.git"} {
		if !strings.Contains(string(out), good) {
			t.Errorf("Sanitize dropped inert %q:\n%s", good, out)
		}
	}
	if got := strings.Join(removed, ","); !strings.Contains(got, "core.fsmonitor") || !strings.Contains(got, "include.path") {
		t.Errorf("removed = %q, want core.fsmonitor and include.path named", got)
	}
	if out, removed := gitdir.Sanitize([]byte("[core\n")); len(out) != 0 || len(removed) != 1 {
		t.Errorf("an unparseable config: out %q removed %q, want nothing kept and one reason", out, removed)
	}
}
