package workspace_test

import (
	"bytes"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLocalOptionErrors(t *testing.T) {
	f := newFixture(t)
	file := write(t, f.root, "file", "x")
	ctorErr := &executor.UnavailableError{Backend: "bwrap", Reason: "bwrap not installed"}
	var nilLocal *executor.Local
	tests := []struct {
		name string
		root string
		opts []workspace.Option
		also error // a further error the result must wrap
	}{
		{"policy with mode", f.root, []workspace.Option{workspace.WithPolicy(&policy.Policy{}), workspace.WithMode(policy.Coding)}, policy.ErrPolicyWithShorthands},
		{"policy with readable", f.root, []workspace.Option{workspace.WithPolicy(&policy.Policy{}), workspace.WithReadable("/x")}, policy.ErrPolicyWithShorthands},
		{"policy with command rules", f.root, []workspace.Option{workspace.WithCommandRules(policy.CommandRule{Pattern: "ls", Action: policy.Allow}), workspace.WithPolicy(&policy.Policy{})}, policy.ErrPolicyWithShorthands},
		{"readonly with command rules", f.root, []workspace.Option{workspace.WithMode(policy.Readonly), workspace.WithCommandRules(policy.CommandRule{Pattern: "ls", Action: policy.Allow})}, policy.ErrReadonlyCommands},
		{"malformed pattern", f.root, []workspace.Option{workspace.WithDeniedPaths("a[")}, nil},
		{"nil policy", f.root, []workspace.Option{workspace.WithPolicy(nil)}, nil},
		{"zero timeout", f.root, []workspace.Option{workspace.WithShellTimeout(0)}, nil},
		{"negative limit", f.root, []workspace.Option{workspace.WithLimits(workspace.Limits{MaxGrepMatches: -1})}, nil},
		{"bad env name", f.root, []workspace.Option{workspace.WithEnv(map[string]string{"A=B": "x"})}, nil},
		{"executor constructor failed", f.root, []workspace.Option{workspace.WithExecutor(nilLocal, ctorErr)}, errors.ErrUnsupported},
		{"nil executor", f.root, []workspace.Option{workspace.WithExecutor(nil)}, nil},
		{"typed nil executor", f.root, []workspace.Option{workspace.WithExecutor(nilLocal)}, nil},
		{"missing root", filepath.Join(f.root, "nope"), nil, nil},
		{"root is a file", file, nil, workspace.ErrNotRegular},
		{"root is the file system root", "/", nil, nil},
		{"root is the file system root, by another name", "/tmp/..", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := workspace.Local(tt.root, append([]workspace.Option{workspace.WithHome(f.home)}, tt.opts...)...)
			var oe *workspace.OptionError
			require.ErrorAs(t, err, &oe)
			assert.ErrorIs(t, err, workspace.ErrInvalidOption)
			if tt.also != nil {
				assert.ErrorIs(t, err, tt.also)
			}
		})
	}
	t.Run("constructor error keeps its type", func(t *testing.T) {
		_, err := workspace.Local(f.root, workspace.WithExecutor(nilLocal, ctorErr))
		var ue *executor.UnavailableError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, "bwrap", ue.Backend)
	})
	t.Run("controls: valid combinations", func(t *testing.T) {
		for _, opts := range [][]workspace.Option{
			{workspace.WithPolicy(&policy.Policy{AllowShell: true}), workspace.WithNetwork(policy.NetworkFull)},
			{workspace.WithMode(policy.Readonly), workspace.WithReadable("~/docs")},
			{workspace.WithMode(policy.Trusted), workspace.WithCommandRules(policy.CommandRule{Pattern: "ls", Action: policy.Allow})},
			{workspace.WithExecutor(executor.NewLocal(), nil)},
		} {
			_, err := workspace.Local(f.root, append([]workspace.Option{workspace.WithHome(f.home)}, opts...)...)
			assert.NoError(t, err)
		}
	})
}

