package workspace

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cordon-sandbox/cordon/policy"
)

// ReadResult is what ReadText returns.
type ReadResult struct {
	// Path is root-relative inside the root, absolute outside.
	Path string `json:"path"`
	// Content holds lines StartLine..EndLine, line endings included.
	Content string `json:"content"`
	// StartLine and EndLine are 1-based and inclusive (both 0 for an
	// empty file). EndLine is the last line Content includes, wholly or
	// in part.
	StartLine int `json:"start_line"`
	EndLine   int `json:"end_line"`
	// TotalLines is the file's line count (of the examined prefix when
	// Partial).
	TotalLines int `json:"total_lines"`
	// Truncated is set when Content stops before the requested end: it
	// was clipped at MaxFileReadChars, or the file is Partial.
	Truncated bool `json:"truncated"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// Partial is set when the file is larger than MaxFileReadBytes: only
	// the lines within its first MaxFileReadBytes bytes were examined.
	Partial bool `json:"partial,omitempty"`
}

// Write actions.
const (
	ActionCreated   = "created"
	ActionUpdated   = "updated"
	ActionUnchanged = "unchanged"
)

// WriteResult is what WriteText returns.
type WriteResult struct {
	Path string `json:"path"`
	// Action is ActionCreated, ActionUpdated or ActionUnchanged.
	Action string `json:"action"`
	Bytes  int    `json:"bytes"`
}

// EditResult is what EditText returns.
type EditResult struct {
	Path string `json:"path"`
	// Replacements is the number of occurrences replaced.
	Replacements int `json:"replacements"`
	// FirstLine is the line of the first replacement in the new content.
	FirstLine int `json:"first_line"`
}

// testHookBeforeCommit, when set, runs after a write's data reached the
// temporary file and before it is synced and renamed over the target; an
// error aborts the write there (as a failing fsync would).
var testHookBeforeCommit func(tmpPath string) error

// ReadText returns lines start..end (1-based, inclusive; 0 for start means
// 1, 0 for end means the last line) of a text file, after the policy's read
// decision. It refuses binary files (a NUL byte) and invalid UTF-8, returns
// at most MaxFileReadChars characters (Truncated set) and reads a file
// larger than MaxFileReadBytes through a prefix of that size (Partial set).
func (s *Session) ReadText(ctx context.Context, path string, start, end int) (*ReadResult, error) {
	if err := s.check("ReadText"); err != nil {
		return nil, err
	}
	if start < 0 {
		return nil, &ArgumentError{Arg: "start_line", Value: itoa(start), Reason: "lines are numbered from 1"}
	}
	if end < 0 || (end != 0 && end < start) {
		return nil, &ArgumentError{Arg: "end_line", Value: itoa(end), Reason: "must be 0 (to the end) or at least start_line"}
	}
	v, err := s.authorizePath(ctx, "read_file", path, policy.Read)
	if err != nil {
		return nil, err
	}
	f, err := openFile(v.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := fstat(f)
	if err != nil {
		return nil, err
	}
	if !st.mode.IsRegular() {
		return nil, &NotRegularError{Path: v.Path, Kind: kindOf(st.mode)}
	}
	if err := s.linkDenied(ctx, "read_file", v.Path, st); err != nil {
		return nil, err
	}
	max := s.ws.limits.MaxFileReadBytes
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: v.Path, Err: err}
	}
	partial := int64(len(data)) > max
	if partial {
		data = data[:max]
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i+1]
		} else {
			data = trimPartialRune(data)
		}
	}
	if err := checkText(v.Path, data); err != nil {
		return nil, err
	}
	res := &ReadResult{Path: display(v), Size: st.size, Partial: partial}
	if st.size < int64(len(data)) {
		res.Size = int64(len(data)) // files such as /proc entries report 0
	}
	selectLines(res, data, start, end, s.ws.limits.MaxFileReadChars)
	if res.StartLine == -1 {
		return nil, &ArgumentError{Arg: "start_line", Value: itoa(start), Reason: "past the end of the file, which has " + itoa(res.TotalLines) + " lines"}
	}
	if partial && (end == 0 || end > res.TotalLines) {
		res.Truncated = true
	}
	return res, nil
}

// selectLines fills res with lines start..end of data, clipped to maxChars
// runes. It sets StartLine to -1 when start is past the end.
func selectLines(res *ReadResult, data []byte, start, end, maxChars int) {
	total := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		total++
	}
	res.TotalLines = total
	if start == 0 {
		start = 1
	}
	if total == 0 {
		if start > 1 {
			res.StartLine = -1
		}
		return
	}
	if start > total {
		res.StartLine = -1
		return
	}
	if end == 0 || end > total {
		end = total
	}
	// Byte offsets of the start of line start and of line end+1.
	off, line := 0, 1
	startOff, endOff := 0, len(data)
	for line <= end {
		if line == start {
			startOff = off
		}
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		line++
	}
	if line > end {
		endOff = off
	}
	sel := data[startOff:endOff]
	res.StartLine, res.EndLine = start, end
	if utf8.RuneCount(sel) <= maxChars {
		res.Content = string(sel)
		return
	}
	res.Truncated = true
	n, chars := 0, 0
	res.EndLine = start - 1
	for n < len(sel) {
		i := bytes.IndexByte(sel[n:], '\n')
		next := len(sel)
		if i >= 0 {
			next = n + i + 1
		}
		c := utf8.RuneCount(sel[n:next])
		if chars+c > maxChars {
			if res.EndLine < start { // not even one whole line fits: clip it
				n = n + runePrefix(sel[n:next], maxChars-chars)
				res.EndLine = start
			}
			break
		}
		chars += c
		n = next
		res.EndLine++
	}
	res.Content = string(sel[:n])
}

// runePrefix returns the byte length of the first n runes of b.
func runePrefix(b []byte, n int) int {
	off := 0
	for i := 0; i < n && off < len(b); i++ {
		_, size := utf8.DecodeRune(b[off:])
		off += size
	}
	return off
}

// trimPartialRune drops an incomplete UTF-8 sequence cut off at the end.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// checkText refuses data with a NUL byte or invalid UTF-8.
func checkText(path string, data []byte) error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return &NotTextError{Path: path, Offset: int64(i), Reason: "binary (NUL byte)"}
	}
	if utf8.Valid(data) {
		return nil
	}
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			return &NotTextError{Path: path, Offset: int64(off), Reason: "not valid UTF-8"}
		}
		off += size
	}
	return nil
}

// WriteText writes content to path after the policy's write decision,
// atomically: the data goes to a temporary file in the same directory,
// which is synced and renamed over the target, so readers see the old or
// the new content and a crash never truncates the original. An existing
// file keeps its mode (and, where permitted, its owner); a new file gets
// 0666 minus the umask, and missing parent directories are created. With
// createOnly an existing file is an *fs.PathError wrapping fs.ErrExist.
// Content equal to the file's leaves it untouched (ActionUnchanged).
func (s *Session) WriteText(ctx context.Context, path, content string, createOnly bool) (*WriteResult, error) {
	if err := s.check("WriteText"); err != nil {
		return nil, err
	}
	v, err := s.authorizePath(ctx, "write_file", path, policy.Write)
	if err != nil {
		return nil, err
	}
	dir, name := filepath.Split(v.Path)
	if name == "" {
		return nil, &NotRegularError{Path: v.Path, Kind: "directory"}
	}
	defer s.ws.locks.lock(v.Path)()
	dh, err := mkdirAll(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	defer dh.Close()
	action, err := writeFile(dh, name, []byte(content), createOnly, nil)
	if err != nil {
		return nil, err
	}
	s.ws.log.Debug("write_file", "path", v.Path, "action", action, "bytes", len(content))
	return &WriteResult{Path: display(v), Action: action, Bytes: len(content)}, nil
}

// mkdirAll opens the directory abs, creating it and its missing parents
// (0777 before the umask) without following links.
func mkdirAll(abs string) (*dirHandle, error) {
	dh, err := openDir(abs)
	if err == nil || !isNotExist(err) {
		return dh, err
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return nil, err
	}
	ph, perr := mkdirAll(parent)
	if perr != nil {
		return nil, perr
	}
	defer ph.Close()
	base := filepath.Base(abs)
	if err := ph.mkdir(base); err != nil {
		return nil, err
	}
	return ph.openChildDir(base)
}

// writeFile atomically replaces (or creates) name in dh with data. When
// expect is set (EditText), the file must still be the one that was read.
func writeFile(dh *dirHandle, name string, data []byte, createOnly bool, expect *statInfo) (string, error) {
	target := dh.child(name)
	st, err := dh.lstat(name)
	exists := err == nil
	if err != nil && !isNotExist(err) {
		return "", err
	}
	if exists {
		switch {
		case st.mode&fs.ModeSymlink != 0:
			return "", &PathChangedError{Path: target, Reason: "the file was replaced by a symbolic link after the policy decision"}
		case !st.mode.IsRegular():
			return "", &NotRegularError{Path: target, Kind: kindOf(st.mode)}
		case createOnly:
			return "", &fs.PathError{Op: "create", Path: target, Err: fs.ErrExist}
		case expect != nil && (st.dev != expect.dev || st.ino != expect.ino):
			return "", &ConflictError{Path: target}
		case expect == nil && st.size == int64(len(data)):
			if same, err := sameContent(dh, name, st, data); err != nil {
				return "", err
			} else if same {
				return ActionUnchanged, nil
			}
		}
	} else if expect != nil {
		return "", &ConflictError{Path: target}
	}
	tmp, tmpName, err := dh.createTemp(name, exists)
	if err != nil {
		return "", err
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			_ = dh.unlink(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return "", &fs.PathError{Op: "write", Path: tmp.Name(), Err: err}
	}
	if testHookBeforeCommit != nil {
		if err := testHookBeforeCommit(tmp.Name()); err != nil {
			return "", err
		}
	}
	if exists {
		if err := fchmod(tmp, st.mode); err != nil {
			return "", err
		}
		_ = fchown(tmp, st.uid, st.gid) // as root, or to one's own group; else the writer owns it
		// fchown clears set-id bits; restore them.
		if st.mode&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			if err := fchmod(tmp, st.mode); err != nil {
				return "", err
			}
		}
	}
	if err := tmp.Sync(); err != nil {
		return "", &fs.PathError{Op: "fsync", Path: tmp.Name(), Err: err}
	}
	if err := tmp.Close(); err != nil {
		return "", &fs.PathError{Op: "close", Path: tmp.Name(), Err: err}
	}
	if createOnly {
		err = dh.renameNoReplace(tmpName, name)
	} else {
		err = dh.rename(tmpName, name)
	}
	if err != nil {
		_ = dh.unlink(tmpName)
		committed = true // closed and removed
		return "", err
	}
	committed = true
	if err := dh.sync(); err != nil {
		return "", err
	}
	if exists {
		return ActionUpdated, nil
	}
	return ActionCreated, nil
}

// sameContent reports whether name in dh (described by st) holds data.
func sameContent(dh *dirHandle, name string, st statInfo, data []byte) (bool, error) {
	f, err := dh.openChildFile(name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	if err != nil {
		return false, &fs.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	return bytes.Equal(got, data), nil
}

// EditText replaces the exact text old with new in the file at path, after
// the policy's read and write decisions. old must occur exactly once
// unless replaceAll; zero matches are ErrNoMatch, several ErrAmbiguousMatch
// (*MatchError). In a CRLF file an old text written with LF line endings
// matches the CRLF text, and new is written with CRLF endings. The file is
// rewritten atomically, keeping its mode, and only if it was not replaced
// since it was read (*ConflictError). Files over MaxFileReadBytes are
// refused (*TooLargeError).
func (s *Session) EditText(ctx context.Context, path, old, new string, replaceAll bool) (*EditResult, error) {
	if err := s.check("EditText"); err != nil {
		return nil, err
	}
	if old == "" {
		return nil, &ArgumentError{Arg: "old_string", Reason: "must not be empty (use write_file to create a file)"}
	}
	v, err := s.authorizePath(ctx, "edit_file", path, policy.Read, policy.Write)
	if err != nil {
		return nil, err
	}
	dir, name := filepath.Split(v.Path)
	if name == "" {
		return nil, &NotRegularError{Path: v.Path, Kind: "directory"}
	}
	defer s.ws.locks.lock(v.Path)()
	dh, err := openDir(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	defer dh.Close()
	data, st, err := readForEdit(dh, name, s.ws.limits.MaxFileReadBytes)
	if err != nil {
		return nil, err
	}
	if err := s.linkDenied(ctx, "edit_file", v.Path, st); err != nil {
		return nil, err // whether old occurs would tell the denied content
	}
	content := string(data)
	o, n := old, new
	if isCRLF(content) {
		n = toCRLF(new)
	}
	count := strings.Count(content, o)
	if count == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") {
		if c := toCRLF(old); c != old {
			o, n = c, toCRLF(new)
			count = strings.Count(content, o)
		}
	}
	if count == 0 || (count > 1 && !replaceAll) {
		return nil, &MatchError{Path: display(v), Count: count}
	}
	if o == n {
		return nil, &ArgumentError{Arg: "new_string", Reason: "identical to old_string; nothing to change"}
	}
	first := strings.Index(content, o)
	var out string
	if replaceAll {
		out = strings.ReplaceAll(content, o, n)
	} else {
		out = content[:first] + n + content[first+len(o):]
		count = 1
	}
	if _, err := writeFile(dh, name, []byte(out), false, &st); err != nil {
		return nil, err
	}
	s.ws.log.Debug("edit_file", "path", v.Path, "replacements", count)
	return &EditResult{Path: display(v), Replacements: count, FirstLine: strings.Count(content[:first], "\n") + 1}, nil
}

// readForEdit reads the whole regular text file name in dh.
func readForEdit(dh *dirHandle, name string, max int64) ([]byte, statInfo, error) {
	f, err := dh.openChildFile(name)
	if err != nil {
		return nil, statInfo{}, err
	}
	defer f.Close()
	st, err := fstat(f)
	if err != nil {
		return nil, st, err
	}
	if !st.mode.IsRegular() {
		return nil, st, &NotRegularError{Path: f.Name(), Kind: kindOf(st.mode)}
	}
	if st.size > max {
		return nil, st, &TooLargeError{Path: f.Name(), Size: st.size, Limit: max, LimitName: "MaxFileReadBytes"}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, st, &fs.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	if int64(len(data)) > max {
		return nil, st, &TooLargeError{Path: f.Name(), Size: int64(len(data)), Limit: max, LimitName: "MaxFileReadBytes"}
	}
	return data, st, checkText(f.Name(), data)
}

// isCRLF reports whether s uses CRLF line endings throughout.
func isCRLF(s string) bool {
	crlf := strings.Count(s, "\r\n")
	return crlf > 0 && crlf == strings.Count(s, "\n")
}

// toCRLF converts every line ending of s to CRLF.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

func itoa(i int) string { return strconv.Itoa(i) }
