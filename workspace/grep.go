package workspace

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// GrepOptions refine Grep.
type GrepOptions struct {
	// IgnoreCase matches case-insensitively.
	IgnoreCase bool `json:"ignore_case,omitempty"`
	// IncludeHidden searches entries whose name starts with ".".
	IncludeHidden bool `json:"include_hidden,omitempty"`
	// Limit caps the matches returned in total; 0 or more than
	// MaxGrepMatches means MaxGrepMatches.
	Limit int `json:"limit,omitempty"`
	// MaxPerFile caps the matches returned per file; 0 or more than
	// MaxGrepMatches means MaxGrepMatches.
	MaxPerFile int `json:"max_per_file,omitempty"`
}

// GrepMatch is one matching line.
type GrepMatch struct {
	// Path is root-relative inside the root, absolute outside.
	Path string `json:"path"`
	Line int    `json:"line"`
	// Text is the line without its line ending, clipped to
	// MaxGrepLineChars characters (Clipped set), invalid UTF-8 replaced.
	Text    string `json:"text"`
	Clipped bool   `json:"clipped,omitempty"`
}

// GrepResult is what Grep returns.
type GrepResult struct {
	Matches []GrepMatch `json:"matches"`
	// Truncated is set when the total cap stopped the search.
	Truncated bool `json:"truncated"`
	// FilesSearched counts the files read; FilesMatched those with a match.
	FilesSearched int `json:"files_searched"`
	FilesMatched  int `json:"files_matched"`
	// FilesCapped lists files whose matches were cut at the per-file cap.
	FilesCapped []string `json:"files_capped,omitempty"`
	// Skipped files: over MaxGrepFileBytes, binary (a NUL byte in the
	// first 8000 bytes), and denied or needing approval.
	SkippedLarge  int `json:"skipped_large,omitempty"`
	SkippedBinary int `json:"skipped_binary,omitempty"`
	SkippedDenied int `json:"skipped_denied,omitempty"`
}

// binarySniff is how many leading bytes Grep checks for a NUL.
const binarySniff = 8000

// grepChunk is how many files are searched in parallel before their
// results are merged in order.
const grepChunk = 256

// Grep searches the file or tree at path ("" for the root) for lines
// matching the regular expression pattern (RE2 syntax, per line), after
// the policy's read decision on path. glob filters the files (as in
// ListFiles). Files the policy denies, or that need approval, are
// skipped, as are links, files over MaxGrepFileBytes and binary files; the
// result counts them. Matches come in path and line order, at most
// opts.MaxPerFile per file and opts.Limit in total.
func (s *Session) Grep(ctx context.Context, pattern, path, glob string, opts GrepOptions) (*GrepResult, error) {
	if err := s.check("Grep"); err != nil {
		return nil, err
	}
	l := s.ws.limits
	if opts.Limit < 0 || opts.MaxPerFile < 0 {
		return nil, &ArgumentError{Arg: "limit", Value: itoa(min(opts.Limit, opts.MaxPerFile)), Reason: "cannot be negative"}
	}
	if opts.Limit == 0 || opts.Limit > l.MaxGrepMatches {
		opts.Limit = l.MaxGrepMatches
	}
	if opts.MaxPerFile == 0 || opts.MaxPerFile > l.MaxGrepMatches {
		opts.MaxPerFile = l.MaxGrepMatches
	}
	expr := pattern
	if opts.IgnoreCase {
		expr = "(?i)" + expr
	}
	lineRE, err := regexp.Compile(expr)
	if err != nil {
		return nil, &ArgumentError{Arg: "pattern", Value: pattern, Reason: "invalid regular expression (RE2 syntax)", Err: err}
	}
	bufRE := regexp.MustCompile("(?m)" + lineRE.String())
	match, err := globMatcher(glob)
	if err != nil {
		return nil, err
	}
	if path == "" {
		path = "."
	}
	v, err := s.authorizePath(ctx, "grep_files", path, policy.Read)
	if err != nil {
		return nil, err
	}
	g := &grepper{s: s, line: lineRE, buf: bufRE, perFile: opts.MaxPerFile, maxBytes: l.MaxGrepFileBytes, maxLine: l.MaxGrepLineChars}
	res := &GrepResult{Matches: []GrepMatch{}}

	var files []grepFile
	f, err := openFile(v.Path)
	if err != nil {
		return nil, err
	}
	st, err := fstat(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	if st.mode.IsDir() {
		dh, err := openDir(v.Path)
		if err != nil {
			return nil, err
		}
		approved := ""
		if v.Decision == policy.Ask {
			approved = v.Rule
		}
		_, err = s.walk(ctx, dh, "", opts.IncludeHidden, func(d *dirHandle, e fs.DirEntry, abs, rel string, ev *policy.Verdict) (bool, bool) {
			if !walkAllowed(ev, approved) {
				if e.Type().IsRegular() && match(e.Name(), rel) {
					res.SkippedDenied++
				}
				return false, false
			}
			if e.IsDir() {
				return true, false
			}
			if e.Type().IsRegular() && match(e.Name(), rel) {
				files = append(files, grepFile{dir: d.path, name: e.Name()})
			}
			return false, false
		})
		dh.Close()
		if err != nil {
			return nil, err
		}
	} else {
		dir, name := filepath.Split(v.Path)
		files = []grepFile{{dir: filepath.Clean(dir), name: name}}
	}

	workers := runtime.GOMAXPROCS(0)
	results := make([]fileResult, grepChunk)
	for startIdx := 0; startIdx < len(files) && !res.Truncated; startIdx += grepChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk := files[startIdx:min(startIdx+grepChunk, len(files))]
		// Open each directory of the chunk once, by its verified path;
		// the files are opened relative to it with O_NOFOLLOW.
		dirs := map[string]*dirHandle{}
		for _, gf := range chunk {
			if _, ok := dirs[gf.dir]; !ok {
				dh, err := openDir(gf.dir)
				if err != nil {
					dh = nil // swapped or gone: its files are skipped
				}
				dirs[gf.dir] = dh
			}
		}
		var wg sync.WaitGroup
		next := make(chan int, len(chunk))
		for i := range chunk {
			next <- i
		}
		close(next)
		for range min(workers, len(chunk)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					results[i] = g.file(dirs[chunk[i].dir], chunk[i].name)
				}
			}()
		}
		wg.Wait()
		for _, dh := range dirs {
			if dh != nil {
				dh.Close()
			}
		}
		if err := s.dropLinkedDenied(ctx, results[:len(chunk)]); err != nil {
			return nil, err
		}
		for i := range chunk {
			r := &results[i]
			switch r.skip {
			case skipLarge:
				res.SkippedLarge++
				continue
			case skipBinary:
				res.SkippedBinary++
				continue
			case skipOther:
				continue
			case skipDenied:
				res.SkippedDenied++
				continue
			}
			res.FilesSearched++
			if len(r.matches) == 0 {
				continue
			}
			res.FilesMatched++
			disp := s.ws.relOrAbs(filepath.Join(chunk[i].dir, chunk[i].name))
			if r.capped {
				res.FilesCapped = append(res.FilesCapped, disp)
			}
			for _, m := range r.matches {
				if len(res.Matches) == opts.Limit {
					res.Truncated = true
					break
				}
				m.Path = disp
				res.Matches = append(res.Matches, m)
			}
			if res.Truncated {
				break
			}
		}
		clear(results)
	}
	return res, nil
}

