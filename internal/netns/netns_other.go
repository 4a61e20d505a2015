//go:build !linux

package netns

import (
	"fmt"
	"net"
	"os"
	"runtime"
)

// Namespace is a private network namespace (Linux only).
type Namespace struct{}

// Check reports that private network namespaces need Linux.
func Check() error { return fmt.Errorf("%w on %s", ErrUnsupported, runtime.GOOS) }

// Open fails: network namespaces need Linux.
func Open(string) (*Namespace, error) { return nil, Check() }

// New fails: private network namespaces need Linux.
func New() (*Namespace, error) { return nil, Check() }

// Do fails: private network namespaces need Linux.
func (*Namespace) Do(func() error) error { return Check() }

// EnterThread fails: private network namespaces need Linux.
func (*Namespace) EnterThread() error { return Check() }

// Listen fails: private network namespaces need Linux.
func (*Namespace) Listen(int) (net.Listener, error) { return nil, Check() }

// File returns nil.
func (*Namespace) File() *os.File { return nil }

// Close does nothing.
func (*Namespace) Close() error { return nil }
