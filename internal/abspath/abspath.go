// Package abspath has the few operations on clean absolute paths that the
// derivation, the backends and the protected-path guard all need, with
// one answer for "/": string operations, no system calls.
package abspath

import (
	"slices"
	"strings"
)

// Within reports whether p is dir or lies below it; both absolute and
// clean. Everything absolute lies within "/".
func Within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// Below reports whether p lies strictly below dir.
func Below(p, dir string) bool { return p != dir && Within(p, dir) }

// WithinAny reports whether p lies within one of dirs.
func WithinAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if Within(p, d) {
			return true
		}
	}
	return false
}

// Depth counts the components of a clean absolute path ("/" is 0).
func Depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// Parent returns the parent of a clean absolute path ("/" for "/").
func Parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// Join joins a clean absolute directory and a clean relative path (""
// and "." are dir itself).
func Join(dir, rel string) string {
	if rel == "" || rel == "." {
		return dir
	}
	if dir == "/" {
		return "/" + rel
	}
	return dir + "/" + rel
}

// Tops returns paths sorted, without duplicates and without the paths
// that lie within another of them. paths is sorted in place. (A path
// within another need not follow it directly in sorted order: "/a-b"
// sorts between "/a" and "/a/b".)
func Tops(paths []string) []string {
	slices.Sort(paths)
	var out []string
	kept := map[string]bool{}
	for _, p := range slices.Compact(paths) {
		// A path's tops are its ancestors, all sorted before it: look
		// each up (the depth of p) rather than scanning every top.
		within := false
		for a := p; ; {
			if kept[a] {
				within = true
				break
			}
			if a == "/" {
				break
			}
			a = Parent(a)
		}
		if !within {
			out = append(out, p)
			kept[p] = true
		}
	}
	return out
}
