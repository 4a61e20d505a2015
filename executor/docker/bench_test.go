//go:build unix

package docker_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/docker"
	"github.com/cordon-sandbox/cordon/executor/internal/backendtest"
	"github.com/cordon-sandbox/cordon/internal/netallow"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// BenchmarkDockerRunTrue compares, interleaved in one run, the latency of
// one command through the executor (derivation, protected-path guard and
// output capture included, in the session's existing container) with
// `docker run --rm IMAGE true` through the docker CLI against the same
// engine. It reports the medians (exec-ms, docker-run-ms) and their
// ratio (speedup); ns/op is the pair. Sub-benchmarks: runner (the
// default with a local engine) and exec-per-command (one engine exec per
// command, as with a remote engine).
//
//	make docker-up && set -a && . build/docker/env && set +a
//	go test -run '^$' -bench DockerRunTrue -benchtime 30x ./executor/docker/
func BenchmarkDockerRunTrue(b *testing.B) {
	for _, perExec := range []bool{false, true} {
		name := "runner"
		if perExec {
			name = "exec-per-command"
		}
		b.Run(name, func(b *testing.B) {
			cfg := imageConfig(b)
			cfg.ExecPerCommand = perExec
			benchRunTrue(b, cfg)
		})
	}
}

func benchRunTrue(b *testing.B, cfg docker.Config) {
	cli, err := exec.LookPath("docker")
	if err != nil {
		testenv.Skip(b, testenv.Docker, "the docker CLI is not installed (the comparison runs docker run --rm)")
	}
	x := newExecutor(b, cfg)
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	req := &executor.Request{Command: "true", Dir: root, Root: root, Policy: policy.Coding.Policy(),
		Env: []string{"PATH=/usr/bin:/bin"}, Timeout: time.Minute}
	ctx := context.Background()
	if res, err := x.Run(ctx, req); err != nil || res.ExitCode != 0 { // creates the session's container
		b.Fatalf("warm-up: %v %+v", err, res)
	}
	args := []string{"run", "--rm", cfg.Image, "true"}
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		args = append([]string{"--host", h}, args...)
	}
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		b.Fatalf("warm-up: docker %v: %v: %s", args, err, out)
	}
	var viaExec, viaRun []time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := x.Run(ctx, req)
		t1 := time.Now()
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("executor: %v %+v", err, res)
		}
		if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
			b.Fatalf("docker %v: %v: %s", args, err, out)
		}
		t2 := time.Now()
		viaExec = append(viaExec, t1.Sub(t0))
		viaRun = append(viaRun, t2.Sub(t1))
	}
	me, mr := median(viaExec), median(viaRun)
	b.ReportMetric(float64(me.Microseconds())/1000, "exec-ms")
	b.ReportMetric(float64(mr.Microseconds())/1000, "docker-run-ms")
	b.ReportMetric(float64(mr)/float64(me), "speedup")
	b.Logf("%d pairs: executor median %v; docker %s median %v; %.1fx", len(viaExec), me, strings.Join(args, " "), mr, float64(mr)/float64(me))
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkDockerAllowList measures the per-command cost of `true` under
// the network allow-list (a proxy listener of its own inside the
// session's container's network namespace) against network none, in the
// same container, interleaved; allowlist/none is the ratio the README
// reports (target ≤ 1.5):
//
//	make docker-up && set -a && . build/docker/env && set +a
//	go test -run '^$' -bench DockerAllowList -benchtime 100x -count 5 ./executor/docker/
func BenchmarkDockerAllowList(b *testing.B) {
	x := newExecutor(b, imageConfig(b))
	if err := netallow.Check(); err != nil {
		b.Skipf("skipped: the allow-list needs private network namespaces: %v", err)
	}
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	none := &executor.Request{Command: "true", Dir: root, Root: root, Policy: policy.Coding.Policy(), Env: []string{"PATH=/usr/bin:/bin"}, Timeout: time.Minute}
	backendtest.BenchAllowList(b, x, none)
}
