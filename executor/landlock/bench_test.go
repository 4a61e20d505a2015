//go:build linux

package landlock_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/internal/backendtest"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

var (
	benchOnce sync.Once
	benchX    *landlock.Executor
	// benchNoLoop is benchX without the private loopback of network
	// none (Config.NoLoopback): its cost, side by side.
	benchNoLoop *landlock.Executor
	benchRoot   string
	benchErr    error
)

// benchSetup creates one long-lived executor and a small repository-like
// workspace, shared by every count of the benchmark.
func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		benchX, benchErr = landlock.New(landlock.Config{})
		if benchErr != nil {
			return
		}
		benchNoLoop, benchErr = landlock.New(landlock.Config{NoLoopback: true})
		if benchErr != nil {
			return
		}
		benchRoot, benchErr = os.MkdirTemp("", "cordon-landlock-bench-")
		if benchErr != nil {
			return
		}
		benchRoot, _ = filepath.EvalSymlinks(benchRoot)
		for _, f := range []string{".git/hooks/pre-commit.sample", ".git/config", ".git/HEAD", "src/main.go", "src/util.go", "docs/README.md", "go.mod"} {
			p := filepath.Join(benchRoot, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("x\n"), 0o644)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	testenv.Require(b, testenv.Landlock, benchX.ABI() > 0, "Landlock is not available")
}

// BenchmarkLandlockRunTrue measures the per-command latency of `true`
// from a long-lived executor against bare /bin/sh -c true (os/exec) and
// against executor.Local (the same plumbing without Landlock). The
// sub-benchmarks alternate within each run; use -count 8 and compare the
// medians (p95-ns is each sub-benchmark's 95th percentile):
//
//	go test -run '^$' -bench BenchmarkLandlockRunTrue -count 8 ./executor/landlock
func BenchmarkLandlockRunTrue(b *testing.B) {
	benchSetup(b)
	req := &executor.Request{
		Command: "true", Dir: benchRoot, Root: benchRoot, Policy: policy.Coding.Policy(),
		Env: []string{"PATH=/usr/bin:/bin"},
	}
	ctx := context.Background()
	timed := func(b *testing.B, op func() error) {
		var lat []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if err := op(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		if len(lat) > 0 {
			b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
		}
	}
	b.Run("bare", func(b *testing.B) {
		timed(b, func() error { return exec.Command("/bin/sh", "-c", "true").Run() })
	})
	local := executor.NewLocal()
	b.Run("local", func(b *testing.B) {
		timed(b, func() error { _, err := local.Run(ctx, req); return err })
	})
	b.Run("landlock", func(b *testing.B) {
		timed(b, func() error { _, err := benchX.Run(ctx, req); return err })
	})
	// interleaved runs the three one after the other in every iteration,
	// so load on the machine hits them alike.
	b.Run("interleaved", func(b *testing.B) {
		testenv.Interleave(b,
			testenv.Op{Name: "bare", Run: func() error { return exec.Command("/bin/sh", "-c", "true").Run() }},
			testenv.Op{Name: "local", Base: "bare", Run: func() error { _, err := local.Run(ctx, req); return err }},
			testenv.Op{Name: "landlock", Base: "bare", Run: func() error { _, err := benchX.Run(ctx, req); return err }},
			testenv.Op{Name: "noloopback", Base: "bare", Run: func() error { _, err := benchNoLoop.Run(ctx, req); return err }},
		)
	})
}

// BenchmarkLandlockAllowList measures the per-command cost of `true`
// under the network allow-list (a private network namespace and a proxy
// session per command) against the same executor under network none,
// interleaved so load hits both alike; allowlist/none is the ratio the
// README reports (target ≤ 1.5):
//
//	go test -run '^$' -bench BenchmarkLandlockAllowList -count 8 ./executor/landlock
func BenchmarkLandlockAllowList(b *testing.B) {
	benchSetup(b)
	if err := netallow.Check(); err != nil {
		b.Skipf("skipped: the allow-list needs private network namespaces: %v", err)
	}
	none := &executor.Request{Command: "true", Dir: benchRoot, Root: benchRoot, Policy: policy.Coding.Policy(), Env: []string{"PATH=/usr/bin:/bin"}}
	backendtest.BenchAllowList(b, benchX, none)
}
