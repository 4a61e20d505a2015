package policy

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzCompilePattern(f *testing.F) {
	for _, s := range []string{".env*", "secrets/", "/etc/**", "~/x", "[", "a[", `a\`, "**/.git/hooks", "{a,b}", "a/../b", "\xff*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := CompilePattern(s, "/home/u")
		if strings.IndexByte(s, 0) >= 0 {
			if !errors.Is(err, ErrNUL) {
				t.Fatalf("pattern with NUL: err = %v, want ErrNUL", err)
			}
			return
		}
		if err != nil {
			var pe *PatternError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *PatternError", err)
			}
			return
		}
		// Matching must never panic, whatever the path.
		p.Match("/a/b/"+s, "b/"+s, true)
		p.Match("/"+s, "", false)
		p.MayMatchBelow("/a", "a", true)
		p.MatchName(s)
	})
}

func FuzzDecidePath(f *testing.F) {
	for _, s := range []string{"a", "../x", "~/.ssh/id_rsa", "/etc/passwd", "a/./b/../c", ".env", "\xff", "a\x00", "//x//y/", "~bob"} {
		f.Add(s, true)
	}
	top, err := os.MkdirTemp("", "fuzzdecide")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(top) })
	top, _ = filepath.EvalSymlinks(top)
	root := filepath.Join(top, "root")
	os.MkdirAll(filepath.Join(root, "d"), 0o755)
	os.Symlink("..", filepath.Join(root, "d", "up"))
	os.Symlink("loop", filepath.Join(root, "loop"))
	c, err := NewChecker(&Policy{Write: Allow, DeniedPaths: []string{".env*"}, PathRules: []PathRule{{Pattern: "d/**", Action: Ask}}}, root, filepath.Join(top, "home"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string, write bool) {
		op := Read
		if write {
			op = Write
		}
		v, err := c.DecidePath(p, op)
		if strings.IndexByte(p, 0) >= 0 {
			if !errors.Is(err, ErrNUL) {
				t.Fatalf("path with NUL: err = %v", err)
			}
			return
		}
		if err != nil {
			return
		}
		if !path.IsAbs(v.Path) || path.Clean(v.Path) != v.Path {
			t.Fatalf("resolved path %q is not absolute and clean", v.Path)
		}
		if rel, inside := c.Inside(v.Path); inside != v.Inside || (inside && rel != v.Rel) {
			t.Fatalf("classification of %q inconsistent", v.Path)
		}
		if !v.Decision.Valid() || v.Rule == "" {
			t.Fatalf("bad verdict %+v", v)
		}
	})
}

// BenchmarkDecidePath judges an existing six-component path against a
// 100-rule policy.
func BenchmarkDecidePath(b *testing.B) {
	top, _ := filepath.EvalSymlinks(b.TempDir())
	root := filepath.Join(top, "root")
	file := filepath.Join(root, "src", "pkg", "sub", "dir", "main.go")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, nil, 0o644)
	p := Coding.Policy()
	p.DeniedPaths = []string{".env*", "*.pem", "id_rsa*", "secrets"}
	for i := 0; len(p.PathRules) < 96; i++ {
		switch i % 4 {
		case 0:
			p.PathRules = append(p.PathRules, PathRule{Pattern: fmt.Sprintf("/opt/tool%d", i), Action: Allow, Ops: []Op{Read}})
		case 1:
			p.PathRules = append(p.PathRules, PathRule{Pattern: fmt.Sprintf("gen%d/", i), Action: Deny})
		case 2:
			p.PathRules = append(p.PathRules, PathRule{Pattern: fmt.Sprintf("*.tmp%d", i), Action: Ask})
		default:
			p.PathRules = append(p.PathRules, PathRule{Pattern: fmt.Sprintf("build/**/out%d", i), Action: Deny, Ops: []Op{Write}})
		}
	}
	c, err := NewChecker(p, root, filepath.Join(top, "home"))
	if err != nil {
		b.Fatal(err)
	}
	if n := len(c.Rules()); n < 100 {
		b.Fatalf("%d rules", n)
	}
	rel := "src/pkg/sub/dir/main.go"
	b.ReportAllocs()
	b.Run("resolve+decide", func(b *testing.B) {
		for b.Loop() {
			v, err := c.DecidePath(rel, Write)
			if err != nil || v.Decision != Allow {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("decide", func(b *testing.B) {
		for b.Loop() {
			if v := c.DecideResolved(file, Write); v.Decision != Allow {
				b.Fatal(v)
			}
		}
	})
}

// BenchmarkResolve measures resolution alone (the system calls).
func BenchmarkResolve(b *testing.B) {
	top, _ := filepath.EvalSymlinks(b.TempDir())
	file := filepath.Join(top, "root", "src", "pkg", "sub", "dir", "main.go")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, nil, 0o644)
	for b.Loop() {
		if _, err := realpath(file); err != nil {
			b.Fatal(err)
		}
	}
}