func TestLocalPolicy(t *testing.T) {
	f := newFixture(t)
	t.Run("shorthands in order", func(t *testing.T) {
		ws, err := workspace.Local(f.root, workspace.WithHome(f.home),
			workspace.WithReadable("~/r"), workspace.WithWritable("~/w"),
			workspace.WithPathRules(policy.PathRule{Pattern: "secrets/", Action: policy.Deny}),
			workspace.WithDeniedPaths(".env*"), workspace.WithNetwork(policy.NetworkFull))
		require.NoError(t, err)
		p := ws.Policy()
		require.Len(t, p.PathRules, 3)
		assert.Equal(t, []string{"secrets/", "~/w", "~/r"}, []string{p.PathRules[0].Pattern, p.PathRules[1].Pattern, p.PathRules[2].Pattern})
		assert.Equal(t, []string{".env*"}, p.DeniedPaths)
		assert.Equal(t, policy.NetworkFull, p.Network)
		assert.Equal(t, policy.Ask, p.ShellDefault, "the coding preset")
		assert.Equal(t, f.root, ws.Root())
		assert.Equal(t, f.home, ws.Home())
		assert.Equal(t, workspace.DefaultLimits(), ws.Limits())
	})
	t.Run("explicit policy keeps its settings", func(t *testing.T) {
		called := false
		ws, err := workspace.Local(f.root, workspace.WithHome(f.home), workspace.WithPolicy(&policy.Policy{
			Write: policy.Allow, AllowShell: true, ShellDefault: policy.Deny, Network: policy.NetworkFull,
			CommandDecider: func(string) (policy.Decision, bool) { called = true; return policy.Allow, true },
		}))
		require.NoError(t, err)
		assert.Equal(t, policy.NetworkFull, ws.Policy().Network)
		s, err := ws.Open(ctx)
		require.NoError(t, err)
		defer s.Close()
		v, err := s.DecideCommand("anything", "")
		require.NoError(t, err)
		assert.True(t, called, "the CommandDecider is kept")
		assert.Equal(t, policy.Allow, v.Decision)
	})
	t.Run("default home", func(t *testing.T) {
		t.Setenv("HOME", f.home)
		ws, err := workspace.Local(f.root)
		require.NoError(t, err)
		assert.Equal(t, f.home, ws.Home())
	})
	t.Run("limits fill defaults", func(t *testing.T) {
		ws, err := workspace.Local(f.root, workspace.WithLimits(workspace.Limits{MaxGrepMatches: 7}))
		require.NoError(t, err)
		want := workspace.DefaultLimits()
		want.MaxGrepMatches = 7
		assert.Equal(t, want, ws.Limits())
	})
}

func TestDefaultLimits(t *testing.T) {
	assert.Equal(t, workspace.Limits{
		MaxFileReadChars:    50000,
		MaxFileReadBytes:    10000000,
		MaxShellOutputChars: 30000,
		MaxGrepFileBytes:    5000000,
		MaxGrepLineChars:    400,
		MaxListResults:      500,
		MaxGrepMatches:      100,
	}, workspace.DefaultLimits())
	assert.Equal(t, 300*time.Second, workspace.DefaultShellTimeout)
}

func TestSessionDecisions(t *testing.T) {
	f := newFixture(t)
	s := f.open(t, workspace.WithDeniedPaths(".env*"))
	v, err := s.DecidePath(".env", policy.Read)
	require.NoError(t, err)
	assert.Equal(t, policy.Deny, v.Decision)
	v, err = s.DecidePath("main.go", policy.Write)
	require.NoError(t, err)
	assert.Equal(t, policy.Allow, v.Decision)
	cv, err := s.DecideCommand("cat .env", "")
	require.NoError(t, err)
	assert.Equal(t, policy.Deny, cv.Decision)
	cv, err = s.DecideCommand("ls", "")
	require.NoError(t, err)
	assert.Equal(t, policy.Ask, cv.Decision)
}

func TestLogger(t *testing.T) {
	f := newFixture(t)
	var buf bytes.Buffer
	s := f.open(t, workspace.WithDeniedPaths(".env*"), workspace.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	_, err := s.ReadText(ctx, ".env", 0, 0)
	require.Error(t, err)
	assert.True(t, strings.Contains(buf.String(), `"path":"`+filepath.Join(f.root, ".env")+`"`), "the denial is logged with its path: %s", buf.String())
}
