package backend

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/protectguard"
)

// Guarded is one command's use of the protected-path guard: what Begin
// found before the command, then End's repair after it.
type Guarded struct {
	g     *protectguard.Guard
	notes []string
	log   *slog.Logger
	name  string
}

// BeginGuard starts g's watch of one command of the named backend (g nil:
// nothing to guard). When the guard cannot watch its trees, strict mode
// fails with *executor.UnenforceableError on ControlProtect; best effort
// logs it and says so in the command's violations.
func BeginGuard(ctx context.Context, g *protectguard.Guard, backend string, bestEffort bool, log *slog.Logger) (*Guarded, error) {
	w := &Guarded{log: log, name: backend}
	if g == nil {
		return w, nil
	}
	vs, err := g.Begin(ctx)
	switch {
	case err == nil:
		w.g = g
		w.notes = protectguard.Strings(vs)
	case !bestEffort:
		return nil, &executor.UnenforceableError{Backend: backend, Gaps: []executor.Gap{{
			Control: executor.ControlProtect,
			Reason:  fmt.Sprintf("the protected-path guard cannot watch %s: %v", strings.Join(g.Trees(), ", "), err),
		}}}
	default:
		log.Warn(backend+": protected paths are not guarded for this command", "err", err)
		w.notes = []string{"protected paths were not guarded (best effort): " + err.Error()}
	}
	return w, nil
}

// Repaired reports whether Begin repaired anything (what a command still
// running had changed): the tree may derive differently now.
func (w *Guarded) Repaired() bool { return w != nil && len(w.notes) > 0 }

// End runs the guard's repair, even when ctx was cancelled, and returns
// the command's violations: what Begin found, what was repaired, and a
// repair that failed. Call it once, after the command (and everything it
// started in the sandbox) has ended. A nil Guarded (the command never
// got as far as the guard) has nothing to report.
func (w *Guarded) End(ctx context.Context) []string {
	if w == nil {
		return nil
	}
	notes := w.notes
	if w.g == nil {
		return notes
	}
	vs, err := w.g.End(context.WithoutCancel(ctx))
	notes = append(notes, protectguard.Strings(vs)...)
	if err != nil {
		w.log.Warn(w.name+": protected-path repair failed", "err", err)
		notes = append(notes, "protected-path repair failed: "+err.Error())
	}
	return notes
}
