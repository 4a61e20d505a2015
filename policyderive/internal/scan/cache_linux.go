//go:build linux

package scan

import (
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/pathwatch"
)

// platformCache is the inotify state of a Cache.
type platformCache struct {
	ifd        int // inotify instance, or -1
	stopFD     int // eventfd that stops the drainer
	mountFD    int // /proc/self/mountinfo, polled for mount changes
	maxWatches int
	watches    map[int32][]*node // several nodes share a watch when one directory is reachable twice (bind mounts)
	exhausted  bool              // no more watches for this search
	overflows  int
	mounts     map[string]bool // mountinfo "id mountpoint" at the last check
	buf        []byte
	done       sync.WaitGroup
}

// watchMask selects the events that change a directory's listing or
// readability, or its identity.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ATTRIB |
	unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR

// drainPause bounds how often the drainer wakes on a busy tree.
const drainPause = 20 * time.Millisecond

func (c *Cache) initPlatform() {
	p := &c.plat
	p.ifd, p.stopFD, p.mountFD = -1, -1, -1
	if c.opts.MaxWatches < 0 {
		return
	}
	p.maxWatches = c.opts.MaxWatches
	if p.maxWatches == 0 {
		p.maxWatches = 4096
		if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 1 {
				p.maxWatches = n / 2
			}
		}
	}
	// Mounts appearing inside a tree send no inotify event: without the
	// mount table to poll, watches are not enough.
	mfd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		c.log.Debug("mask search cache: no mount table, validating by stat", "err", err)
		return
	}
	mounts, err := readMounts()
	if err != nil {
		unix.Close(mfd)
		c.log.Debug("mask search cache: no mount table, validating by stat", "err", err)
		return
	}
	ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		unix.Close(mfd)
		c.log.Debug("mask search cache: no inotify, validating by stat", "err", err)
		return
	}
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(mfd)
		unix.Close(ifd)
		c.log.Debug("mask search cache: no eventfd, validating by stat", "err", err)
		return
	}
	p.ifd, p.stopFD, p.mountFD, p.mounts = ifd, stop, mfd, mounts
	p.watches = map[int32][]*node{}
	p.buf = make([]byte, 64<<10)
	// Prime the poll state: the first poll reports the table as changed.
	unix.Poll([]unix.PollFd{{Fd: int32(mfd), Events: unix.POLLPRI}}, 0)
	p.done.Add(1)
	go c.drainLoop()
}

// drainLoop applies events as they arrive, so that a busy tree does not
// overflow the kernel's queue between searches. It reads only under c.mu,
// so a search never misses an event a drainer has read but not applied.
func (c *Cache) drainLoop() {
	p := &c.plat
	defer p.done.Done()
	fds := []unix.PollFd{{Fd: int32(p.ifd), Events: unix.POLLIN}, {Fd: int32(p.stopFD), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			c.mu.Lock()
			if !c.closed {
				c.drain()
			}
			c.mu.Unlock()
			// Pause, unless stopped.
			unix.Poll(fds[1:], int(drainPause/time.Millisecond))
		}
	}
}

