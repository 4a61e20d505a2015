//go:build linux

package pathwatch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Events selects what a watch reports.
type Events uint8

const (
	// Names: entries created, deleted or renamed in the directory, and
	// the directory itself deleted or moved — what changes the file a
	// path names.
	Names Events = iota
	// Content: Names, and a child's content or attributes changing.
	Content
)

func (e Events) mask() uint32 {
	m := uint32(unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR)
	if e == Content {
		m |= unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE
	}
	return m
}

// Watcher is an inotify instance and its change generation. It is safe
// for concurrent use.
type Watcher struct {
	events Events
	max    int

	mu      sync.Mutex
	ifd     int
	mountFD int
	byPath  map[string]int32
	// byWD holds every name of a watched directory: one reachable
	// under two names (a bind mount) has one watch, and its events are
	// reported under each name.
	byWD map[int32][]string
	gen  uint64
	buf  []byte
	// log holds the last events, oldest first; every event before
	// lost (a generation) is gone, or was not one (a lost queue, a mount).
	log  []Event
	lost uint64
	// mounts is the mount table at the last check (readMountLines).
	mounts map[string]string
}

// Event is one change a watch reported, at generation Gen: Name in Dir
// (Name empty: Dir itself was deleted or moved; with Mount in Mask, a
// mount appeared at Dir or went away from it).
type Event struct {
	Gen  uint64
	Dir  string
	Name string
	Mask uint32
}

// Mount marks the Event of a mount table change (not an inotify bit).
const Mount uint32 = 1 << 31

// maxLog bounds the events kept for Since.
const maxLog = 1024

// New returns a watcher whose watches report events, holding at most
// max watches (0: an eighth of fs.inotify.max_user_watches).
func New(events Events, max int) (*Watcher, error) {
	if max <= 0 {
		max = 1024
		if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 8 {
				max = n / 8
			}
		}
	}
	mfd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("pathwatch: the mount table: %w", err)
	}
	ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		unix.Close(mfd)
		return nil, fmt.Errorf("pathwatch: inotify: %w", err)
	}
	w := &Watcher{events: events, max: max, ifd: ifd, mountFD: mfd,
		byPath: map[string]int32{}, byWD: map[int32][]string{}, buf: make([]byte, 64<<10)}
	// Prime the poll state: the first poll reports the table as changed.
	w.mountsChanged()
	w.mounts, _ = readMountLines()
	return w, nil
}

// mountsChanged reports whether the mount table changed since the last
// call, and re-arms the poll.
func (w *Watcher) mountsChanged() bool {
	fds := []unix.PollFd{{Fd: int32(w.mountFD), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		return true
	}
	if n == 0 || fds[0].Revents&(unix.POLLPRI|unix.POLLERR) == 0 {
		return false
	}
	// Reading the table to its end re-arms the notification.
	unix.Seek(w.mountFD, 0, 0)
	var b [8192]byte
	for {
		n, err := unix.Read(w.mountFD, b[:])
		if n <= 0 || err != nil {
			break
		}
	}
	return true
}

// mountEvents logs a Mount event for every mount point that appeared or
// went away since the last check (every one lost when the table cannot
// be read). w.mu is held.
func (w *Watcher) mountEvents() {
	cur, err := readMountLines()
	if err != nil || w.mounts == nil {
		w.mounts = cur
		w.lost = w.gen
		return
	}
	for _, m := range []struct{ a, b map[string]string }{{cur, w.mounts}, {w.mounts, cur}} {
		for line, mp := range m.a {
			if _, ok := m.b[line]; !ok {
				w.logEvent(Event{Gen: w.gen, Dir: mp, Mask: Mount})
			}
		}
	}
	w.mounts = cur
}

// readMountLines returns the lines of this process's mount table with
// each line's mount point: a line changes when a mount appears, goes away
// or changes its options (a bind remounted read-only, nosuid, ...).
func readMountLines() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) < 5 {
			continue
		}
		out[string(line)] = unescapeMount(string(f[4]))
	}
	return out, nil
}

// logEvent appends ev to the log, or marks everything lost when it is
// full. w.mu is held.
func (w *Watcher) logEvent(ev Event) {
	if len(w.log) >= maxLog {
		w.log = w.log[:0]
		w.lost = w.gen
		return
	}
	w.log = append(w.log, ev)
}

// Gen applies the pending events and returns the change generation.
func (w *Watcher) Gen() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	return w.gen
}

