package scan

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/abspath"
)

// Pattern is one pattern to search for. Its functions must be safe for
// concurrent use and must not touch the file system.
//
// Every pattern form cordon has matches a path's whole subtree, so once a
// directory matches a pattern the search stops looking below it for that
// pattern (it goes on for the others).
type Pattern struct {
	// Key identifies what the pattern matches, for Cache: two patterns with
	// equal non-empty keys must match exactly the same paths. For a
	// *policy.Pattern, its kind, String() and Base() identify it. An empty
	// Key disables the per-directory match cache for the request (the
	// directory listings are still cached).
	Key string
	// Match reports whether the path matches: abs is absolute and clean,
	// rel is the path relative to Request.Root ("." for the root itself)
	// when inside is true, "" otherwise. Required.
	Match func(abs, rel string, inside bool) bool
	// MayMatchBelow reports whether anything at or below the directory abs
	// can match; false prunes the search for this pattern. Nil means
	// always true.
	MayMatchBelow func(abs, rel string, inside bool) bool
	// Name, set for bare-name patterns only, reports whether one path
	// segment matches. A bare-name pattern must match a path exactly when
	// some segment of it (of rel when inside, of abs otherwise) matches
	// Name. The search then tests each new segment once with Name instead
	// of calling Match on every path.
	Name func(segment string) bool
	// Socket makes the pattern match exactly the Unix sockets (entries
	// of TypeSocket) in the searched trees, whatever their names; Match
	// must still be set and should return false.
	Socket bool
	// Inode, when set, makes the pattern match exactly the entries that
	// are not directories and whose inode number (from the directory
	// listing) it accepts: the other names of a hard-linked file. Match
	// must still be set and should return false. Linux only: elsewhere
	// listings carry no inode numbers and nothing matches.
	Inode func(ino uint64) bool
	// Private makes the pattern match exactly the entries whose
	// permission bits keep them from other users: any entry but a
	// symlink that others may not read (mode&0o004 == 0), and a
	// directory others may not enter (mode&0o001 == 0). A request with a
	// Private pattern reads the mode of every entry (one fstatat each);
	// Match must still be set and should return false.
	Private bool
}

// Request describes one search.
type Request struct {
	// Root is the workspace root: absolute. Paths at or below it are
	// "inside" and matched on their root-relative path. Empty means no
	// workspace root (every path is outside).
	Root string
	// Roots are further trees to search (the home directory, explicit
	// grants): absolute. A root at or below Root or below another root is
	// covered by that one; when Root lies below one of them, that tree is
	// searched except for Root's subtree, which is searched as inside.
	Roots []string
	// Patterns are the patterns to find.
	Patterns []Pattern
	// Limits bound the search.
	Limits Limits
	// Workers is the number of directories read in parallel; 0 means
	// DefaultWorkers().
	Workers int
}

// Limits bound a search. A search that would exceed one fails with a
// *LimitError: it never returns a partial result.
type Limits struct {
	// MaxEntries is the most directory entries examined (cached or read);
	// 0 means DefaultMaxEntries.
	MaxEntries int
	// Timeout is the longest a search may take; 0 means DefaultTimeout.
	// A context deadline applies as well.
	Timeout time.Duration
}

// Defaults for Limits.
const (
	DefaultMaxEntries = 1_000_000
	DefaultTimeout    = 10 * time.Second
)

// DefaultWorkers returns the default parallelism: twice GOMAXPROCS, so a
// worker blocked in a system call does not idle a CPU.
func DefaultWorkers() int { return 2 * runtime.GOMAXPROCS(0) }

// Type is the type of a matched file system entry, as read from its
// directory (symlinks are never followed).
type Type uint8

// Entry types.
const (
	TypeFile Type = iota
	TypeDir
	TypeSymlink
	// TypeOther is a device or FIFO.
	TypeOther
	// TypeSocket is a Unix socket.
	TypeSocket
)

// String returns "file", "dir", "symlink" or "other".
func (t Type) String() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "dir"
	case TypeSymlink:
		return "symlink"
	case TypeOther:
		return "other"
	case TypeSocket:
		return "socket"
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Match is one existing path that matches at least one pattern.
type Match struct {
	// Path is absolute. For a symlink it is the link itself.
	Path string
	// Rel is the path relative to Request.Root when Inside, "" otherwise.
	Rel    string
	Inside bool
	Type   Type
	// Patterns are the indexes in Request.Patterns of the patterns that
	// match Path and none of its ancestors within the searched tree, in
	// increasing order.
	Patterns []int
}

