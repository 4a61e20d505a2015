package policy

import (
	"fmt"
	"io/fs"
)

// DeniedError reports an operation the policy forbids, or an ask nobody
// approved. It unwraps to fs.ErrPermission.
type DeniedError struct {
	// Op is "read", "write" or "run".
	Op string
	// Path is the resolved path, or the command for Op "run".
	Path     string
	Rule     string
	Decision Decision
	// Reason is the sentence the model should read.
	Reason string
}

func (e *DeniedError) Error() string {
	what := "denied"
	if e.Decision == Ask {
		what = "needs approval"
	}
	s := fmt.Sprintf("%s %s: %s by %s", e.Op, e.Path, what, e.Rule)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Unwrap returns fs.ErrPermission.
func (e *DeniedError) Unwrap() error { return fs.ErrPermission }
