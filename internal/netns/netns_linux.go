package netns

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Namespace is a private network namespace held open by a descriptor.
type Namespace struct {
	f *os.File
}

// check tries once per process to make a namespace.
var check = sync.OnceValue(func() error {
	ns, err := newNamespace()
	if err != nil {
		return err
	}
	return ns.Close()
})

// Check reports whether private network namespaces can be made here: nil,
// or an error wrapping ErrUnsupported that says why.
func Check() error { return check() }

// Open opens the network namespace at path (a /proc/PID/ns/net of a
// container's process, say); entering it needs the same privilege as New.
func Open(path string) (*Namespace, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil || st.Type != unix.NSFS_MAGIC {
		f.Close()
		return nil, fmt.Errorf("netns: %s is not a namespace file", path)
	}
	return &Namespace{f: f}, nil
}

// New makes a private network namespace with loopback up.
func New() (*Namespace, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	return newNamespace()
}

func newNamespace() (*Namespace, error) {
	type result struct {
		ns  *Namespace
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("%w: %v", ErrUnsupported, err)}
			return
		}
		defer orig.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("%w: unshare(CLONE_NEWNET): %v (needs CAP_SYS_ADMIN: root)", ErrUnsupported, err)}
			return
		}
		var ns *Namespace
		err = LoopbackUp()
		if err == nil {
			var f *os.File
			if f, err = os.Open("/proc/thread-self/ns/net"); err == nil {
				ns = &Namespace{f: f}
			}
		}
		if rerr := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); rerr != nil {
			// Never unlock: the runtime ends this thread with the goroutine.
			if ns != nil {
				ns.Close()
			}
			ch <- result{err: fmt.Errorf("netns: returning to the host's network namespace: %w", rerr)}
			return
		}
		runtime.UnlockOSThread()
		ch <- result{ns: ns, err: err}
	}()
	r := <-ch
	return r.ns, r.err
}

// LoopbackUp sets IFF_UP on lo in the calling thread's network
// namespace (a new one's, or the sandbox helper's in its own user
// namespace).
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("netns: socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("netns: SIOCGIFFLAGS lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("netns: SIOCSIFFLAGS lo: %w", err)
	}
	return nil
}

// Do runs fn on a locked OS thread inside the namespace; a process fn
// starts on that thread begins in the namespace. fn runs on a goroutine
// of its own, so a thread that cannot return to the host's namespace is
// retired with that goroutine rather than left to the caller.
func (ns *Namespace) Do(fn func() error) error {
	if ns == nil || ns.f == nil {
		return errors.New("netns: closed namespace")
	}
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- err
			return
		}
		defer orig.Close()
		if err := unix.Setns(int(ns.f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- fmt.Errorf("netns: setns: %w", err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- errors.Join(ferr, fmt.Errorf("netns: returning to the host's network namespace: %w", err))
			return // never unlocked: the runtime retires the thread
		}
		runtime.UnlockOSThread()
		ch <- ferr
	}()
	return <-ch
}

// EnterThread moves the calling OS thread into the namespace. The thread
// must be locked (runtime.LockOSThread) and never unlocked: it is for a
// thread that exists only to start one process, such as a one-shot
// launcher, and ends with its goroutine.
func (ns *Namespace) EnterThread() error {
	if ns == nil || ns.f == nil {
		return errors.New("netns: closed namespace")
	}
	if err := unix.Setns(int(ns.f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("netns: setns: %w", err)
	}
	return nil
}

// Listen listens on 127.0.0.1:port inside the namespace.
func (ns *Namespace) Listen(port int) (net.Listener, error) {
	var l net.Listener
	err := ns.Do(func() error {
		var err error
		l, err = net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		return err
	})
	return l, err
}

// File returns the namespace's descriptor (owned by ns).
func (ns *Namespace) File() *os.File { return ns.f }

// Close releases the descriptor; the namespace lives on while a process
// or a socket is in it.
func (ns *Namespace) Close() error {
	if ns == nil || ns.f == nil {
		return nil
	}
	err := ns.f.Close()
	ns.f = nil
	return err
}
