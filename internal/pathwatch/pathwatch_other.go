//go:build !linux

package pathwatch

import "errors"

// Events selects what a watch reports.
type Events uint8

const (
	// Names: entries created, deleted or renamed.
	Names Events = iota
	// Content: Names, and a child's content or attributes changing.
	Content
)

// Watcher is Linux-only; New fails elsewhere.
type Watcher struct{}

// New returns errors.ErrUnsupported: inotify is Linux-only.
func New(Events, int) (*Watcher, error) { return nil, errors.ErrUnsupported }

// Gen is never reached: New fails.
func (w *Watcher) Gen() uint64 { return 0 }

// Add fails: there is no watcher.
func (w *Watcher) Add(string) error { return errors.ErrUnsupported }

// Close does nothing.
func (w *Watcher) Close() error { return nil }

// Event is one change a watch reported.
type Event struct {
	Gen  uint64
	Dir  string
	Name string
	Mask uint32
}

// Since reports nothing known.
func (w *Watcher) Since(uint64) ([]Event, bool) { return nil, false }

// Mount marks the Event of a mount table change.
const Mount uint32 = 1 << 31
