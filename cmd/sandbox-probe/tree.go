package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// treeSpec is one generated tree of bench --tree.
type treeSpec struct {
	// Files is the number of ordinary files; Masked, for a node_modules
	// tree, the number of certificates in it.
	Files, Masked int
}

func (t treeSpec) String() string {
	if t.Masked > 0 {
		return fmt.Sprintf("nm:%d", t.Masked)
	}
	return strconv.Itoa(t.Files)
}

// parseTrees parses --tree: comma-separated file counts (a k suffix
// multiplies by 1,000), and nm:N for a node_modules tree with N
// certificates.
func parseTrees(list []string) ([]treeSpec, error) {
	var out []treeSpec
	for _, s := range list {
		s = strings.TrimSpace(s)
		masked := false
		if rest, ok := strings.CutPrefix(s, "nm:"); ok {
			masked, s = true, rest
		}
		mul := 1
		if rest, ok := strings.CutSuffix(s, "k"); ok {
			mul, s = 1000, rest
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n*mul > 2_000_000 {
			return nil, usageErrorf("bench: --tree %q: want a file count from 1 to 2000k (a k suffix means thousands), or nm:N", s)
		}
		if masked {
			out = append(out, treeSpec{Masked: n * mul})
		} else {
			out = append(out, treeSpec{Files: n * mul})
		}
	}
	return out, nil
}

// treePolicy is the policy bench --tree uses without --policy: the coding
// preset with an ordinary secrets list (issue 19's measurement).
func treePolicy() *policy.Policy {
	p := policy.Coding.Policy()
	p.DeniedPaths = append(p.DeniedPaths, ".env*", "*.pem", "*.key", "id_rsa*", "*.p12", "credentials*", "*.kdbx", ".netrc", "secrets/", "private/")
	return p
}

// treePolicyName names treePolicy in reports.
const treePolicyName = `coding preset + denied_paths [".env*", "*.pem", "*.key", "id_rsa*", "*.p12", "credentials*", "*.kdbx", ".netrc", "secrets/", "private/"]`

// makeTree generates t under dir. An ordinary tree has directories of 100
// files (grouped 100 to a parent directory), and every tenth directory
// also holds a .env.local, a server.pem and a secrets/ directory. A
// node_modules tree has packages of five certificates (test/fixtures/
// certN.pem) and five ordinary files each.
func makeTree(dir string, t treeSpec) error {
	write := func(p string) error { return os.WriteFile(p, []byte("x\n"), 0o644) }
	if t.Masked > 0 {
		for pkg := 0; pkg*5 < t.Masked; pkg++ {
			d := filepath.Join(dir, "node_modules", fmt.Sprintf("pkg%d", pkg))
			fx := filepath.Join(d, "test", "fixtures")
			if err := os.MkdirAll(fx, 0o755); err != nil {
				return err
			}
			for _, f := range []string{"package.json", "index.js", "README.md", "LICENSE", "lib.js"} {
				if err := write(filepath.Join(d, f)); err != nil {
					return err
				}
			}
			for k := 0; k < 5 && pkg*5+k < t.Masked; k++ {
				if err := write(filepath.Join(fx, fmt.Sprintf("cert%d.pem", k))); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i := 0; i*100 < t.Files; i++ {
		d := filepath.Join(dir, fmt.Sprintf("g%d", i/100), fmt.Sprintf("d%d", i%100))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for j := 0; j < 100 && i*100+j < t.Files; j++ {
			if err := write(filepath.Join(d, fmt.Sprintf("f%d.go", j))); err != nil {
				return err
			}
		}
		if i%10 == 0 {
			if err := os.MkdirAll(filepath.Join(d, "secrets"), 0o755); err != nil {
				return err
			}
			for _, f := range []string{".env.local", "server.pem", "secrets/token"} {
				if err := write(filepath.Join(d, f)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