type skipReason uint8

const (
	skipNone skipReason = iota
	skipLarge
	skipBinary
	skipOther  // vanished, swapped, unreadable or not a regular file
	skipDenied // another name of the file (a hard link) is denied
)

// dropLinkedDenied marks the results of files with several names, one of
// them denied, as skipped: one search of the root per chunk, and only
// when a linked file matched.
func (s *Session) dropLinkedDenied(ctx context.Context, results []fileResult) error {
	var ids []policyderive.FileID
	for _, r := range results {
		if r.linked && r.skip == skipNone && len(r.matches) > 0 {
			ids = append(ids, r.id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	denied, err := s.linkedDenials(ctx, ids)
	if err != nil {
		return fmt.Errorf("grep_files: checking the other names of %d hard-linked files: %w", len(ids), err)
	}
	for i := range results {
		if r := &results[i]; r.linked && denied[r.id] != nil {
			r.skip, r.matches = skipDenied, nil
		}
	}
	return nil
}

// grepFile is a file to search: a name in a directory.
type grepFile struct {
	dir, name string
}

type fileResult struct {
	skip    skipReason
	matches []GrepMatch
	capped  bool
	linked  bool // the file has several names (hard links)
	id      policyderive.FileID
}

type grepper struct {
	s        *Session
	line     *regexp.Regexp
	buf      *regexp.Regexp
	perFile  int
	maxBytes int64
	maxLine  int
}

var grepBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// file searches the file name in the verified directory dh, opened
// without following a link.
func (g *grepper) file(dh *dirHandle, name string) fileResult {
	if dh == nil {
		return fileResult{skip: skipOther}
	}
	bp := grepBufs.Get().(*[]byte)
	defer grepBufs.Put(bp)
	buf, st, regular, err := dh.readChild(name, *bp, g.maxBytes)
	*bp = buf[:0]
	switch {
	case err != nil || !regular:
		return fileResult{skip: skipOther}
	case st.size > g.maxBytes || int64(len(buf)) > g.maxBytes:
		return fileResult{skip: skipLarge}
	}
	if bytes.IndexByte(buf[:min(len(buf), binarySniff)], 0) >= 0 {
		return fileResult{skip: skipBinary}
	}
	r := fileResult{linked: st.nlink > 1, id: policyderive.FileID{Dev: st.dev, Ino: st.ino}}
	lineNo, lineStart := 1, 0
	for pos := 0; pos <= len(buf); {
		loc := g.buf.FindIndex(buf[pos:])
		if loc == nil {
			break
		}
		at := pos + loc[0]
		// Advance the line count to the line holding at.
		lineNo += bytes.Count(buf[lineStart:at], []byte{'\n'})
		if i := bytes.LastIndexByte(buf[:at], '\n'); i >= 0 {
			lineStart = i + 1
		} else {
			lineStart = 0
		}
		end := len(buf)
		if i := bytes.IndexByte(buf[at:], '\n'); i >= 0 {
			end = at + i
		}
		text := buf[lineStart:end]
		if g.line.Match(text) {
			if len(r.matches) == g.perFile {
				r.capped = true
				break
			}
			r.matches = append(r.matches, g.match(lineNo, text))
		}
		if end == len(buf) {
			break
		}
		// Continue on the next line.
		pos = end + 1
		lineNo++
		lineStart = pos
	}
	return r
}

// match builds a GrepMatch from a line, clipped and made valid UTF-8.
func (g *grepper) match(line int, text []byte) GrepMatch {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	m := GrepMatch{Line: line}
	if utf8.RuneCount(text) > g.maxLine {
		text = text[:runePrefix(text, g.maxLine)]
		m.Clipped = true
	}
	m.Text = strings.ToValidUTF8(string(text), "\uFFFD")
	return m
}
