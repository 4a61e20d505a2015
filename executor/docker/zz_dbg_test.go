package docker_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/executor/docker"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }

func TestZZRunnerStays(t *testing.T) {
	var buf syncBuf
	cfg := imageConfig(t)
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	x := newExecutor(t, cfg)
	w := newWS(t)
	var slow int
	for i := range 60 {
		t0 := time.Now()
		res := run(t, x, w.req("true", nil))
		if d := time.Since(t0); d > 50*time.Millisecond {
			slow++
			t.Logf("run %d took %v exit %d", i, d, res.ExitCode)
		}
	}
	_ = docker.Backend
	_ = context.Background
	for _, l := range strings.Split(buf.b.String(), "\n") {
		if strings.Contains(l, "runner") || strings.Contains(l, "sweep") || strings.Contains(l, "killed") {
			t.Log(l)
		}
	}
	t.Logf("slow: %d", slow)
}
