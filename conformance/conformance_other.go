//go:build !unix

package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/cordon-sandbox/cordon/executor"
)

// ErrNoCase is wrapped by the error for a Select or Skip pattern that
// matches no case.
var ErrNoCase = errors.New("no such conformance case")

// Cases returns nothing on this operating system.
func Cases() []CaseInfo { return nil }

// SelectCases returns nothing on this operating system.
func SelectCases(sel, skip []string) ([]CaseInfo, error) { return nil, nil }

// Run skips: the suite is not implemented on this operating system.
func Run(t *testing.T, newExecutor func(t *testing.T) executor.Executor, opts ...Option) {
	t.Skipf("conformance: not implemented on %s/%s", runtime.GOOS, runtime.GOARCH)
}

// Check fails with an error wrapping errors.ErrUnsupported.
func Check(ctx context.Context, newExecutor func() (executor.Executor, error), opts ...Option) (*Report, error) {
	return nil, fmt.Errorf("conformance: not implemented on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}
