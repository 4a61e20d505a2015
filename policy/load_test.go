package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const exampleYAML = `mode: coding
readable: ["~/reference-docs"]
writable: ["~/.cache/go-build"]
denied_paths: [".env*"]
path_rules:
  - {pattern: "secrets/", action: deny}
  - {pattern: "~/notes", action: allow, ops: [read]}
command_rules:
  - {pattern: "pytest", action: allow}
  - {pattern: "rm -rf", action: deny}
network: none
protect: default
system: default
`

func TestLoadDesignExample(t *testing.T) {
	p, err := Load(strings.NewReader(exampleYAML))
	require.NoError(t, err)
	assert.Equal(t, Allow, p.Write)
	assert.Equal(t, Ask, p.ReadOutside)
	assert.Equal(t, []string{".env*"}, p.DeniedPaths)
	require.Len(t, p.PathRules, 4)
	assert.Equal(t, "secrets/", p.PathRules[0].Pattern)
	assert.Equal(t, []Op{Read}, p.PathRules[1].Ops)
	assert.Equal(t, PathRule{Pattern: "~/.cache/go-build", Action: Allow, Ops: []Op{Read, Write}}, p.PathRules[2])
	assert.Equal(t, PathRule{Pattern: "~/reference-docs", Action: Allow, Ops: []Op{Read}}, p.PathRules[3])
	assert.Equal(t, []CommandRule{{"pytest", Allow}, {"rm -rf", Deny}}, p.CommandRules)
	assert.Nil(t, p.System)
	assert.False(t, p.Protect.Disabled)
}

func TestLoadVariants(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, p *Policy)
	}{
		{"comments only is coding", "# defaults on purpose\n", func(t *testing.T, p *Policy) { assert.Equal(t, Ask, p.ShellDefault) }},
		{"json", `{"mode": "trusted", "denied_paths": [".env"]}`, func(t *testing.T, p *Policy) {
			assert.Equal(t, NetworkFull, p.Network)
			assert.Equal(t, []string{".env"}, p.DeniedPaths)
		}},
		{"network override", "mode: trusted\nnetwork: none\n", func(t *testing.T, p *Policy) { assert.Equal(t, NetworkNone, p.Network) }},
		{"protect none", "protect: none\n", func(t *testing.T, p *Policy) { assert.Empty(t, p.Protect.Patterns()) }},
		{"protect extra", "protect: [Makefile]\n", func(t *testing.T, p *Policy) {
			assert.Equal(t, append(append([]string{}, DefaultProtected...), "Makefile"), p.Protect.Patterns())
		}},
		{"system list", "system: [/usr, /bin]\n", func(t *testing.T, p *Policy) { assert.Equal(t, []string{"/usr", "/bin"}, p.SystemPaths()) }},
		{"explicit policy", "policy: {write: allow, read_outside: deny, write_outside: deny, allow_shell: true, shell_default: ask}\nnetwork: full\n", func(t *testing.T, p *Policy) {
			assert.Equal(t, Allow, p.Write)
			assert.Equal(t, Ask, p.ShellDefault)
			assert.Equal(t, NetworkFull, p.Network)
		}},
		{"explicit policy network defaults to none", "policy: {write: allow}\n", func(t *testing.T, p *Policy) {
			assert.Equal(t, NetworkNone, p.Network)
			assert.Equal(t, Deny, p.ShellDefault)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Load(strings.NewReader(tt.src))
			require.NoError(t, err)
			tt.check(t, p)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int
	}{
		{"unknown field", "mode: coding\nreadabel: [x]\n", 2},
		{"unknown nested field", "path_rules:\n  - {pattern: x, action: deny, opz: [read]}\n", 2},
		{"bad decision", "path_rules:\n  - {pattern: x, action: maybe}\n", 2},
		{"bad mode", "mode: yolo\n", 1},
		{"bad protect", "\nprotect: sometimes\n", 2},
		{"bad system", "system: none\n", 1},
		{"policy with shorthand", "readable: [x]\npolicy: {write: allow}\n", 0},
		{"malformed glob", "denied_paths: ['a[']\n", 0},
		{"nul", "mode: coding\nreadable: [\"a\x00\"]\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tt.src))
			var le *LoadError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.line, le.Line, err.Error())
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "p.yaml")
	require.NoError(t, os.WriteFile(f, []byte(exampleYAML), 0o644))
	_, err := LoadFile(f)
	require.NoError(t, err)
	_, err = LoadFile(filepath.Join(dir, "missing.yaml"))
	var le *LoadError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, filepath.Join(dir, "missing.yaml"), le.File)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestLoadEmpty: a policy file with nothing in it is an error (a file
// truncated by mistake must not pass for the defaults); one of comments
// only is the default on purpose.
func TestLoadEmpty(t *testing.T) {
	for _, src := range []string{"", "\n", "  \n\t\n"} {
		_, err := Load(strings.NewReader(src))
		assert.ErrorIs(t, err, ErrEmptyPolicy, "%q", src)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err := LoadFile(f)
	require.ErrorIs(t, err, ErrEmptyPolicy)
	assert.Contains(t, err.Error(), f, "the error names the file")
	_, err = Load(strings.NewReader("# nothing to change\n"))
	assert.NoError(t, err)
}
