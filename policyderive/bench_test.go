package policyderive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
)

// benchPolicy is a typical coding policy.
func benchPolicy() *policy.Policy {
	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*", "secrets/", "*.pem", "~/.ssh", "~/.aws"}
	p.PathRules = []policy.PathRule{
		{Pattern: "~/.cache/go-build", Action: policy.Allow},
		{Pattern: "~/go/pkg/mod", Action: policy.Allow, Ops: []policy.Op{policy.Read}},
	}
	return p
}

// smallRepo makes a repository of about 200 files.
func smallRepo(b *testing.B) (root, home string) {
	base, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	root, home = base+"/ws", base+"/home"
	for _, d := range []string{"ws/.git/hooks", "ws/.git/objects/ab", "ws/.git/refs/heads", "home/.ssh", "home/.cache/go-build", "home/go/pkg/mod"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 10 {
		for j := range 20 {
			d := fmt.Sprintf("%s/pkg%d", root, i)
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(fmt.Sprintf("%s/f%d.go", d, j), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, f := range []string{"ws/.env", "ws/go.mod", "ws/.git/config", "ws/.git/HEAD", "ws/.git/hooks/pre-commit.sample"} {
		if err := os.WriteFile(filepath.Join(base, f), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root, home
}

// BenchmarkDeriveRender derives a typical coding profile for a small
// repository (uncached mask search) and renders it for every backend.
// Target: ≤ 1 ms.
func BenchmarkDeriveRender(b *testing.B) {
	root, home := smallRepo(b)
	p := benchPolicy()
	for b.Loop() {
		pr, err := Derive(p, root, home, root, nil)
		if err != nil {
			b.Fatal(err)
		}
		Bwrap(pr)
		Landlock(pr, 7)
		SBPL(pr)
		OCIMounts(pr, OCIOptions{})
	}
}

// BenchmarkRender renders a derived profile for every backend.
func BenchmarkRender(b *testing.B) {
	root, home := smallRepo(b)
	pr, err := Derive(benchPolicy(), root, home, root, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Bwrap(pr)
		Landlock(pr, 7)
		SBPL(pr)
		OCIMounts(pr, OCIOptions{})
		_ = pr.Key()
	}
}

// bigTree is a generated workspace of 100,000 files in 10,111
// directories, with .env files and nested repositories with hooks, made
// once per test binary.
var bigTree struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	// The host's private System files (a root-only /etc/docker/key.json)
	// are not in the expected profiles: only the tests' own trees are
	// searched for them.
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	privateSearched = func(tree string) bool { return abspath.Within(tree, tmp) }
	code := m.Run()
	if bigTree.dir != "" {
		os.RemoveAll(bigTree.dir)
	}
	os.Exit(code)
}

func makeBigTree(b *testing.B) string {
	bigTree.once.Do(func() {
		dir, err := os.MkdirTemp("", "derive-bench")
		if err != nil {
			bigTree.err = err
			return
		}
		bigTree.dir, _ = filepath.EvalSymlinks(dir)
		for i := range 10 {
			for j := range 10 {
				for k := range 100 {
					d := fmt.Sprintf("%s/ws/pkg%d/mod%d/src%03d", bigTree.dir, i, j, k)
					if err := os.MkdirAll(d, 0o755); err != nil {
						bigTree.err = err
						return
					}
					for f := range 10 {
						name := fmt.Sprintf("file%d.go", f)
						if f == 0 && k%50 == 0 {
							name = ".env.local"
						}
						if err := os.WriteFile(d+"/"+name, nil, 0o644); err != nil {
							bigTree.err = err
							return
						}
					}
				}
				if err := os.MkdirAll(fmt.Sprintf("%s/ws/pkg%d/mod%d/.git/hooks", bigTree.dir, i, j), 0o755); err != nil {
					bigTree.err = err
					return
				}
			}
		}
		bigTree.err = os.MkdirAll(bigTree.dir+"/home", 0o755)
	})
	if bigTree.err != nil {
		b.Fatal(bigTree.err)
	}
	return bigTree.dir
}

// BenchmarkDeriveFirst100k derives on the 100,000-file tree with a new
// cache each time (the first mask search). Target (issue 5): ≤ 400 ms.
func BenchmarkDeriveFirst100k(b *testing.B) {
	dir := makeBigTree(b)
	p := benchPolicy()
	for b.Loop() {
		scans := NewScanCache(nil)
		d := NewDeriver(Options{Scans: scans})
		if _, err := d.Derive(context.Background(), p, dir+"/ws", dir+"/home", "", nil); err != nil {
			b.Fatal(err)
		}
		scans.Close()
	}
}

// BenchmarkRederive100k derives again on the 100,000-file tree when
// nothing changed, with the cache. Target: ≤ 5 ms.
func BenchmarkRederive100k(b *testing.B) {
	dir := makeBigTree(b)
	p := benchPolicy()
	scans := NewScanCache(nil)
	defer scans.Close()
	d := NewDeriver(Options{Scans: scans})
	ctx := context.Background()
	if _, err := d.Derive(ctx, p, dir+"/ws", dir+"/home", "", nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		pr, err := d.Derive(ctx, p, dir+"/ws", dir+"/home", "", nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(pr.Masks) == 0 {
			b.Fatal("no masks")
		}
	}
}

// BenchmarkRederiveRender100k is BenchmarkRederive100k plus rendering for
// every backend: the per-command cost of a sandboxed command.
func BenchmarkRederiveRender100k(b *testing.B) {
	dir := makeBigTree(b)
	p := benchPolicy()
	scans := NewScanCache(nil)
	defer scans.Close()
	d := NewDeriver(Options{Scans: scans})
	ctx := context.Background()
	if _, err := d.Derive(ctx, p, dir+"/ws", dir+"/home", "", nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		pr, err := d.Derive(ctx, p, dir+"/ws", dir+"/home", "", nil)
		if err != nil {
			b.Fatal(err)
		}
		Bwrap(pr)
		Landlock(pr, 7)
		SBPL(pr)
	}
}

// BenchmarkDeriveRenderCached is BenchmarkDeriveRender with a Deriver,
// whose mask search cache answers when nothing changed, as the workspace
// derives before every command.
func BenchmarkDeriveRenderCached(b *testing.B) {
	root, home := smallRepo(b)
	p := benchPolicy()
	scans := NewScanCache(nil)
	defer scans.Close()
	d := NewDeriver(Options{Scans: scans})
	ctx := context.Background()
	for b.Loop() {
		pr, err := d.Derive(ctx, p, root, home, root, nil)
		if err != nil {
			b.Fatal(err)
		}
		Bwrap(pr)
		Landlock(pr, 7)
		SBPL(pr)
		OCIMounts(pr, OCIOptions{})
	}
}

func BenchmarkRenderEach(b *testing.B) {
	root, home := smallRepo(b)
	pr, err := Derive(benchPolicy(), root, home, root, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("bwrap", func(b *testing.B) {
		for b.Loop() {
			Bwrap(pr)
		}
	})
	b.Run("landlock", func(b *testing.B) {
		for b.Loop() {
			Landlock(pr, 7)
		}
	})
	b.Run("sbpl", func(b *testing.B) {
		for b.Loop() {
			SBPL(pr)
		}
	})
	b.Run("oci", func(b *testing.B) {
		for b.Loop() {
			OCIMounts(pr, OCIOptions{})
		}
	})
	b.Run("key", func(b *testing.B) {
		for b.Loop() {
			_ = pr.Key()
		}
	})
}
