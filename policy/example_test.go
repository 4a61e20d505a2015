package policy_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/policy"
)

func ExampleChecker_DecidePath() {
	root, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(root)
	root, _ = filepath.EvalSymlinks(root)

	spec := &policy.Spec{DeniedPaths: []string{".env*"}}
	p, err := spec.Build() // the coding preset plus a denied pattern
	if err != nil {
		panic(err)
	}
	c, err := policy.NewChecker(p, root, "/home/alice")
	if err != nil {
		panic(err)
	}
	for _, q := range []struct {
		path string
		op   policy.Op
	}{
		{"src/main.go", policy.Write},
		{"config/.env.local", policy.Read},
		{".git/hooks/pre-commit", policy.Write},
		{"/etc/hosts", policy.Read},
	} {
		v, _ := c.DecidePath(q.path, q.op)
		fmt.Printf("%s %s: %s (%s)\n", q.op, q.path, v.Decision, v.Rule)
	}
	// Output:
	// write src/main.go: allow (default: write inside root)
	// read config/.env.local: deny (denied_paths[0] ".env*")
	// write .git/hooks/pre-commit: deny (protect[0] "**/.git/hooks")
	// read /etc/hosts: ask (default: read outside root)
}
