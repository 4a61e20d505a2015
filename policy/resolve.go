package policy

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
)

// maxSymlinks bounds symlink expansions during resolution, as the kernel's
// MAXSYMLINKS does.
const maxSymlinks = 40

// resolvePath resolves p realpath-style: "~" is expanded with home, a
// relative path is made absolute against base, every existing component's
// symlinks are followed and a missing tail is appended lexically. The
// result is absolute and clean.
func resolvePath(base, home, p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Path: p, Err: ErrNUL}
	}
	if p == "" {
		return "", &PathError{Path: p, Err: ErrEmptyPath}
	}
	expanded, err := expandHome(p, home)
	if err != nil {
		return "", err
	}
	if !path.IsAbs(expanded) {
		if base == "" || !path.IsAbs(base) {
			return "", &PathError{Path: p, Err: ErrRelativeBase}
		}
		expanded = base + "/" + expanded
	}
	return realpath(expanded)
}

// expandHome expands a leading "~" or "~/". "~user" is not supported.
func expandHome(p, home string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		if strings.HasPrefix(p, "~") {
			return "", &PathError{Path: p, Err: ErrTildeUser}
		}
		return p, nil
	}
	if home == "" {
		return "", &PathError{Path: p, Err: ErrNoHome}
	}
	return home + p[1:], nil
}

// realpath follows symlinks in every existing component of the absolute
// path p and appends missing components lexically. "." and ".." are
// processed physically, left to right, like the kernel does.
func realpath(p string) (string, error) {
	if r, ok := fastRealpath(p); ok {
		return r, nil
	}
	rest := p
	resolved := "/"
	links := 0
	for rest != "" {
		var comp string
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			comp, rest = rest[:i], rest[i+1:]
		} else {
			comp, rest = rest, ""
		}
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = path.Dir(resolved)
			continue
		}
		next := path.Join(resolved, comp)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			// Missing, not a directory, unreadable or not a link: take the
			// component as it is. Later components are looked up again, so
			// a ".." that climbs back into existing territory still
			// resolves links there.
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", &PathError{Path: p, Err: ErrSymlinkLoop}
		}
		target, err := os.Readlink(next)
		if err != nil {
			resolved = next
			continue
		}
		if path.IsAbs(target) {
			resolved = "/"
		}
		if rest == "" {
			rest = target
		} else {
			rest = target + "/" + rest
		}
	}
	return resolved, nil
}

// relativeTo returns p relative to root ("." for the root itself) and
// whether p lies inside root. Both must be clean absolute paths.
func relativeTo(root, p string) (string, bool) {
	if p == root {
		return ".", true
	}
	if root == "/" {
		return p[1:], true
	}
	if strings.HasPrefix(p, root) && p[len(root)] == '/' {
		return p[len(root)+1:], true
	}
	return "", false
}

// Errors wrapped by *PathError.
var (
	// ErrNUL reports a NUL byte in a path, pattern or command.
	ErrNUL = errors.New("contains a NUL byte")
	// ErrEmptyPath reports an empty path.
	ErrEmptyPath = errors.New("empty path")
	// ErrNoHome reports a "~" path when the home directory is unknown.
	ErrNoHome = errors.New("home directory unknown, cannot expand ~")
	// ErrTildeUser reports "~user", which cordon does not expand.
	ErrTildeUser = errors.New("~user is not supported; use an absolute path")
	// ErrRelativeBase reports a relative path with no absolute base.
	ErrRelativeBase = errors.New("relative path needs an absolute base directory")
	// ErrSymlinkLoop reports too many symbolic links.
	ErrSymlinkLoop = errors.New("too many levels of symbolic links")
)

// PathError reports a path that cannot be resolved.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return "path " + quote(e.Path) + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }
