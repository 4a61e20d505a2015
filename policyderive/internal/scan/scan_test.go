package scan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mkTree creates entries below base: "dir/" a directory, "a -> target" a
// symlink, anything else an empty file (parents created as needed).
func mkTree(t testing.TB, base string, spec ...string) {
	t.Helper()
	for _, s := range spec {
		if name, target, ok := strings.Cut(s, " -> "); ok {
			p := filepath.Join(base, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.Symlink(target, p))
			continue
		}
		p := filepath.Join(base, s)
		if strings.HasSuffix(s, "/") {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
}

// tempDir returns a resolved temporary directory.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// summary renders matches as "path type pattern,pattern" with base
// replaced by "$", sorted, and unreadable directories as "path unreadable".
func summary(res *Result, base string, pats []string) []string {
	var out []string
	for _, m := range res.Matches {
		var ps []string
		for _, i := range m.Patterns {
			ps = append(ps, pats[i])
		}
		where := "out"
		if m.Inside {
			where = "in:" + m.Rel
		}
		out = append(out, fmt.Sprintf("%s %s %s %s", strings.Replace(m.Path, base, "$", 1), m.Type, where, strings.Join(ps, ",")))
	}
	for _, u := range res.Unreadable {
		out = append(out, strings.Replace(u.Path, base, "$", 1)+" unreadable")
	}
	return out
}

func TestSearch(t *testing.T) {
	pats := []string{".env*", "**/.git/hooks", "**/.git/config", "deploy/keys", ".vscode", "*.pem", "secrets"}
	tests := []struct {
		name  string
		tree  []string
		roots func(base string) (root string, roots []string)
		want  []string
	}{
		{
			name: "bare names, relative and nested repos",
			tree: []string{
				"ws/.env", "ws/.envrc/", "ws/env", "ws/src/app/.env.local", "ws/src/app/env.go",
				"ws/.git/hooks/pre-commit", "ws/.git/config", "ws/.git/objects/ab/cd",
				"ws/vendor/lib/.git/hooks/", "ws/vendor/lib/.git/HEAD", "ws/hooks/",
				"ws/deploy/keys/id", "ws/deploy/keysx", "ws/x/deploy/keys",
				"ws/tls/server.pem", "ws/tls/server.pem.txt",
			},
			roots: func(b string) (string, []string) { return b + "/ws", nil },
			want: []string{
				"$/ws/.env file in:.env .env*",
				"$/ws/.envrc dir in:.envrc .env*",
				"$/ws/.git/config file in:.git/config **/.git/config",
				"$/ws/.git/hooks dir in:.git/hooks **/.git/hooks",
				"$/ws/deploy/keys dir in:deploy/keys deploy/keys",
				"$/ws/src/app/.env.local file in:src/app/.env.local .env*",
				"$/ws/tls/server.pem file in:tls/server.pem *.pem",
				"$/ws/vendor/lib/.git/hooks dir in:vendor/lib/.git/hooks **/.git/hooks",
			},
		},
		{
			name:  "a matched directory is not searched again for the same pattern",
			tree:  []string{"ws/.vscode/.vscode/x", "ws/.vscode/.env", "ws/secrets/a/secrets/b.pem"},
			roots: func(b string) (string, []string) { return b + "/ws", nil },
			want: []string{
				"$/ws/.vscode dir in:.vscode .vscode",
				"$/ws/.vscode/.env file in:.vscode/.env .env*",
				"$/ws/secrets dir in:secrets secrets",
				"$/ws/secrets/a/secrets/b.pem file in:secrets/a/secrets/b.pem *.pem",
			},
		},
		{
			name: "symlinks are matched as links and never followed",
			tree: []string{
				"home/.env", "home/.ssh/id.pem", "home/ws/",
				"ws/tohome -> ../home", "ws/.env -> ../home/.env", "ws/loop -> loop", "ws/up -> ..", "ws/self -> .",
				"ws/a/b/c -> ../../a", "ws/dangling.pem -> nowhere", "ws/.git -> ../home/ws",
			},
			roots: func(b string) (string, []string) { return b + "/ws", nil },
			want: []string{
				"$/ws/.env symlink in:.env .env*",
				"$/ws/dangling.pem symlink in:dangling.pem *.pem",
			},
		},
		{
			name: "home containing the root: root searched as inside, home as outside without it",
			tree: []string{
				"home/.env", "home/.vscode/", "home/proj/.env", "home/proj/.vscode/", "home/proj/src/.git/hooks/",
				"home/other/.git/hooks/", "home/other/deploy/keys",
			},
			roots: func(b string) (string, []string) { return b + "/home/proj", []string{b + "/home"} },
			want: []string{
				"$/home/.env file out .env*",
				"$/home/.vscode dir out .vscode",
				"$/home/proj/.env file in:.env .env*",
				"$/home/proj/.vscode dir in:.vscode .vscode",
				"$/home/proj/src/.git/hooks dir in:src/.git/hooks **/.git/hooks",
			},
		},
		{
			name: "grants: nested ones deduplicated, a file grant, a missing one, a matching one",
			tree: []string{"ws/a/.env", "g/.env", "g/sub/.env.x", "f.pem", ".envdir/k"},
			roots: func(b string) (string, []string) {
				return b + "/ws", []string{b + "/ws/a", b + "/g/sub", b + "/g", b + "/f.pem", b + "/missing", b + "/.envdir", b + "/g/"}
			},
			want: []string{
				"$/.envdir dir out .env*",
				"$/f.pem file out *.pem",
				"$/g/.env file out .env*",
				"$/g/sub/.env.x file out .env*",
				"$/ws/a/.env file in:a/.env .env*",
			},
		},
		{
			name:  "a root below a symlink is resolved",
			tree:  []string{"real/.env", "link -> real"},
			roots: func(b string) (string, []string) { return "", []string{b + "/link"} },
			want:  []string{"$/real/.env file out .env*"},
		},
		{
			name:  "non-UTF-8 names",
			tree:  []string{"ws/\xff\xfe.pem", "ws/.env\x80/x", "ws/d\xc3(/secrets/y", "ws/\xff.txt"},
			roots: func(b string) (string, []string) { return b + "/ws", nil },
			want: []string{
				"$/ws/.env\x80 dir in:.env\x80 .env*",
				"$/ws/d\xc3(/secrets dir in:d\xc3(/secrets secrets",
				"$/ws/\xff\xfe.pem file in:\xff\xfe.pem *.pem",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tempDir(t)
			mkTree(t, base, tt.tree...)
			root, roots := tt.roots(base)
			req := &Request{Root: root, Roots: roots, Patterns: testPatterns(pats...)}
			res, err := Search(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, tt.want, summary(res, base, pats))

			// The cache gives the same answer, first and second time.
			c := NewCache(Options{})
			defer c.Close()
			for range 2 {
				res, err := c.Search(context.Background(), req)
				require.NoError(t, err)
				assert.Equal(t, tt.want, summary(res, base, pats))
			}
		})
	}
}

// TestSearchPruning checks that MayMatchBelow prunes whole subtrees and
// that pruning never loses a match.
func TestSearchPruning(t *testing.T) {
	base := tempDir(t)
	mkTree(t, base, "ws/deploy/keys/a", "ws/deploy/other/b", "ws/big/1/2/3/4/f", "ws/big/5/6/f")
	pats := []string{"deploy/keys"}
	res, err := Search(context.Background(), &Request{Root: base + "/ws", Patterns: testPatterns(pats...)})
	require.NoError(t, err)
	assert.Equal(t, []string{"$/ws/deploy/keys dir in:deploy/keys deploy/keys"}, summary(res, base, pats))
	assert.Equal(t, 2, res.Dirs, "only ws and ws/deploy need reading")

	// Control: a bare name cannot prune, so every directory is read.
	res, err = Search(context.Background(), &Request{Root: base + "/ws", Patterns: testPatterns("keys")})
	require.NoError(t, err)
	assert.Equal(t, 10, res.Dirs)
}

func TestSearchLimits(t *testing.T) {
	base := tempDir(t)
	for i := range 50 {
		mkTree(t, base, fmt.Sprintf("ws/d%d/f", i))
	}
	pats := testPatterns(".env")

	_, err := Search(context.Background(), &Request{Root: base + "/ws", Patterns: pats, Limits: Limits{MaxEntries: 60}})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, ErrLimit)
	assert.Equal(t, LimitEntries, le.Limit)
	assert.EqualValues(t, 60, le.Max)

	// Control: the same search with room enough succeeds.
	res, err := Search(context.Background(), &Request{Root: base + "/ws", Patterns: pats, Limits: Limits{MaxEntries: 100}})
	require.NoError(t, err)
	assert.Equal(t, 100, res.Entries)

	_, err = Search(context.Background(), &Request{Root: base + "/ws", Patterns: pats, Limits: Limits{Timeout: time.Nanosecond}})
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LimitTime, le.Limit)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Search(ctx, &Request{Root: base + "/ws", Patterns: pats})
	assert.ErrorIs(t, err, context.Canceled)

	// A cache that failed on a limit answers correctly afterwards.
	c := NewCache(Options{})
	defer c.Close()
	_, err = c.Search(context.Background(), &Request{Root: base + "/ws", Patterns: pats, Limits: Limits{MaxEntries: 60}})
	require.ErrorIs(t, err, ErrLimit)
	res, err = c.Search(context.Background(), &Request{Root: base + "/ws", Patterns: pats})
	require.NoError(t, err)
	assert.Equal(t, 100, res.Entries)
	_, err = c.Search(context.Background(), &Request{Root: base + "/ws", Patterns: pats, Limits: Limits{MaxEntries: 60}})
	require.ErrorIs(t, err, ErrLimit, "a cached result must not bypass a smaller limit")
}

