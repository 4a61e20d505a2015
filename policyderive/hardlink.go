package policyderive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive/internal/scan"
)

// maxLinkWalk bounds the entries examined below masked directories when
// looking for hard-linked files in them.
const maxLinkWalk = 20_000

// FileID identifies a file by its device and inode.
type FileID struct{ Dev, Ino uint64 }

// linkedFile is a masked file with more than one name.
type linkedFile struct {
	id   FileID
	path string
	m    Mask
}

// hardLinks masks every other name, in the searched trees, of a masked
// file that has more than one link: a grant of another name would be a
// grant of the inode (Landlock rules attach to inodes; mounts and
// seatbelt rules to the name used), so the file's content, or a secret
// the user writes into it in place later, could be read or written
// through the name the policy does not deny.
func (dv *derivation) hardLinks() error {
	if !inodesListed {
		return nil
	}
	files, over := dv.linkedMasked()
	if len(over) > 0 {
		dv.notes = append(dv.notes, Element{Class: Looser, Subject: "hard links", Control: policy.ControlFSRead,
			Detail: fmt.Sprintf("files below %s were not all examined for other names (more than %d entries)", strings.Join(over, ", "), maxLinkWalk),
			Reason: "the search for hard links below masked directories is bounded",
			Remedy: "keep denied directories small, or opt into best effort"})
	}
	if len(files) == 0 {
		return nil
	}
	others, err := dv.d.otherNames(dv.ctx, dv.root, dv.scope[1:], files, dv.d.opts)
	if err != nil {
		var lerr *scan.LimitError
		if errors.As(err, &lerr) {
			dv.notes = append(dv.notes, Element{Class: Looser, Subject: "hard links", Control: policy.ControlFSRead,
				Detail: fmt.Sprintf("the other names of %d denied or protected files with several links are not masked: the search exceeded its %s limit", len(files), lerr.Limit),
				Reason: "a partial search would be unsound, so none is used",
				Remedy: "narrow the grants, raise Options.MaxEntries or Timeout, or opt into best effort"})
			return nil
		}
		return err
	}
	for _, o := range others {
		if _, ok := dv.masks[o.path]; ok {
			continue
		}
		m := o.m
		dv.addMask(Mask{Path: o.path, Kind: m.Kind, Exists: true, Rule: m.Rule, Reason: "hard link", For: o.of})
	}
	return nil
}

// linkedMasked returns the masked files with more than one link: the
// masked files themselves and the regular files below masked
// directories, examined up to maxLinkWalk entries in all; over lists the
// masked directories whose files were not all examined.
func (dv *derivation) linkedMasked() (files []linkedFile, over []string) {
	seen := map[FileID]bool{}
	budget := maxLinkWalk
	add := func(p string, fi fs.FileInfo, m Mask) {
		id, nlink, ok := fileID(fi)
		if !ok || nlink < 2 || !fi.Mode().IsRegular() || seen[id] {
			return
		}
		seen[id] = true
		files = append(files, linkedFile{id: id, path: p, m: m})
	}
	paths := make([]string, 0, len(dv.masks))
	for p := range dv.masks {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		m := *dv.masks[p]
		if !m.Exists {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			add(p, fi, m)
			continue
		}
		// Below a masked directory: bounded, and never silently.
		err = walkFiles(p, &budget, func(q string, fi fs.FileInfo) { add(q, fi, m) })
		if errors.Is(err, errLinkBudget) {
			over = append(over, p)
		}
	}
	return files, over
}

var errLinkBudget = errors.New("hard link search budget exhausted")

// walkFiles calls fn for every regular file below dir (symlinks are not
// followed), spending one unit of budget per entry.
func walkFiles(dir string, budget *int, fn func(string, fs.FileInfo)) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // unreadable: nothing the command can reach through it either
	}
	for _, e := range ents {
		if *budget--; *budget < 0 {
			return errLinkBudget
		}
		p := abspath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if err := walkFiles(p, budget, fn); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if fi, err := e.Info(); err == nil {
				fn(p, fi)
			}
		}
	}
	return nil
}

// otherName is a further name of a linked file.
type otherName struct {
	path, of string
	id       FileID
	m        Mask
}

// otherNames searches root and roots for the names of files that are not
// the ones given.
func (d *Deriver) otherNames(ctx context.Context, root string, roots []string, files []linkedFile, opts Options) ([]otherName, error) {
	byIno := map[uint64]bool{}
	byID := map[FileID]linkedFile{}
	inos := make([]string, 0, len(files))
	for _, f := range files {
		byIno[f.id.Ino] = true
		byID[f.id] = f
		inos = append(inos, strconv.FormatUint(f.id.Ino, 10))
	}
	slices.Sort(inos)
	req := &scan.Request{
		Root:  root,
		Roots: roots,
		Patterns: []scan.Pattern{{
			Key:   "inodes " + strings.Join(inos, ","),
			Match: func(string, string, bool) bool { return false },
			Inode: func(ino uint64) bool { return byIno[ino] },
		}},
		Limits: scan.Limits{MaxEntries: opts.MaxEntries, Timeout: opts.Timeout},
	}
	var res *scan.Result
	var err error
	if d != nil && d.cache != nil {
		res, err = d.cache.Search(ctx, req)
	} else {
		res, err = scan.Search(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	var out []otherName
	for _, m := range res.Matches {
		fi, err := os.Lstat(m.Path)
		if err != nil {
			continue
		}
		id, _, ok := fileID(fi)
		if !ok {
			continue
		}
		f, ok := byID[id]
		if !ok || f.path == m.Path {
			continue
		}
		out = append(out, otherName{path: m.Path, of: f.path, id: id, m: f.m})
	}
	return out, nil
}

// OtherNames returns the names, in root and the trees roots, of the files
// ids: the names a hard-linked file has there, found through the inode
// numbers of directory listings and checked with lstat. The search has
// the limits of opts (a *LimitError-wrapping error past them) and no
// cache. Elsewhere than on Linux it returns ErrNoInodes.
func OtherNames(ctx context.Context, root string, roots []string, ids []FileID, opts Options) (map[FileID][]string, error) {
	if !inodesListed {
		return nil, ErrNoInodes
	}
	files := make([]linkedFile, len(ids))
	for i, id := range ids {
		files[i] = linkedFile{id: id}
	}
	found, err := (*Deriver)(nil).otherNames(ctx, root, roots, files, opts)
	if err != nil {
		return nil, err
	}
	out := map[FileID][]string{}
	for _, o := range found {
		out[o.id] = append(out[o.id], o.path)
	}
	return out, nil
}

// ErrNoInodes is returned by OtherNames where directory listings carry no
// inode numbers.
var ErrNoInodes = errors.New("hard links cannot be searched for on this platform")
