//go:build unix

package protectguard_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/pathwatch"
	"github.com/cordon-sandbox/cordon/internal/protectguard"
	"github.com/cordon-sandbox/cordon/policy"
)

// benchTree makes a workspace of 100,000 files (1,000 directories of 100)
// holding 50 nested repositories (each with a config, two sample hooks,
// objects and refs), and returns its root.
func benchTree(b *testing.B) string {
	b.Helper()
	base, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(base, "root")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for d := range 1000 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%02d", d/50), fmt.Sprintf("d%03d", d))
		if d%20 == 0 {
			git := filepath.Join(dir, ".git")
			write(filepath.Join(git, "HEAD"), "ref: refs/heads/main\n")
			write(filepath.Join(git, "config"), configText)
			write(filepath.Join(git, "hooks", "pre-commit.sample"), sampleText)
			write(filepath.Join(git, "hooks", "post-update.sample"), sampleText)
			write(filepath.Join(git, "refs", "heads", "main"), "0000000000000000000000000000000000000000\n")
			for o := range 16 {
				write(filepath.Join(git, "objects", fmt.Sprintf("%02x", o), "0000"), "x")
			}
		}
		for f := range 100 {
			write(filepath.Join(dir, fmt.Sprintf("f%02d.go", f)), "package p\n")
		}
	}
	return root
}

func benchGuard(b *testing.B, root string, opts ...func(*protectguard.Options)) *protectguard.Guard {
	b.Helper()
	c, err := policy.NewChecker(policy.Coding.Policy(), root, filepath.Join(filepath.Dir(root), "home"))
	if err != nil {
		b.Fatal(err)
	}
	o := protectguard.Options{Checker: c, Trees: []string{root}}
	for _, f := range opts {
		f(&o)
	}
	g, err := protectguard.New(o)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// command is one guarded command: Begin, mutate, End.
func benchCommand(b *testing.B, g *protectguard.Guard, mutate func()) {
	ctx := context.Background()
	if _, err := g.Begin(ctx); err != nil {
		b.Fatal(err)
	}
	mutate()
	vs, err := g.End(ctx)
	if err != nil || len(vs) > 0 {
		b.Fatalf("End: %v %v", vs, err)
	}
}

// BenchmarkGuard100k: the guard's cost per command (Begin and End) on a
// 100,000-file workspace with 50 nested repositories, side by side with a
// bare fork and exec of /bin/true. The cases: walk (no watcher, every
// scan walks, listings and hashes cached), idle (with the change watcher,
// a command that changed nothing), edit (an ordinary file edited), newfile
// (a new file made: a walk with the listing cache), stream (the walk past
// a bound of 50,000 entries, streaming). Reproduce with
//
//	go test -run '^$' -bench BenchmarkGuard100k -benchtime 20x -count 3 ./internal/protectguard/
func BenchmarkGuard100k(b *testing.B) {
	root := benchTree(b)
	b.Run("true", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("walk", func(b *testing.B) {
		g := benchGuard(b, root)
		benchCommand(b, g, func() {})
		for b.Loop() {
			benchCommand(b, g, func() {})
		}
	})
	watched := func(b *testing.B) *protectguard.Guard {
		w, err := pathwatch.New(pathwatch.Content, 0)
		if err != nil {
			b.Skipf("no change watcher here: %v", err)
		}
		b.Cleanup(func() { w.Close() })
		g := benchGuard(b, root, func(o *protectguard.Options) { o.Watcher = w })
		benchCommand(b, g, func() {})
		return g
	}
	b.Run("idle", func(b *testing.B) {
		g := watched(b)
		for b.Loop() {
			benchCommand(b, g, func() {})
		}
	})
	b.Run("edit", func(b *testing.B) {
		g := watched(b)
		p := filepath.Join(root, "pkg00", "d001", "f00.go")
		n := 0
		for b.Loop() {
			n++
			benchCommand(b, g, func() {
				if err := os.WriteFile(p, fmt.Appendf(nil, "package p // %d\n", n), 0o644); err != nil {
					b.Fatal(err)
				}
			})
		}
	})
	newFiles := 0 // across runs (-count): each name is new
	b.Run("newfile", func(b *testing.B) {
		g := watched(b)
		for b.Loop() {
			newFiles++
			n := newFiles
			benchCommand(b, g, func() {
				if err := os.WriteFile(filepath.Join(root, "pkg00", "d001", fmt.Sprintf("new%d.go", n)), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			})
		}
	})
	b.Run("stream", func(b *testing.B) {
		g := benchGuard(b, root, func(o *protectguard.Options) { o.MaxEntries = 50_000 })
		benchCommand(b, g, func() {})
		for b.Loop() {
			benchCommand(b, g, func() {})
		}
	})
}