func TestSearchInvalid(t *testing.T) {
	for _, req := range []*Request{
		{Root: "relative", Patterns: testPatterns("x")},
		{Roots: []string{"/tmp", "a/b"}, Patterns: testPatterns("x")},
		{Root: "/tmp/\x00", Patterns: testPatterns("x")},
		{Root: "/tmp", Patterns: []Pattern{{Key: "no match func"}}},
		{Root: "/tmp", Patterns: testPatterns("x"), Limits: Limits{MaxEntries: -1}},
	} {
		_, err := Search(context.Background(), req)
		var re *RequestError
		require.ErrorAs(t, err, &re, "%+v", req)
		assert.ErrorIs(t, err, ErrInvalid)
	}
	res, err := Search(context.Background(), &Request{Root: "/nonexistent/root", Patterns: testPatterns("x")})
	require.NoError(t, err)
	assert.Empty(t, res.Matches)
}

func TestSearchDeterministic(t *testing.T) {
	base := tempDir(t)
	for i := range 30 {
		mkTree(t, base, fmt.Sprintf("ws/d%d/.env", i), fmt.Sprintf("ws/d%d/e/.env", i))
	}
	var first []string
	for _, w := range []int{1, 2, 7} {
		res, err := Search(context.Background(), &Request{Root: base + "/ws", Patterns: testPatterns(".env"), Workers: w})
		require.NoError(t, err)
		got := summary(res, base, []string{".env"})
		require.Len(t, got, 60)
		require.True(t, slices.IsSorted(got))
		if first == nil {
			first = got
		}
		assert.Equal(t, first, got, "workers=%d", w)
	}
}

func TestLimitErrorMessage(t *testing.T) {
	err := error(&LimitError{Limit: LimitTime, Max: int64(time.Second), Roots: []string{"/w"}})
	assert.True(t, errors.Is(err, ErrLimit))
	assert.NotEmpty(t, err.Error())
}
