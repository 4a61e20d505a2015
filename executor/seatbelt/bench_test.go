//go:build unix

package seatbelt

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// benchTree makes a small repository-like workspace.
func benchTree(b *testing.B) string {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []string{".git/hooks/pre-commit.sample", ".git/config", ".git/HEAD", "src/main.go", "src/util.go", "docs/README.md", "go.mod"} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x\n"), 0o644)
	}
	return root
}

// BenchmarkPrepare measures what the executor adds per command before
// the fork: deriving the profile (mask search cached), its key, the plan
// cache lookup, the command line and the protected-path guard's baseline
// walk. On macOS the same costs precede the real sandbox-exec.
func BenchmarkPrepare(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	program := filepath.Join(dir, fakeName)
	if err := os.Symlink(self, program); err != nil {
		b.Fatal(err)
	}
	x, err := newExecutor(Config{}, program)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	root := benchTree(b)
	req := &executor.Request{Command: "true", Dir: root, Root: root, Policy: policy.Coding.Policy(), Env: []string{"PATH=/usr/bin:/bin"}}
	ctx := context.Background()
	for b.Loop() {
		r, err := x.prepare(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		r.end(ctx)
	}
}

// BenchmarkArgv measures building and checking the command line of a
// coding-mode profile.
func BenchmarkArgv(b *testing.B) {
	root := benchTree(b)
	pr, err := policyderive.Derive(policy.Coding.Policy(), root, "", root, nil)
	if err != nil {
		b.Fatal(err)
	}
	text, params, _ := policyderive.SBPL(pr.WithTmpDir(b.TempDir()))
	for b.Loop() {
		if _, err := Argv(text, params, "go test ./..."); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTrue compares, on macOS, `true` under the real
// sandbox-exec with bare /bin/sh -c true (os/exec) and executor.Local:
//
//	go test -run '^$' -bench BenchmarkRunTrue -count 8 ./executor/seatbelt
func BenchmarkRunTrue(b *testing.B) {
	if !supported {
		b.Skip("Seatbelt exists only on macOS")
	}
	x, err := New(Config{})
	if err != nil {
		b.Skip(err)
	}
	defer x.Close()
	root := benchTree(b)
	req := &executor.Request{Command: "true", Dir: root, Root: root, Policy: policy.Coding.Policy(), Env: []string{"PATH=/usr/bin:/bin"}}
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("local", func(b *testing.B) {
		l := executor.NewLocal()
		for b.Loop() {
			if _, err := l.Run(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("seatbelt", func(b *testing.B) {
		for b.Loop() {
			res, err := x.Run(ctx, req)
			if err != nil || res.ExitCode != 0 {
				b.Fatal(err, res)
			}
		}
	})
}
