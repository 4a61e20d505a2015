package executor_test

import (
	"bytes"
	"context"
	"os/exec"
	"testing"

	"github.com/cordon-sandbox/cordon/executor"
)

// BenchmarkLocalRunTrue compares executor.Local running `true` (that is,
// /bin/sh -c true, with both streams captured) against raw os/exec doing
// the same. Run: go test -run '^$' -bench LocalRunTrue -count 8 ./executor/
func BenchmarkLocalRunTrue(b *testing.B) {
	b.Run("os-exec", func(b *testing.B) {
		for b.Loop() {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command("/bin/sh", "-c", "true")
			cmd.Env = []string{}
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Local", func(b *testing.B) {
		l := executor.NewLocal()
		req := &executor.Request{Command: "true", Env: []string{}}
		ctx := context.Background()
		for b.Loop() {
			res, err := l.Run(ctx, req)
			if err != nil || res.ExitCode != 0 {
				b.Fatal(err, res)
			}
		}
	})
}