// Unreadable is a directory whose entries could not be listed (permission
// denied, I/O error). Whether anything below it matches is unknown; the
// directory itself was matched like any entry.
type Unreadable struct {
	Path string
	Err  error
}

// Result is the outcome of a complete search. A Result returned by Cache may
// be shared with later calls: treat it as read-only.
type Result struct {
	// Matches are sorted by Path (bytewise).
	Matches []Match
	// Unreadable lists the directories that could not be listed, sorted by
	// Path.
	Unreadable []Unreadable
	// Entries and Dirs count what the search examined.
	Entries int
	Dirs    int
}

// ErrLimit is wrapped by *LimitError.
var ErrLimit = errors.New("mask search limit exceeded")

// Limit names a bound of Limits.
type Limit string

// Limits a LimitError can name.
const (
	LimitEntries Limit = "entries"
	LimitTime    Limit = "time"
)

// LimitError reports a search that stopped because it exceeded a bound.
// The search is incomplete, so no result is returned. It wraps ErrLimit.
type LimitError struct {
	Limit Limit
	// Max is the bound: a count for LimitEntries, a time.Duration for
	// LimitTime.
	Max int64
	// Roots are the trees being searched.
	Roots []string
}

func (e *LimitError) Error() string {
	max := fmt.Sprint(e.Max)
	if e.Limit == LimitTime {
		max = time.Duration(e.Max).String()
	}
	return fmt.Sprintf("searching %s for masks: more than %s %s: %v", strings.Join(e.Roots, ", "), max, e.Limit, ErrLimit)
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// ErrInvalid is wrapped by *RequestError.
var ErrInvalid = errors.New("invalid mask search request")

// RequestError reports an unusable Request field.
type RequestError struct {
	// Field is "Root", "Roots[2]", "Patterns[1]".
	Field string
	Value string
	// Problem says what is wrong.
	Problem string
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("%v: %s %q: %s", ErrInvalid, e.Field, e.Value, e.Problem)
}

// Unwrap returns ErrInvalid.
func (e *RequestError) Unwrap() error { return ErrInvalid }

// Search performs one uncached search. See Cache for repeated searches.
func Search(ctx context.Context, req *Request) (*Result, error) {
	s, err := newSearch(ctx, req, nil)
	if err != nil {
		return nil, err
	}
	return s.run()
}

// validate checks req and returns the walk roots: cleaned, resolved,
// deduplicated, each with the roots nested in it that it must skip.
func validate(req *Request) (ws string, roots []string, err error) {
	for i, p := range req.Patterns {
		if p.Match == nil {
			return "", nil, &RequestError{Field: fmt.Sprintf("Patterns[%d]", i), Value: p.Key, Problem: "Match is nil"}
		}
	}
	if req.Limits.MaxEntries < 0 || req.Limits.Timeout < 0 || req.Workers < 0 {
		return "", nil, &RequestError{Field: "Limits", Value: fmt.Sprint(req.Limits), Problem: "negative"}
	}
	resolve := func(field, p string) (string, error) {
		if strings.IndexByte(p, 0) >= 0 {
			return "", &RequestError{Field: field, Value: p, Problem: "contains NUL"}
		}
		if !filepath.IsAbs(p) {
			return "", &RequestError{Field: field, Value: p, Problem: "not absolute"}
		}
		p = filepath.Clean(p)
		// Roots are meant to be resolved already; resolving again makes a
		// root that is (or is below) a symlink safe to walk without
		// following links. A missing root has nothing to find.
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return p, nil
	}
	if req.Root != "" {
		if ws, err = resolve("Root", req.Root); err != nil {
			return "", nil, err
		}
		roots = append(roots, ws)
	}
	for i, r := range req.Roots {
		r, err := resolve(fmt.Sprintf("Roots[%d]", i), r)
		if err != nil {
			return "", nil, err
		}
		roots = append(roots, r)
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	// Drop roots covered by another one, except Root, which is searched
	// as inside even when it lies below another root.
	out := roots[:0]
	for _, r := range roots {
		covered := false
		for _, o := range roots {
			if o != r && r != ws && abspath.Within(r, o) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, r)
		}
	}
	return ws, out, nil
}
