package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// benchTree is a generated tree of 100,000 files in 10,111 directories
// (10 × 10 × 100 leaf directories of 10 files), with a few matches
// (.env files, nested repositories with hooks) sprinkled in. It is made
// once per test binary and removed by TestMain.
var benchTree struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchTree.dir != "" {
		os.RemoveAll(benchTree.dir)
	}
	os.Exit(code)
}

func makeBenchTree(b *testing.B) string {
	benchTree.once.Do(func() {
		dir, err := os.MkdirTemp("", "scan-bench")
		if err != nil {
			benchTree.err = err
			return
		}
		benchTree.dir, _ = filepath.EvalSymlinks(dir)
		for i := range 10 {
			for j := range 10 {
				for k := range 100 {
					d := fmt.Sprintf("%s/ws/pkg%d/mod%d/src%03d", benchTree.dir, i, j, k)
					if err := os.MkdirAll(d, 0o755); err != nil {
						benchTree.err = err
						return
					}
					for f := range 10 {
						name := fmt.Sprintf("file%d.go", f)
						switch {
						case f == 0 && k%50 == 0:
							name = ".env.local"
						case f == 1 && k%97 == 0:
							name = "server.pem"
						}
						if err := os.WriteFile(d+"/"+name, nil, 0o644); err != nil {
							benchTree.err = err
							return
						}
					}
				}
				if err := os.MkdirAll(fmt.Sprintf("%s/ws/pkg%d/mod%d/.git/hooks", benchTree.dir, i, j), 0o755); err != nil {
					benchTree.err = err
					return
				}
			}
		}
	})
	if benchTree.err != nil {
		b.Fatal(benchTree.err)
	}
	return benchTree.dir
}

func benchRequest(b *testing.B) *Request {
	dir := makeBenchTree(b)
	return &Request{Root: dir + "/ws", Patterns: testPatterns(defaultPatterns...)}
}

// BenchmarkScanFirst is the first search of a new Cache (watches included)
// on the 100,000-file tree.
func BenchmarkScanFirst(b *testing.B) {
	req := benchRequest(b)
	ctx := context.Background()
	var res *Result
	for b.Loop() {
		c := NewCache(Options{})
		var err error
		if res, err = c.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		c.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(res.Entries), "entries")
	b.ReportMetric(float64(len(res.Matches)), "matches")
}

// BenchmarkScanUncached is Search on the 100,000-file tree.
func BenchmarkScanUncached(b *testing.B) {
	req := benchRequest(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanCached is a search when nothing changed.
func BenchmarkScanCached(b *testing.B) {
	req := benchRequest(b)
	ctx := context.Background()
	c := NewCache(Options{})
	defer c.Close()
	if _, err := c.Search(ctx, req); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanChanged is a search after one file was created (and one
// removed) somewhere in the tree: one directory re-read, every other
// directory's matches reused.
func BenchmarkScanChanged(b *testing.B) {
	req := benchRequest(b)
	ctx := context.Background()
	c := NewCache(Options{})
	defer c.Close()
	if _, err := c.Search(ctx, req); err != nil {
		b.Fatal(err)
	}
	p := req.Root + "/pkg3/mod4/src050/new.env"
	defer os.Remove(p)
	i := 0
	for b.Loop() {
		b.StopTimer()
		var err error
		if i%2 == 0 {
			err = os.WriteFile(p, nil, 0o644)
		} else {
			err = os.Remove(p)
		}
		i++
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := c.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanCachedStat is BenchmarkScanCached without inotify: a stat
// per directory.
func BenchmarkScanCachedStat(b *testing.B) {
	req := benchRequest(b)
	ctx := context.Background()
	c := NewCache(Options{MaxWatches: -1})
	defer c.Close()
	if _, err := c.Search(ctx, req); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrivateSystem is the private-file search of the host's System
// trees (the derivation's System search) for /etc and /usr: uncached
// (the first derivation of a process) and through a warm cache (every
// later one).
func BenchmarkPrivateSystem(b *testing.B) {
	for _, tree := range []string{"/etc", "/usr"} {
		req := &Request{Roots: []string{tree}, Patterns: []Pattern{{Key: "private", Match: func(string, string, bool) bool { return false }, Private: true}}}
		b.Run(tree[1:]+"/first", func(b *testing.B) {
			for b.Loop() {
				if _, err := Search(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tree[1:]+"/cached", func(b *testing.B) {
			c := NewCache(Options{})
			defer c.Close()
			if _, err := c.Search(context.Background(), req); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := c.Search(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
