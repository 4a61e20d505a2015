package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// changeStep changes a test tree below base b.
type changeStep struct {
	name string
	do   func(b string) error
}

// cacheModes are the ways a Cache validates its trees.
var cacheModes = []struct {
	name string
	opts Options
}{
	{"inotify", Options{}},
	{"stat", Options{MaxWatches: -1}},
	{"out of watches", Options{MaxWatches: 3}},
}

// equalSearch checks that the cache answers req as a fresh search does.
func equalSearch(t require.TestingT, c *Cache, req *Request, base string, pats []string, msg string) *Result {
	want, err := Search(context.Background(), req)
	require.NoError(t, err, msg)
	got, err := c.Search(context.Background(), req)
	require.NoError(t, err, msg)
	require.Equal(t, summary(want, base, pats), summary(got, base, pats), msg)
	return got
}

func TestCacheSeesChanges(t *testing.T) {
	pats := []string{".env*", "**/.git/hooks", "**/.git/config", ".vscode", "*.pem"}
	steps := []changeStep{
		{"create a file", func(b string) error { return os.WriteFile(b+"/ws/.env", nil, 0o644) }},
		{"create deep", func(b string) error { return os.WriteFile(b+"/ws/a/b/c/d/key.pem", nil, 0o644) }},
		{"git init deeper", func(b string) error { return os.MkdirAll(b+"/ws/a/b/sub/.git/hooks", 0o755) }},
		{"git config", func(b string) error { return os.WriteFile(b+"/ws/a/b/sub/.git/config", nil, 0o644) }},
		{"delete a match", func(b string) error { return os.Remove(b + "/ws/a/b/c/d/key.pem") }},
		{"rename a match away", func(b string) error { return os.Rename(b+"/ws/.env", b+"/ws/env") }},
		{"rename a match in", func(b string) error { return os.Rename(b+"/ws/env", b+"/ws/a/.env.local") }},
		{"move a tree out", func(b string) error { return os.Rename(b+"/ws/a/b", b+"/outside/b") }},
		{"move a tree in", func(b string) error { return os.Rename(b+"/outside/b", b+"/ws/x") }},
		{"move within", func(b string) error { return os.Rename(b+"/ws/x/sub", b+"/ws/a/sub2") }},
		{"swap two dirs", func(b string) error {
			if err := os.Rename(b+"/ws/a", b+"/ws/tmp"); err != nil {
				return err
			}
			if err := os.Rename(b+"/ws/x", b+"/ws/a"); err != nil {
				return err
			}
			return os.Rename(b+"/ws/tmp", b+"/ws/x")
		}},
		{"replace a dir by a link to home", func(b string) error {
			if err := os.RemoveAll(b + "/ws/x"); err != nil {
				return err
			}
			return os.Symlink(b+"/home", b+"/ws/x")
		}},
		{"replace the link by a dir", func(b string) error {
			if err := os.Remove(b + "/ws/x"); err != nil {
				return err
			}
			return os.MkdirAll(b+"/ws/x/.vscode", 0o755)
		}},
		{"file becomes dir", func(b string) error {
			if err := os.WriteFile(b+"/ws/cert.pem", nil, 0o644); err != nil {
				return err
			}
			if err := os.Remove(b + "/ws/cert.pem"); err != nil {
				return err
			}
			return os.MkdirAll(b+"/ws/cert.pem/.env", 0o755)
		}},
		{"chmod", func(b string) error { return os.Chmod(b+"/ws/x", 0o700) }},
		{"write a file", func(b string) error { return os.WriteFile(b+"/ws/src/main.go", []byte("package main"), 0o644) }},
		{"replace the root", func(b string) error {
			if err := os.Rename(b+"/ws", b+"/ws.old"); err != nil {
				return err
			}
			return os.MkdirAll(b+"/ws/.vscode", 0o755)
		}},
		{"remove the root", func(b string) error { return os.RemoveAll(b + "/ws") }},
		{"bring the old root back", func(b string) error { return os.Rename(b+"/ws.old", b+"/ws") }},
		{"grow the home", func(b string) error { return os.MkdirAll(b+"/home/.config/.vscode", 0o755) }},
	}
	steps = append(steps, osSteps...)
	for _, mode := range cacheModes {
		t.Run(mode.name, func(t *testing.T) {
			base := tempDir(t)
			mkTree(t, base, "ws/a/b/c/d/", "ws/src/main.go", "home/.env", "home/docs/", "outside/")
			req := &Request{Root: base + "/ws", Roots: []string{base + "/home"}, Patterns: testPatterns(pats...)}
			c := NewCache(mode.opts)
			defer c.Close()
			equalSearch(t, c, req, base, pats, "initial")
			for _, st := range steps {
				require.NoError(t, st.do(base), st.name)
				equalSearch(t, c, req, base, pats, st.name)
				equalSearch(t, c, req, base, pats, st.name+", again")
			}
		})
	}
}

