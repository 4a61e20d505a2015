package workspace

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/policy"
)

// FileEntry is one entry of a listing.
type FileEntry struct {
	// Path is root-relative inside the root, absolute outside.
	Path string `json:"path"`
	// Type is "file", "directory", "symlink", "fifo", "socket", "device"
	// or "other".
	Type    string    `json:"type"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	// Target is a symbolic link's target as stored (not resolved).
	Target string `json:"target,omitempty"`
}

// ListResult is what ListFiles returns.
type ListResult struct {
	Path    string      `json:"path"`
	Entries []FileEntry `json:"entries"`
	// Truncated is set when more entries exist than the limit.
	Truncated bool `json:"truncated"`
}

// ListFiles lists the directory at path ("" for the root) after the
// policy's read decision. Without glob it lists the directory's own
// entries; with one it walks the tree and lists the entries that match (a
// glob without "/" matches names at any depth, "src/**/*.go" paths relative
// to the directory). Hidden entries are skipped unless includeHidden.
// Entries the policy denies reading are omitted, as are links whose
// target is denied; directories that need approval are listed but not
// entered. At most limit entries (0 or more than MaxListResults means
// MaxListResults) are returned, in lexical order; Truncated says whether
// there were more. Links are never followed.
func (s *Session) ListFiles(ctx context.Context, path, glob string, includeHidden bool, limit int) (*ListResult, error) {
	if err := s.check("ListFiles"); err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, &ArgumentError{Arg: "limit", Value: itoa(limit), Reason: "cannot be negative"}
	}
	if limit == 0 || limit > s.ws.limits.MaxListResults {
		limit = s.ws.limits.MaxListResults
	}
	match, err := globMatcher(glob)
	if err != nil {
		return nil, err
	}
	if path == "" {
		path = "."
	}
	v, err := s.authorizePath(ctx, "list_files", path, policy.Read)
	if err != nil {
		return nil, err
	}
	dh, err := openDir(v.Path)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, &ArgumentError{Arg: "path", Value: display(v), Reason: "not a directory (use read_file for a file)"}
		}
		return nil, err
	}
	defer dh.Close()
	approved := ""
	if v.Decision == policy.Ask {
		approved = v.Rule
	}
	res := &ListResult{Path: display(v), Entries: []FileEntry{}}
	recursive := glob != ""
	_, err = s.walk(ctx, dh, "", includeHidden, func(d *dirHandle, e fs.DirEntry, abs, rel string, ev *policy.Verdict) (bool, bool) {
		if ev.Decision == policy.Deny {
			return false, false
		}
		if match(e.Name(), rel) {
			fe, ok := s.entry(d, e.Name(), abs, ev)
			if ok {
				if len(res.Entries) == limit {
					res.Truncated = true
					return false, true
				}
				res.Entries = append(res.Entries, fe)
			}
		}
		return recursive && walkAllowed(ev, approved), false
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// entry builds the listing entry of name in d; false omits it (it vanished,
// or it is a link whose target the policy denies reading).
func (s *Session) entry(d *dirHandle, name, abs string, v *policy.Verdict) (FileEntry, bool) {
	st, err := d.lstat(name)
	if err != nil {
		return FileEntry{}, false
	}
	fe := FileEntry{Path: s.ws.relOrAbs(abs), Type: kindOf(st.mode), Size: st.size, ModTime: st.modTime.UTC()}
	if st.mode&fs.ModeSymlink != 0 {
		t, err := d.readlink(name)
		if err != nil {
			return FileEntry{}, false
		}
		if tv, err := s.ws.checker.DecidePathAt(d.path, t, policy.Read); err != nil || tv.Decision == policy.Deny {
			return FileEntry{}, false
		}
		fe.Target = t
	}
	return fe, true
}
