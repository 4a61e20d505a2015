package policyderive

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive/internal/scan"
)

// publicTrees are the System trees the private-file search skips, each
// because its content is public by construction, not because it is
// large: the Nix store, whose paths Nix makes world-readable and
// read-only (canonicalised to 0444/0555; Nix's manual warns that anything
// in the store is readable by every user), and macOS's /System, the
// sealed, read-only system volume that is the same on every Mac of a
// release. Every other System tree is searched, /usr and /opt/homebrew
// included: /usr/local/etc and packages' own private files live there.
// The README declares the two exceptions.
var publicTrees = []string{"/nix/store", "/System"}

// pseudoTrees hold kernel objects, not files: their modes are enforced
// by the kernel per opener (/proc/self/environ is 0400 and the opener's
// own), and devices are granted one by one.
var pseudoTrees = []string{"/dev", "/proc", "/sys"}

// privateSearched selects the System trees the private-file search
// covers; tests limit it to their own trees so that golden files do not
// depend on the host's private files.
var privateSearched = func(tree string) bool { return true }

// systemCache is the process-wide cache of the private-file search. The
// System trees are the host's, the same for every Deriver, so one cache
// (one inotify watch per directory) serves them all, including the
// uncached Derive.
var systemCache = sync.OnceValue(func() *scan.Cache { return scan.NewCache(scan.Options{}) })

// privateSystem masks every file and directory in the System trees whose
// mode keeps it from other users — a file others may not read
// (mode&0o004 == 0), a directory others may not enter or list — unless
// the policy grants it by its own path. The System grant of /etc stands
// for what every user of the host may read; a root-only key
// (/etc/docker/key.json, /etc/wireguard/*) is not part of it, and a
// command running as root would otherwise read it.
func (dv *derivation) privateSystem() error {
	var roots []string
	for _, s := range dv.system {
		if abspath.WithinAny(s, pseudoTrees) || abspath.WithinAny(s, publicTrees) || !privateSearched(s) {
			continue
		}
		fi, err := os.Lstat(s)
		if err != nil {
			continue
		}
		if private(fi) {
			dv.private(s, fi.IsDir())
			continue
		}
		if fi.IsDir() {
			roots = append(roots, s)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	req := &scan.Request{
		Roots:    roots,
		Patterns: []scan.Pattern{{Key: "private", Match: func(string, string, bool) bool { return false }, Private: true}},
		Limits:   scan.Limits{MaxEntries: dv.d.opts.MaxEntries, Timeout: dv.d.opts.Timeout},
	}
	res, err := systemCache().Search(dv.ctx, req)
	if dv.searchLimited(err, "private system files", "files other users may not read are not masked", "narrow the System paths") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("searching the system paths for private files: %w", err)
	}
	for _, m := range res.Matches {
		dv.private(m.Path, m.Type == scan.TypeDir)
	}
	for _, u := range res.Unreadable {
		// What is below is unknown; the deriving user cannot read it,
		// and neither may the command.
		dv.private(u.Path, true)
	}
	return nil
}

// private masks the private System path p unless the policy grants it by
// its own path.
func (dv *derivation) private(p string, dir bool) {
	if dv.namedRead(p) {
		return
	}
	dv.addMask(Mask{Path: p, Kind: Hide, Dir: dir, Exists: true, Reason: "private system file"})
}

// namedRead reports whether the policy grants reading p by p's own path:
// a System entry, an approved grant or an allow path rule whose pattern
// is p itself.
func (dv *derivation) namedRead(p string) bool {
	if dv.systemNamed == nil {
		// The entries as the policy names them, resolved once, when the
		// first private file is found.
		dv.systemNamed = map[string]bool{}
		for _, s := range dv.p.SystemPaths() {
			if r, err := dv.c.Resolve(dv.root, s); err == nil {
				dv.systemNamed[r] = true
			}
		}
	}
	if dv.systemNamed[p] {
		return true
	}
	for _, g := range dv.grants {
		if g.Path == p {
			return true
		}
	}
	return dv.ruleNames(p, policy.Read)
}

// private reports whether fi's mode keeps it from other users.
func private(fi fs.FileInfo) bool {
	return fi.Mode()&fs.ModeSymlink == 0 && scan.PrivatePerm(fi.IsDir(), fi.Mode().Perm())
}

// PrivateSystemLinks returns the private System files of c's policy that
// have more than one name, each with its System path: the files the
// derivation masks as private (a file other users may not read, or any
// file below a directory they may not enter, that the policy does not
// name by its own path). A file tool that reads a name in the root must
// refuse one of these inodes: a hard link in the root of a root-only
// file such as /etc/docker/key.json is the same file under a name the
// policy allows. The search is the derivation's, cached for the process;
// the files below private directories are examined up to a bound. A
// search that cannot complete is an error, never a shorter answer.
// Elsewhere than on Linux it returns ErrNoInodes.
func PrivateSystemLinks(ctx context.Context, c *policy.Checker) (map[FileID]string, error) {
	if !inodesListed {
		return nil, ErrNoInodes
	}
	dv := &derivation{ctx: ctx, d: &Deriver{}, c: c, p: c.Policy(), root: c.Root(), home: c.Home(), rules: c.Rules(), masks: map[string]*Mask{}}
	if err := dv.resolveSystem(); err != nil {
		return nil, err
	}
	if err := dv.privateSystem(); err != nil {
		return nil, err
	}
	for _, n := range dv.notes {
		if n.Class == Looser {
			return nil, fmt.Errorf("%s: %s", n.Subject, n.Detail)
		}
	}
	files, over := dv.linkedMasked()
	if len(over) > 0 {
		return nil, fmt.Errorf("examining the files below the private directories %v: more than %d entries", over, maxLinkWalk)
	}
	out := make(map[FileID]string, len(files))
	for _, f := range files {
		out[f.id] = f.path
	}
	return out, nil
}