// TestCacheUnchanged checks that a search when nothing changed is answered
// from the cache without re-reading, and that an irrelevant file write
// does not invalidate it.
func TestCacheUnchanged(t *testing.T) {
	base := tempDir(t)
	mkTree(t, base, "ws/a/.env", "ws/b/c/", "ws/f")
	req := &Request{Root: base + "/ws", Patterns: testPatterns(".env")}
	c := NewCache(Options{})
	defer c.Close()
	r1, err := c.Search(context.Background(), req)
	require.NoError(t, err)
	gen := c.Stats().Generation
	r2, err := c.Search(context.Background(), req)
	require.NoError(t, err)
	assert.Same(t, r1, r2)
	require.NoError(t, os.WriteFile(base+"/ws/f", []byte("content"), 0o644))
	r3, err := c.Search(context.Background(), req)
	require.NoError(t, err)
	assert.Same(t, r1, r3, "writing a file's content changes no listing")
	assert.Equal(t, gen, c.Stats().Generation)

	// Control: a new entry does invalidate.
	require.NoError(t, os.WriteFile(base+"/ws/b/c/.env", nil, 0o644))
	r4, err := c.Search(context.Background(), req)
	require.NoError(t, err)
	assert.NotSame(t, r1, r4)
	assert.Len(t, r4.Matches, 2)

	st := c.Stats()
	assert.Equal(t, 1, st.Trees)
	assert.Equal(t, 4, st.Dirs)
	assert.Equal(t, 4, st.Watched)
	assert.Zero(t, st.Unwatched)

	// Another pattern set reuses the listings and finds its own matches.
	res, err := c.Search(context.Background(), &Request{Root: base + "/ws", Patterns: testPatterns("c")})
	require.NoError(t, err)
	assert.Equal(t, []string{"$/ws/b/c dir in:b/c c"}, summary(res, base, []string{"c"}))
	// A pattern without a key still gets a correct, uncached answer.
	p := testPattern(".env")
	p.Key = ""
	equalSearch(t, c, &Request{Root: base + "/ws", Patterns: []Pattern{p}}, base, []string{".env"}, "no key")
}

// TestCacheConcurrentChanges modifies a tree while it is being searched;
// once the changes stop, the cache must agree with a fresh search.
func TestCacheConcurrentChanges(t *testing.T) {
	pats := []string{".env*", "**/.git/hooks"}
	for _, mode := range cacheModes {
		t.Run(mode.name, func(t *testing.T) {
			base := tempDir(t)
			mkTree(t, base, "ws/")
			req := &Request{Root: base + "/ws", Patterns: testPatterns(pats...)}
			c := NewCache(mode.opts)
			defer c.Close()
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					d := fmt.Sprintf("%s/ws/d%d", base, i%7)
					switch i % 5 {
					case 0:
						os.MkdirAll(d+"/x/.git/hooks", 0o755)
					case 1:
						os.WriteFile(d+"/.env", nil, 0o644)
					case 2:
						os.Rename(d, fmt.Sprintf("%s/ws/d%d/moved", base, (i+1)%7))
					case 3:
						os.RemoveAll(fmt.Sprintf("%s/ws/d%d", base, (i+3)%7))
					case 4:
						os.Symlink(base, d+"/link")
					}
				}
			})
			deadline := time.Now().Add(300 * time.Millisecond)
			for time.Now().Before(deadline) {
				_, err := c.Search(context.Background(), req)
				require.NoError(t, err)
			}
			close(stop)
			wg.Wait()
			equalSearch(t, c, req, base, pats, "after the changes")
			equalSearch(t, c, req, base, pats, "again")
		})
	}
}

