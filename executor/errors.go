package executor

import (
	"errors"
	"fmt"
	"strings"
)

// ErrClosed is wrapped by the error of Run and Start on an executor that
// was closed.
var ErrClosed = errors.New("executor closed")

// UnavailableError reports a backend that cannot run on this host at all. It
// unwraps to errors.ErrUnsupported (and to Err, when set).
type UnavailableError struct {
	Backend string
	// Reason says what is missing; Fix says how to get it.
	Reason string
	Fix    string
	Err    error
}

func (e *UnavailableError) Error() string {
	s := fmt.Sprintf("%s executor unavailable: %s", e.Backend, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Fix != "" {
		s += " (fix: " + e.Fix + ")"
	}
	return s
}

// Unwrap returns errors.ErrUnsupported and Err.
func (e *UnavailableError) Unwrap() []error {
	if e.Err != nil {
		return []error{errors.ErrUnsupported, e.Err}
	}
	return []error{errors.ErrUnsupported}
}

// UnenforceableError reports a profile the backend cannot enforce at least
// as strictly as the policy, in strict mode. It lists every gap.
type UnenforceableError struct {
	Backend string
	Gaps    []Gap
}

func (e *UnenforceableError) Error() string {
	parts := make([]string, len(e.Gaps))
	for i, g := range e.Gaps {
		parts[i] = fmt.Sprintf("%s: %s", g.Control, g.Reason)
	}
	return fmt.Sprintf("%s executor cannot enforce the policy on this host (strict mode; opt into best effort to run anyway): %s", e.Backend, strings.Join(parts, "; "))
}
