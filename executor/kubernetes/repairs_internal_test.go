package kubernetes

import (
	"errors"
	"strings"
	"testing"
)

// TestWithRepairs: an error Run returns after its command may have
// started keeps what the caller's guard repaired, and still unwraps to
// the cause.
func TestWithRepairs(t *testing.T) {
	cause := errors.New("the session was lost")
	if got := withRepairs(cause, nil); got != cause {
		t.Errorf("no repairs: got %v, want the cause itself", got)
	}
	err := withRepairs(cause, []string{"protect[0] \"**/.git/hooks\": /w/.git/hooks/pre-commit created by a sandboxed command: removed"})
	if !errors.Is(err, cause) {
		t.Errorf("%v does not unwrap to the cause", err)
	}
	if !strings.Contains(err.Error(), "/w/.git/hooks/pre-commit created") {
		t.Errorf("%v does not name the repair", err)
	}
}
