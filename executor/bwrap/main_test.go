//go:build linux

package bwrap_test

import (
	"os"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
)

func TestMain(m *testing.M) {
	probe.MaybeRun()
	code := m.Run()
	if benchX != nil {
		benchX.Close()
	}
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

// newExecutor returns an executor, skipping (or failing, when
// CORDON_REQUIRE names bwrap) where bwrap is missing or cannot sandbox.
func newExecutor(t testing.TB, cfg bwrap.Config) *bwrap.Executor {
	t.Helper()
	x, err := bwrap.New(cfg)
	if err != nil {
		if required("bwrap") {
			t.Fatalf("bwrap.New: %v (CORDON_REQUIRE=%s)", err, os.Getenv("CORDON_REQUIRE"))
		}
		t.Skipf("bwrap is unavailable: %v", err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func required(backend string) bool {
	for _, b := range strings.Split(os.Getenv("CORDON_REQUIRE"), ",") {
		if strings.TrimSpace(b) == backend {
			return true
		}
	}
	return false
}
