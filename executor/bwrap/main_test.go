//go:build linux

package bwrap_test

import (
	"os"
	"testing"

	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

func TestMain(m *testing.M) {
	bwrap.Init()
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
// CORDON_REQUIRE names bwrap) where bwrap is missing or cannot sandbox
// (*executor.UnavailableError); any other error fails.
func newExecutor(t testing.TB, cfg bwrap.Config) *bwrap.Executor {
	t.Helper()
	x, err := bwrap.New(cfg)
	testenv.SkipUnavailable(t, testenv.Bwrap, err)
	t.Cleanup(func() { x.Close() })
	return x
}
