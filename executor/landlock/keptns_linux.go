//go:build linux

package landlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/internal/pathwatch"
)

// A command's mount namespace (mountns_linux.go) costs a bind and a
// remount per mask: hundreds of mounts for a large tree with secrets
// scattered through it, made again for every command. With the cgo start
// path the executor instead makes the namespace once per ruleset — a
// holder process builds it and exits, and descriptors of its mount (and,
// not root, user) namespace keep it — and every command's child joins it
// with setns. The namespace is made again when the mount table changed or
// events were lost since (pathwatch); everything else it depends on (the
// write grants, the masks, the inodes of the rules' paths) is in the
// ruleset's key, so a change there is a new ruleset with a namespace of
// its own. Commands cannot change a shared namespace: they hold no
// capabilities in it. A mask renamed over, removed or made again on the
// host loses its bind in every namespace (the kernel detaches mounts on a
// replaced name), so such an event makes the namespace again as well.

// keptNS is a kept mount namespace: descriptors of the namespaces and the
// watcher generation it was made at.
type keptNS struct {
	mnt, user *os.File
	gen       uint64
}

func (k *keptNS) close() {
	if k == nil {
		return
	}
	k.mnt.Close()
	if k.user != nil {
		k.user.Close()
	}
}

// keptNamespace returns duplicates of the descriptors of rs's kept mount
// namespace, made now when there is none or it is stale, for one command
// to join (the caller closes them once it started); nil when there is no
// watcher to tell staleness or the namespace cannot be made (the command
// then makes its own).
func (x *Executor) keptNamespace(rs *ruleset) *keptNS {
	if !canSpawn || rs.mounts == mountsNone || x.names == nil {
		return nil
	}
	rs.keptMu.Lock()
	defer rs.keptMu.Unlock()
	if rs.kept != nil {
		// Checked up to g from now on: the events after the namespace
		// was made are not looked at again at every command.
		if g := x.names.Gen(); rs.keptCurrent(x.names) {
			rs.kept.gen = g
		} else {
			rs.kept.close()
			rs.kept = nil
		}
	}
	if rs.kept == nil {
		g := x.names.Gen()
		// Watch where the masks are first (their directories are the
		// ones Landlock splits, watched already for the key as a rule's
		// parent), then make the namespace.
		for m := range rs.maskReach {
			if err := x.names.Add(abspath.Parent(m)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				x.log.Debug("landlock: no kept mount namespace: a mask's directory cannot be watched", "err", err)
				return nil
			}
		}
		k, err := makeKeptNS(rs)
		if err != nil {
			x.log.Debug("landlock: no kept mount namespace; each command makes its own", "err", err)
			return nil
		}
		k.gen = g
		rs.kept = k
	}
	d := &keptNS{}
	var err error
	if d.mnt, err = dupFile(rs.kept.mnt); err != nil {
		return nil
	}
	if rs.kept.user != nil {
		if d.user, err = dupFile(rs.kept.user); err != nil {
			d.mnt.Close()
			return nil
		}
	}
	return d
}

// keptCurrent reports whether rs's kept namespace still shows the host's
// mounts where commands can reach: no mount appeared or went away at or
// below a rule's path, or above one, since it was made (a container's
// mounts elsewhere do not count; an unmounted volume a rule reaches
// does — the namespace would keep it mounted).
func (rs *ruleset) keptCurrent(w *pathwatch.Watcher) bool {
	evs, ok := w.Since(rs.kept.gen)
	if !ok {
		return false
	}
	for _, ev := range evs {
		if ev.Mask&pathwatch.Mount == 0 {
			// A mask renamed over, removed or made again on the host:
			// the rename or unlink took the mask's bind away in every
			// namespace (the kernel detaches mounts on a replaced
			// dentry), so the file now under the name is unmasked here.
			if ev.Dir == "" || rs.maskReach[abspath.Join(ev.Dir, ev.Name)] {
				return false
			}
			continue
		}
		if rs.plan.reaches(ev.Dir) {
			return false // a rule's path or a directory above one
		}
		for a := ev.Dir; a != "/"; {
			a = abspath.Parent(a)
			if rs.plan.rulePaths[a] {
				return false // below a rule's path
			}
		}
	}
	return true
}

func dupFile(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// makeKeptNS starts a holder — a shell waiting on its standard input, in
// a namespace made by rs's mount plan, with neither Landlock nor a
// filter — keeps descriptors of its namespaces and lets it exit.
func makeKeptNS(rs *ruleset) (*keptNS, error) {
	holder := &ruleset{filter: "-", mounts: rs.mounts, writable: rs.writable, masks: rs.masks}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	started := orphans.begin()
	p, err := spawner(holder, "", nil, nil)(executor.Shell, []string{"sh", "-c", "read _"},
		&os.ProcAttr{Dir: "/", Files: []*os.File{r, null, null}, Sys: &syscall.SysProcAttr{Setsid: true}})
	if err != nil {
		started(0)
		return nil, fmt.Errorf("starting the namespace holder: %w", err)
	}
	started(p.Pid)
	defer func() {
		w.Close()
		p.Kill()
		p.Wait()
		orphans.forget(p.Pid)
	}()
	dir := "/proc/" + strconv.Itoa(p.Pid) + "/ns/"
	k := &keptNS{}
	if k.mnt, err = os.Open(dir + "mnt"); err != nil {
		return nil, err
	}
	if rs.mounts == mountsUserNS {
		if k.user, err = os.Open(dir + "user"); err != nil {
			k.mnt.Close()
			return nil, err
		}
	}
	return k, nil
}