// TestCacheProperty applies random sequences of changes and checks, after
// each, that the cache agrees with a fresh search.
func TestCacheProperty(t *testing.T) {
	pats := []string{".env", "**/.git/hooks", "k*"}
	names := []string{".env", ".git", "hooks", "k1", "a", "b"}
	for _, mode := range cacheModes {
		t.Run(mode.name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				base := tempDir(t)
				mkTree(t, base, "ws/", "out/")
				req := &Request{Root: base + "/ws", Patterns: testPatterns(pats...)}
				c := NewCache(mode.opts)
				defer c.Close()
				path := func(label string) string {
					depth := rapid.IntRange(1, 4).Draw(rt, label+"depth")
					p := base + "/ws"
					for i := range depth {
						p += "/" + rapid.SampledFrom(names).Draw(rt, fmt.Sprint(label, i))
					}
					return p
				}
				for step := range rapid.IntRange(1, 12).Draw(rt, "steps") {
					var what string
					switch op := rapid.IntRange(0, 5).Draw(rt, "op"); op {
					case 0:
						p := path("mkdir")
						what = "mkdir " + p
						os.MkdirAll(p, 0o755)
					case 1:
						p := path("file")
						what = "file " + p
						os.MkdirAll(filepath.Dir(p), 0o755)
						os.WriteFile(p, nil, 0o644)
					case 2:
						p := path("rm")
						what = "rm " + p
						os.RemoveAll(p)
					case 3:
						from, to := path("from"), path("to")
						what = "mv " + from + " " + to
						os.Rename(from, to)
					case 4:
						p := path("link")
						what = "link " + p
						os.Symlink(base+"/out", p)
					case 5:
						p := path("out")
						what = "mv out " + p
						os.Rename(p, fmt.Sprintf("%s/out/%d", base, step))
					}
					if rapid.Bool().Draw(rt, "search") {
						equalSearch(rt, c, req, base, pats, what)
					}
				}
				equalSearch(rt, c, req, base, pats, "end")
			})
		})
	}
}

// TestCacheQuickChanges changes a directory right after it was listed,
// again and again: without inotify, a change within the same timestamp
// tick as the listing must still be seen.
func TestCacheQuickChanges(t *testing.T) {
	pats := []string{".env"}
	for _, mode := range cacheModes {
		t.Run(mode.name, func(t *testing.T) {
			base := tempDir(t)
			req := &Request{Root: base, Patterns: testPatterns(pats...)}
			c := NewCache(mode.opts)
			defer c.Close()
			for i := range 20 {
				d := fmt.Sprintf("%s/d%d", base, i)
				require.NoError(t, os.Mkdir(d, 0o755))
				equalSearch(t, c, req, base, pats, "mkdir")
				require.NoError(t, os.WriteFile(d+"/.env", nil, 0o644))
				equalSearch(t, c, req, base, pats, "file")
			}
		})
	}
}

func TestCacheClosed(t *testing.T) {
	c := NewCache(Options{})
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	_, err := c.Search(context.Background(), &Request{Root: "/tmp", Patterns: testPatterns("x")})
	assert.ErrorIs(t, err, ErrClosed)
}

// TestCacheTrees checks eviction of trees beyond MaxTrees and that a grant
// appearing later (a file that did not exist) is found.
func TestCacheTrees(t *testing.T) {
	base := tempDir(t)
	pats := []string{".env"}
	c := NewCache(Options{MaxTrees: 2})
	defer c.Close()
	for i := range 4 {
		mkTree(t, base, fmt.Sprintf("g%d/.env", i))
		equalSearch(t, c, &Request{Roots: []string{fmt.Sprintf("%s/g%d", base, i)}, Patterns: testPatterns(pats...)}, base, pats, "grant")
	}
	assert.Equal(t, 2, c.Stats().Trees)

	req := &Request{Roots: []string{base + "/later/.env"}, Patterns: testPatterns(pats...)}
	res := equalSearch(t, c, req, base, pats, "missing grant")
	assert.Empty(t, res.Matches)
	mkTree(t, base, "later/.env")
	res = equalSearch(t, c, req, base, pats, "grant created")
	assert.Len(t, res.Matches, 1)
	require.NoError(t, os.Remove(base+"/later/.env"))
	mkTree(t, base, "later/.env/")
	res = equalSearch(t, c, req, base, pats, "grant now a dir")
	assert.Equal(t, []string{"$/later/.env dir out .env"}, summary(res, base, pats))
}

// TestCacheSeesNewSibling is the case TestCacheProperty once found (its
// rapid dump, now this named test): a directory matching one pattern is
// searched, then a sibling matching another is made; the next search must
// find both, in every cache mode.
func TestCacheSeesNewSibling(t *testing.T) {
	pats := []string{".env", "**/.git/hooks", "k*"}
	for _, mode := range cacheModes {
		t.Run(mode.name, func(t *testing.T) {
			base := tempDir(t)
			mkTree(t, base, "ws/", "out/")
			req := &Request{Root: base + "/ws", Patterns: testPatterns(pats...)}
			c := NewCache(mode.opts)
			defer c.Close()
			require.NoError(t, os.Mkdir(base+"/ws/.env", 0o755))
			equalSearch(t, c, req, base, pats, "mkdir ws/.env")
			require.NoError(t, os.Mkdir(base+"/ws/k1", 0o755))
			equalSearch(t, c, req, base, pats, "mkdir ws/k1")
		})
	}
}
