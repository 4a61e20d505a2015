package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
)

func specOf(t *testing.T, yaml string) *policy.Spec {
	t.Helper()
	s, err := policy.LoadSpec(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func stackChecker(t *testing.T, root, home string, layers ...policy.Layer) *policy.Checker {
	t.Helper()
	p, err := policy.Stack(layers).Build()
	if err != nil {
		t.Fatal(err)
	}
	c, err := policy.NewChecker(p, root, home)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestStackManagedWins: a managed deny beats a project allow and an
// options layer's trusted mode; a managed ask beats an options allow; the
// managed mode is a ceiling; rule names carry the layer and file.
func TestStackManagedWins(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	managed := policy.Layer{Kind: policy.LayerManaged, File: "/etc/cordon/policy.yaml", Spec: specOf(t, `
mode: coding
denied_paths: [".env*"]
command_rules: [{pattern: "git push", action: ask}]
`)}
	project := policy.Layer{Kind: policy.LayerProject, File: "proj/.cordon/policy.yaml", Spec: specOf(t, `
path_rules: [{pattern: "docs/draft", action: ask}]
`)}
	options := policy.Layer{Kind: policy.LayerOptions, File: "opts.yaml", Spec: specOf(t, `
mode: trusted
path_rules: [{pattern: "config/.env", action: allow}]
command_rules: [{pattern: "git push", action: allow}]
`)}
	c := stackChecker(t, root, home, project, options, managed)

	v, err := c.DecidePath("config/.env", policy.Read)
	if err != nil {
		t.Fatal(err)
	}
	if v.Decision != policy.Deny || !strings.HasPrefix(v.Rule, "managed /etc/cordon/policy.yaml: denied_paths[0]") {
		t.Errorf("config/.env: %s by %q, want deny by the managed layer's denied_paths[0]", v.Decision, v.Rule)
	}
	v, _ = c.DecidePath(filepath.Join(home, "notes.txt"), policy.Read)
	if v.Decision != policy.Ask {
		t.Errorf("read outside: %s, want ask (the managed coding mode is a ceiling over trusted)", v.Decision)
	}
	cv, err := c.DecideCommand("git push", root)
	if err != nil {
		t.Fatal(err)
	}
	if cv.Decision != policy.Ask || !strings.HasPrefix(cv.Rule, "managed /etc/cordon/policy.yaml: command_rules[0]") {
		t.Errorf("git push: %s by %q, want ask by the managed rule", cv.Decision, cv.Rule)
	}
	if p := c.Policy(); p.Network != policy.NetworkNone {
		t.Errorf("network %s, want none (the managed coding mode)", p.Network)
	}
	// The allowed twin: without the managed layer, the options decide.
	c = stackChecker(t, root, home, project, options)
	if cv, _ := c.DecideCommand("git push", root); cv.Decision != policy.Allow {
		t.Errorf("without a managed layer git push is %s, want allow", cv.Decision)
	}
	if v, _ := c.DecidePath("config/.env", policy.Read); v.Decision != policy.Allow || !strings.HasPrefix(v.Rule, "options ") {
		t.Errorf("without a managed layer config/.env is %s by %q, want allow by the options rule", v.Decision, v.Rule)
	}
	if v, _ := c.DecidePath("docs/draft/a.md", policy.Read); v.Decision != policy.Ask || !strings.HasPrefix(v.Rule, "project ") {
		t.Errorf("docs/draft/a.md is %s by %q, want ask by the project rule", v.Decision, v.Rule)
	}
}

// TestStackPrecedence: options over user over project for rules (the
// project's apply only where no user rule decides), a later options file
// over an earlier one; settings from the highest layer that sets them.
func TestStackPrecedence(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	user := policy.Layer{Kind: policy.LayerUser, File: "user.yaml", Spec: specOf(t, `
mode: trusted
command_rules: [{pattern: "make", action: allow}, {pattern: "npm test", action: allow}]
`)}
	project := policy.Layer{Kind: policy.LayerProject, File: "project.yaml", Spec: specOf(t, `
command_rules: [{pattern: "make", action: deny}, {pattern: "npm publish", action: deny}]
`)}
	opt1 := policy.Layer{Kind: policy.LayerOptions, File: "a.yaml", Spec: specOf(t, `command_rules: [{pattern: "go test", action: deny}]`)}
	opt2 := policy.Layer{Kind: policy.LayerOptions, File: "b.yaml", Spec: specOf(t, `command_rules: [{pattern: "go test", action: allow}]`)}
	c := stackChecker(t, root, home, user, project, opt1, opt2)
	for cmd, want := range map[string]policy.Decision{"make": policy.Allow, "npm test": policy.Allow, "go test ./...": policy.Allow, "npm publish": policy.Deny} {
		if v, _ := c.DecideCommand(cmd, root); v.Decision != want {
			t.Errorf("%s: %s by %q, want %s", cmd, v.Decision, v.Rule, want)
		}
	}
	if p := c.Policy(); p.ShellDefault != policy.Allow || p.Network != policy.NetworkFull {
		t.Errorf("settings: shell_default %s network %s, want the user's trusted mode", p.ShellDefault, p.Network)
	}
}

// TestStackProjectMayNotLoosen: a project layer arrives with the
// repository: what would widen access beyond the root is an error naming
// the file and the setting; restrictions and allows inside the root are
// fine.
func TestStackProjectMayNotLoosen(t *testing.T) {
	for _, tc := range []struct{ yaml, field string }{
		{"mode: trusted", "mode"},
		{"network: full", "network"},
		{"network: {allow: [example.com]}", "network"},
		{"protect: none", "protect"},
		{"system: [/]", "system"},
		{"readable: [\"~/.ssh\"]", "readable[0]"},
		{"readable: [\"/etc\"]", "readable[0]"},
		{"writable: [\"id_rsa\"]", "writable[0]"},
		{"readable: [\"../sibling/x\"]", "readable[0]"},
		{"writable: [build/]", "writable[0]"},
		{"writable: [./build]", "writable[0]"},
		{"readable: [docs/api]", "readable[0]"},
		{"path_rules: [{pattern: \"./src\", action: allow}]", "path_rules[0]"},
		{"command_rules: [{pattern: make, action: allow}]", "command_rules[0]"},
		{"path_rules: [{pattern: \"~/.aws\", action: allow}]", "path_rules[0]"},
		{"policy: {write: allow, allow_shell: true}", "policy"},
	} {
		l := policy.Layer{Kind: policy.LayerProject, File: "repo/.cordon/policy.yaml", Spec: specOf(t, tc.yaml)}
		_, err := policy.Stack{l}.Build()
		var se *policy.StackError
		if !errors.As(err, &se) || !errors.Is(err, policy.ErrProjectLoosens) {
			t.Errorf("%s: err %v, want ErrProjectLoosens in a *StackError", tc.yaml, err)
			continue
		}
		if !strings.Contains(err.Error(), "repo/.cordon/policy.yaml") || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "project") {
			t.Errorf("%s: %q does not name the layer, file and %s", tc.yaml, err, tc.field)
		}
	}
	for _, ok := range []string{"mode: readonly", "mode: coding", "denied_paths: [secrets]", "path_rules: [{pattern: \"docs/\", action: ask}]",
		"path_rules: [{pattern: \"~/.aws\", action: deny}]", "command_rules: [{pattern: \"npm publish\", action: ask}]", "network: none"} {
		l := policy.Layer{Kind: policy.LayerProject, File: "p.yaml", Spec: specOf(t, ok)}
		if _, err := (policy.Stack{l}).Build(); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestStackOneLayer: a stack of one layer builds what its spec builds,
// with plain rule names.
func TestStackOneLayer(t *testing.T) {
	spec := specOf(t, "mode: coding\ndenied_paths: [\".env*\"]\ncommand_rules: [{pattern: ls, action: allow}]\n")
	want, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	got, err := policy.Stack{{Kind: policy.LayerOptions, File: "x.yaml", Spec: spec}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(got.Origins) != 0 {
		t.Errorf("one layer:\n%+v\nwant\n%+v", got, want)
	}
}

// TestLoadStack: the standard files that exist are read, a missing one is
// skipped, a broken one is an error naming the layer, file and line, and
// --no-default-policies reads none.
func TestLoadStack(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", "")
	userFile := filepath.Join(home, ".config", "cordon", "policy.yaml")
	if err := os.MkdirAll(filepath.Dir(userFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(userFile, []byte("denied_paths: [\"*.kdbx\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := policy.LoadStack(nil, root, home, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].Kind != policy.LayerUser || s[0].File != userFile {
		t.Fatalf("stack %s, want the user file only", s.Describe())
	}
	if s, err := policy.LoadStack(nil, root, home, false); err != nil || len(s) != 0 {
		t.Errorf("without defaults: %v %v", s.Describe(), err)
	}
	proj := filepath.Join(root, policy.ProjectPolicyPath)
	if err := os.MkdirAll(filepath.Dir(proj), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proj, []byte("mode: coding\nbogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = policy.LoadStack(nil, root, home, true)
	if err == nil || !strings.Contains(err.Error(), "project policy "+proj) || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("broken project file: %v, want the layer, file and line 2", err)
	}
}

// TestStackProjectOnlyRestricts: a project's mode is a ceiling (it cannot
// turn a user's readonly or explicit policy back into coding), and its
// rules never beat a user's (found by an attack review).
func TestStackProjectOnlyRestricts(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	proj := policy.Layer{Kind: policy.LayerProject, File: "r/.cordon/policy.yaml", Spec: specOf(t, "mode: coding\npath_rules: [{pattern: \"~/.aws\", action: ask}]\ncommand_rules: [{pattern: curl, action: ask}]\n")}
	user := policy.Layer{Kind: policy.LayerUser, File: "u.yaml", Spec: specOf(t, "mode: readonly\ndenied_paths: [\"~/.aws\"]\n")}
	c := stackChecker(t, root, home, user, proj)
	p := c.Policy()
	if p.Write != policy.Deny || p.AllowShell || p.ReadOutside != policy.Deny {
		t.Errorf("write %s shell %v read_outside %s: the project's coding loosened the user's readonly", p.Write, p.AllowShell, p.ReadOutside)
	}
	if v, _ := c.DecidePath(filepath.Join(home, ".aws", "credentials"), policy.Read); v.Decision != policy.Deny {
		t.Errorf("~/.aws: %s by %q; the user's deny must beat the project's ask", v.Decision, v.Rule)
	}
	// The twin: a user in trusted mode gets the project's coding ceiling.
	user2 := policy.Layer{Kind: policy.LayerUser, File: "u.yaml", Spec: specOf(t, "mode: trusted\n")}
	c = stackChecker(t, root, home, user2, proj)
	if p := c.Policy(); p.ShellDefault != policy.Ask || p.ReadOutside != policy.Ask {
		t.Errorf("shell_default %s read_outside %s; the project's coding is a ceiling over trusted", p.ShellDefault, p.ReadOutside)
	}
	if v, _ := c.DecideCommand("curl x", root); v.Decision != policy.Ask {
		t.Errorf("curl: %s; the project asks", v.Decision)
	}
}

// TestStackNetworkDenyKept: every layer's network.deny holds under the
// allow-list (a user's deny was dropped when options chose the list).
func TestStackNetworkDenyKept(t *testing.T) {
	user := policy.Layer{Kind: policy.LayerUser, File: "u.yaml", Spec: specOf(t, "network: {allow: [\"*.example.com\"], deny: [evil.example.com]}\n")}
	opts := policy.Layer{Kind: policy.LayerOptions, File: "o.yaml", Spec: specOf(t, "network: {allow: [\"*.example.com\"]}\n")}
	p, err := policy.Stack{user, opts}.Build()
	if err != nil {
		t.Fatal(err)
	}
	c, err := policy.NewChecker(p, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.DecideHost("evil.example.com", 443); v.Decision != policy.Deny {
		t.Errorf("evil.example.com: %s; the user's deny must hold", v.Decision)
	}
	if v, _ := c.DecideHost("ok.example.com", 443); v.Decision != policy.Allow {
		t.Errorf("ok.example.com: %s; twin", v.Decision)
	}
}
