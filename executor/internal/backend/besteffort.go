package backend

import (
	"log/slog"
	"slices"
	"sync"

	"github.com/cordon-sandbox/cordon/executor"
)

// maxBestEffortGaps bounds the gaps a BestEffortLog keeps.
const maxBestEffortGaps = 64

// BestEffortLog remembers the gaps of the profiles an executor ran in
// best effort, so that Describe lists what went unenforced. The zero
// value is ready; it is safe for concurrent use.
type BestEffortLog struct {
	mu   sync.Mutex
	gaps []executor.Gap
}

// Note records the gaps of one profile run in best effort (the first 64
// distinct ones) and warns once for each new one.
func (l *BestEffortLog) Note(log *slog.Logger, backend string, gaps []executor.Gap) {
	l.mu.Lock()
	defer l.mu.Unlock()
	added := false
	for _, g := range gaps {
		if !slices.Contains(l.gaps, g) && len(l.gaps) < maxBestEffortGaps {
			l.gaps = append(l.gaps, g)
			added = true
		}
	}
	if added {
		log.Warn(backend+": running in best effort without enforcing", "gaps", gaps)
	}
}

// Apply returns c with the recorded gaps added (each marked as run in
// best effort) and their controls taken off c.Enforced. c's slices are
// not modified.
func (l *BestEffortLog) Apply(c executor.Capabilities) executor.Capabilities {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.gaps) == 0 {
		return c
	}
	c.Gaps = slices.Clone(c.Gaps)
	for _, g := range l.gaps {
		c.Gaps = append(c.Gaps, executor.Gap{Control: g.Control, Reason: "run in best effort without enforcing: " + g.Reason})
	}
	c.Enforced = slices.DeleteFunc(slices.Clone(c.Enforced), func(ctl executor.Control) bool { _, gap := c.Gap(ctl); return gap })
	return c
}
