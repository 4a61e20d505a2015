package policyderive

import (
	"fmt"
	"os"
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cordon-sandbox/cordon/internal/abspath"
)

// This file holds small models of the backends' semantics, used by the
// soundness tests to evaluate renderings as data.

// mnt is one mount of a mount table.
type mnt struct {
	dest string
	src  string // host source, for binds
	bind bool   // a bind of a host path; otherwise a tmpfs, /proc, /dev, a link
	ro   bool
}

// mountTable models a mount namespace built in order: a later mount
// shadows everything at and below its destination.
type mountTable struct {
	ms []mnt
	// created are the host paths the runtime had to create as mount
	// points; errs are mounts that would fail.
	created []string
	errs    []string
}

// lookup returns the mount that covers p (the last one whose destination
// is p or an ancestor).
func (mt *mountTable) lookup(p string) *mnt {
	for i := len(mt.ms) - 1; i >= 0; i-- {
		if abspath.Within(p, mt.ms[i].dest) {
			return &mt.ms[i]
		}
	}
	return nil
}

// host returns the host path visible at p and whether the mount there is
// read-only, or ok false when what is at p is not a host file.
func (mt *mountTable) host(p string) (hostPath string, ro, ok bool) {
	m := mt.lookup(p)
	if m == nil || !m.bind {
		return "", false, false
	}
	switch {
	case m.dest == "/" && m.src == "/":
		hostPath = p
	case m.dest == "/":
		hostPath = m.src + p
	default:
		hostPath = m.src + p[len(m.dest):]
	}
	return hostPath, m.ro, true
}

// read reports whether the sandbox can read the host file at p.
func (mt *mountTable) read(p string) bool {
	hp, _, ok := mt.host(p)
	return ok && hp == p
}

// write reports whether the sandbox can write (or create) the host file
// at p.
func (mt *mountTable) write(p string) bool {
	hp, ro, ok := mt.host(p)
	return ok && hp == p && !ro
}

// mount adds a mount, recording a mount point the runtime would create on
// the host (through a bind) or fail to create.
func (mt *mountTable) mount(m mnt) {
	if m.bind {
		if _, err := os.Stat(m.src); err != nil {
			mt.errs = append(mt.errs, fmt.Sprintf("bind source %s does not exist", m.src))
		}
	}
	if m.dest != "/" {
		if cov := mt.lookup(m.dest); cov != nil {
			if hp, ro, ok := mt.host(m.dest); ok {
				if _, err := os.Lstat(hp); err != nil {
					if ro {
						mt.errs = append(mt.errs, fmt.Sprintf("mount point %s cannot be created on a read-only bind", m.dest))
					}
					mt.created = append(mt.created, hp)
				}
			} else if cov.ro {
				mt.errs = append(mt.errs, fmt.Sprintf("mount point %s inside a read-only tmpfs", m.dest))
			}
		}
	}
	mt.ms = append(mt.ms, m)
}

// bwrapTable builds the mount table of a bwrap argument list (the subset
// Bwrap emits), starting from bwrap's empty tmpfs root.
func bwrapTable(args []string) (*mountTable, error) {
	mt := &mountTable{ms: []mnt{{dest: "/"}}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		need := func(n int) ([]string, error) {
			if i+n >= len(args) {
				return nil, fmt.Errorf("%s: missing arguments", a)
			}
			v := args[i+1 : i+1+n]
			i += n
			return v, nil
		}
		switch a {
		case "--unshare-all", "--share-net", "--unshare-user", "--new-session", "--die-with-parent":
		case "--cap-drop", "--chdir":
			if _, err := need(1); err != nil {
				return nil, err
			}
		case "--ro-bind", "--bind":
			v, err := need(2)
			if err != nil {
				return nil, err
			}
			mt.mount(mnt{dest: v[1], src: v[0], bind: true, ro: a == "--ro-bind"})
		case "--tmpfs", "--proc", "--dev":
			v, err := need(1)
			if err != nil {
				return nil, err
			}
			mt.mount(mnt{dest: v[0]})
		case "--symlink":
			v, err := need(2)
			if err != nil {
				return nil, err
			}
			mt.mount(mnt{dest: v[1]})
		case "--remount-ro":
			v, err := need(1)
			if err != nil {
				return nil, err
			}
			found := false
			for j := len(mt.ms) - 1; j >= 0; j-- {
				if mt.ms[j].dest == v[0] {
					mt.ms[j].ro, found = true, true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("--remount-ro %s: not a mount point", v[0])
			}
		default:
			return nil, fmt.Errorf("unknown bwrap argument %q", a)
		}
	}
	return mt, nil
}

// ociTable builds the mount table of OCI mounts over an image root.
func ociTable(ms []specs.Mount) (*mountTable, error) {
	mt := &mountTable{ms: []mnt{{dest: "/"}}}
	last := -1
	for _, m := range ms {
		if d := abspath.Depth(m.Destination); d < last {
			return nil, fmt.Errorf("mount %s out of depth order", m.Destination)
		} else {
			last = d
		}
		switch m.Type {
		case "bind":
			mt.mount(mnt{dest: m.Destination, src: m.Source, bind: true, ro: slices.Contains(m.Options, "ro")})
		case "tmpfs":
			mt.mount(mnt{dest: m.Destination})
		default:
			return nil, fmt.Errorf("unknown mount type %q", m.Type)
		}
	}
	return mt, nil
}

// landlockModel evaluates one Landlock layer: the rights on a path are
// the union of the rights of the rules on it (file rules) or on it and its
// ancestors (directory rules); rights the layer does not handle are
// always allowed.
type landlockModel struct {
	rs *LandlockRuleset
	// ignoreTruncate leaves truncate out: below ABI 3 it is not
	// restricted, which the fidelity report declares.
	ignoreTruncate bool
}

func (m landlockModel) rights(p string, dirOnly bool) landlock.AccessFSSet {
	acc := ^m.rs.HandledFS
	for _, r := range m.rs.FS {
		if r.Dir && abspath.Within(p, r.Path) || !r.Dir && !dirOnly && p == r.Path {
			acc |= r.Access
		}
	}
	return acc
}

// read reports whether the sandbox can read p (a file's content or a
// directory's listing).
func (m landlockModel) read(p string, dir bool) bool {
	if dir {
		return m.rights(p, true)&ll.AccessFSReadDir != 0
	}
	return m.rights(p, false)&ll.AccessFSReadFile != 0
}

// write reports whether the sandbox can modify p: write or truncate an
// existing file, remove or rename an existing entry, create a new one.
func (m landlockModel) write(p string, exists, dir bool) bool {
	par := m.rights(abspath.Parent(p), true)
	if !exists {
		return par&(landlockCreate) != 0
	}
	if dir {
		return par&ll.AccessFSRemoveDir != 0
	}
	w := ll.AccessFSWriteFile | ll.AccessFSTruncate
	if m.ignoreTruncate {
		w = ll.AccessFSWriteFile
	}
	return m.rights(p, false)&landlock.AccessFSSet(w) != 0 || par&ll.AccessFSRemoveFile != 0
}