// drain reads every pending event. w.mu is held.
func (w *Watcher) drain() {
	if w.ifd < 0 {
		w.gen++
		w.lost = w.gen
		return
	}
	if w.mountsChanged() {
		w.gen++
		w.mountEvents()
	}
	for {
		n, err := unix.Read(w.ifd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN || n <= 0 {
			return
		}
		if err != nil {
			w.gen++
			w.lost = w.gen
			return
		}
		w.gen++
		EachEvent(w.buf[:n], func(wd int32, mask uint32, name string) {
			names := w.byWD[wd]
			switch {
			case mask&unix.IN_Q_OVERFLOW != 0:
				w.lost = w.gen
			case len(names) == 0:
				w.logEvent(Event{Gen: w.gen, Name: name, Mask: mask})
			default:
				for _, d := range names {
					w.logEvent(Event{Gen: w.gen, Dir: d, Name: name, Mask: mask})
				}
			}
			switch {
			case mask&(unix.IN_MOVE_SELF|unix.IN_DELETE_SELF) != 0:
				// The watch follows the directory, not its name: a
				// directory moved away would still be reported under the
				// old name, and a new one made there would never be
				// watched (Add finds the name taken). Drop the watches of
				// the names and of every name below them; the next Add
				// watches what the names hold then.
				for _, d := range names {
					w.forget(d)
				}
			case mask&unix.IN_IGNORED != 0:
				delete(w.byWD, wd)
				for _, d := range names {
					if w.byPath[d] == wd {
						delete(w.byPath, d)
					}
				}
			}
		})
	}
}

// EachEvent calls f for each inotify event in b, a buffer read from an
// inotify descriptor: its watch, mask and name (empty for the watched
// directory itself).
func EachEvent(b []byte, f func(wd int32, mask uint32, name string)) {
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		l := int(binary.NativeEndian.Uint32(b[12:]))
		if unix.SizeofInotifyEvent+l > len(b) {
			return
		}
		name := b[unix.SizeofInotifyEvent : unix.SizeofInotifyEvent+l]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[unix.SizeofInotifyEvent+l:]
		f(wd, mask, string(name))
	}
}

// Since applies the pending events and returns those after generation
// gen — mount table changes included, as Mount events — and whether that
// is all that happened since (false: events were lost, the queue
// overflowed or the watcher is closed). At most the last 1,024 events are
// kept.
func (w *Watcher) Since(gen uint64) ([]Event, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	if w.lost > gen {
		return nil, false
	}
	i := len(w.log)
	for i > 0 && w.log[i-1].Gen > gen {
		i--
	}
	return slices.Clone(w.log[i:]), true
}

// forget removes the watches of dir and of every directory below it.
// w.mu is held.
func (w *Watcher) forget(dir string) {
	drop := map[int32]bool{}
	for p, wd := range w.byPath {
		if p == dir || dir == "/" || strings.HasPrefix(p, dir+"/") {
			drop[wd] = true
		}
	}
	for p, wd := range w.byPath {
		if drop[wd] {
			delete(w.byPath, p)
		}
	}
	for wd := range drop {
		if wd >= 0 {
			delete(w.byWD, wd)
			unix.InotifyRmWatch(w.ifd, uint32(wd))
		}
	}
}

// Add watches dir (once; later calls cost a map lookup). An error means
// changes in dir may go unseen: the caller must not keep a value that
// depends on it.
func (w *Watcher) Add(dir string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ifd < 0 {
		return os.ErrClosed
	}
	if _, ok := w.byPath[dir]; ok {
		return nil
	}
	if len(w.byPath) >= w.max {
		return fmt.Errorf("pathwatch: %s: more than %d watches", dir, w.max)
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(dir, &sf); err != nil {
		return &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	watch, pseudo := FSKind(int64(sf.Type))
	if pseudo && w.events == Names {
		// The kernel's own names (proc, sysfs, cgroup): no process
		// renames them; only a mount changes them, which the mount
		// table shows.
		w.byPath[dir] = -1
		return nil
	}
	if !watch {
		return fmt.Errorf("pathwatch: %s: inotify does not see every change on this file system (magic %#x)", dir, sf.Type)
	}
	iwd, err := unix.InotifyAddWatch(w.ifd, dir, w.events.mask())
	if err != nil {
		return &os.PathError{Op: "inotify_add_watch", Path: dir, Err: err}
	}
	wd := int32(iwd)
	// The same directory under another name (a bind mount) gets the same
	// watch: its events are reported under every name.
	w.byPath[dir], w.byWD[wd] = wd, append(w.byWD[wd], dir)
	return nil
}

// Close releases the inotify instance; Gen then changes at every call.
func (w *Watcher) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ifd >= 0 {
		unix.Close(w.ifd)
		unix.Close(w.mountFD)
		w.ifd, w.mountFD = -1, -1
	}
	return nil
}

// ReadMounts returns the "id mountpoint" pairs of this process's mount
// table.
func ReadMounts() (map[string]bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) < 5 {
			continue
		}
		out[string(f[0])+" "+unescapeMount(string(f[4]))] = true
	}
	return out, nil
}

// unescapeMount decodes the octal escapes (\040) of a mountinfo path.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FSKind classifies a file system by its magic number: whether inotify
// sees every change to it (local file systems), and whether it is a
// pseudo file system whose listings change without any trace. Anything
// else (NFS, FUSE, SMB, 9p) is neither.
func FSKind(magic int64) (watch, volatile bool) {
	switch magic {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.RAMFS_MAGIC, 0x2fc12fc1 /* zfs */, 0xca451a4e, /* bcachefs */
		unix.REISERFS_SUPER_MAGIC, 0x3153464a /* jfs */, unix.NILFS_SUPER_MAGIC:
		return true, false
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC,
		unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC, unix.SECURITYFS_MAGIC, unix.BPF_FS_MAGIC, unix.DEVPTS_SUPER_MAGIC,
		0x62656570 /* configfs */, unix.PSTOREFS_MAGIC, 0x65735543 /* fusectl */, unix.EFIVARFS_MAGIC:
		return false, true
	}
	return false, false
}