func (c *Cache) closePlatform() error {
	p := &c.plat
	if p.ifd < 0 {
		return nil
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	unix.Write(p.stopFD, one[:])
	p.done.Wait()
	unix.Close(p.ifd)
	unix.Close(p.stopFD)
	unix.Close(p.mountFD)
	p.ifd, p.stopFD, p.mountFD = -1, -1, -1
	return nil
}

func (c *Cache) overflows() int { return c.plat.overflows }

// validatePlatform applies queued events and mount changes.
func (c *Cache) validatePlatform() {
	p := &c.plat
	p.exhausted = false
	if p.ifd < 0 {
		return
	}
	c.drain()
	fds := []unix.PollFd{{Fd: int32(p.mountFD), Events: unix.POLLPRI}}
	if n, err := unix.Poll(fds, 0); err != nil || (n > 0 && fds[0].Revents&(unix.POLLPRI|unix.POLLERR) != 0) {
		c.mountsChanged()
	}
}

// mountsChanged drops the trees that a mount or unmount touched.
func (c *Cache) mountsChanged() {
	p := &c.plat
	mounts, err := readMounts()
	if err != nil {
		for path := range c.trees {
			c.dropTree(path)
		}
		return
	}
	var changed []string
	for m := range mounts {
		if !p.mounts[m] {
			changed = append(changed, m[strings.IndexByte(m, ' ')+1:])
		}
	}
	for m := range p.mounts {
		if !mounts[m] {
			changed = append(changed, m[strings.IndexByte(m, ' ')+1:])
		}
	}
	p.mounts = mounts
	for path := range c.trees {
		for _, mp := range changed {
			if abspath.Within(mp, path) || abspath.Within(path, mp) {
				c.log.Debug("mask search cache: mount changed in tree", "tree", path, "mount", mp)
				c.dropTree(path)
				break
			}
		}
	}
}

// readMounts returns the "id mountpoint" pairs of the mount table.
func readMounts() (map[string]bool, error) { return pathwatch.ReadMounts() }

// drain reads and applies every queued event.
func (c *Cache) drain() {
	p := &c.plat
	for {
		n, err := unix.Read(p.ifd, p.buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN || n == 0 {
			return
		}
		if err != nil {
			c.log.Debug("mask search cache: reading inotify", "err", err)
			c.overflow()
			return
		}
		pathwatch.EachEvent(p.buf[:n], c.apply)
	}
}

// overflow handles a lost event queue: every directory is re-read at the
// next search (the watches stay; re-reading reconciles each directory's
// children by inode number, from each root down).
func (c *Cache) overflow() {
	c.plat.overflows++
	c.log.Debug("mask search cache: inotify queue overflow, re-reading everything")
	var dirty func(n *node)
	dirty = func(n *node) {
		n.listed = false
		for _, ch := range n.children {
			dirty(ch)
		}
	}
	for _, t := range c.trees {
		dirty(t.root)
	}
	c.gen++
}

// apply applies one event.
func (c *Cache) apply(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		c.overflow()
		return
	}
	nodes := c.plat.watches[wd]
	if len(nodes) == 0 {
		return // a watch already removed
	}
	nodes = append([]*node(nil), nodes...)
	for _, n := range nodes {
		switch {
		case mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0:
			if mask&unix.IN_IGNORED != 0 {
				c.wmu.Lock()
				c.forget(wd, n)
				c.wmu.Unlock()
			}
			c.invalidate(n)
		case name != "" && mask&(unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0:
			n.listed = false
			if ch := n.children[name]; ch != nil {
				delete(n.children, name)
				c.drop(ch)
			}
			c.gen++
		case name != "" && mask&unix.IN_ATTRIB != 0 && n.modes:
			// A child's mode may have changed, and the listing
			// carries modes (Pattern.Private).
			n.listed = false
			if ch := n.children[name]; ch != nil {
				ch.listed = false
			}
			c.gen++
		case name != "" && mask&unix.IN_ATTRIB != 0:
			// A child's permissions changed: only directories matter.
			if ch := n.children[name]; ch != nil {
				ch.listed = false
				c.gen++
			}
		case mask&unix.IN_ATTRIB != 0:
			n.listed = false
			c.gen++
		}
	}
}

// forget removes n from watch wd without removing the watch from the
// kernel (it is gone already). c.wmu is held.
func (c *Cache) forget(wd int32, n *node) {
	p := &c.plat
	list := p.watches[wd]
	for i, m := range list {
		if m == n {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(p.watches, wd)
	} else {
		p.watches[wd] = list
	}
	if n.wd == wd {
		n.wd = -1
	}
}

// unwatch removes n's watch, from the kernel when no other node shares it.
// c.wmu is held.
func (c *Cache) unwatch(n *node) {
	if n.wd < 0 {
		return
	}
	wd := n.wd
	c.forget(wd, n)
	if _, shared := c.plat.watches[wd]; !shared && c.plat.ifd >= 0 {
		unix.InotifyRmWatch(c.plat.ifd, uint32(wd))
	}
}

// noteListing records, before directory n (open as fd) is read, what the
// next search needs to know whether it changed: an inotify watch, or its
// stat for validation.
func (c *Cache) noteListing(fd int, n *node) {
	n.readAt = time.Now().UnixNano()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil {
		n.st = dirStat{dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	}
	if n.parent != nil && n.parent.st.dev == n.st.dev {
		n.fsw, n.vol = n.parent.fsw, n.parent.vol
	} else {
		var sfs unix.Statfs_t
		if err := unix.Fstatfs(fd, &sfs); err == nil {
			n.fsw, n.vol = fsKind(int64(sfs.Type))
		}
	}
	p := &c.plat
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if n.wd >= 0 {
		return
	}
	if p.ifd >= 0 && n.fsw && !p.exhausted && len(p.watches) < p.maxWatches {
		wd, err := unix.InotifyAddWatch(p.ifd, n.path, watchMask)
		if err == nil {
			n.wd = int32(wd)
			p.watches[n.wd] = append(p.watches[n.wd], n)
			delete(c.unwatched, n)
			return
		}
		if err == unix.ENOSPC {
			p.exhausted = true
			c.log.Debug("mask search cache: out of inotify watches, validating by stat", "watches", len(p.watches))
		}
	}
	c.unwatched[n] = struct{}{}
}

// fsKind classifies a file system by its magic number (see
// pathwatch.FSKind): whether inotify sees every change to it, and
// whether it is a pseudo file system whose listings change without any
// trace (re-read at every search). Anything else (NFS, FUSE, SMB, 9p) is
// validated by modification times.
func fsKind(magic int64) (watch, volatile bool) { return pathwatch.FSKind(magic) }
