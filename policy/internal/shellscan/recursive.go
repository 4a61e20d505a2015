package shellscan

import "strings"

// recursive reports whether the program, with these arguments, reads or
// writes whole trees under its operands (grep -r, rg, find, ls -R, du,
// cp -r, rm -r, chmod -R, tar c, zip -r, diff -r, git add -A), and
// whether it walks the working directory when it names no operand.
// One table, documented in the package doc.
func recursive(name string, args []xword) (rec, dotDefault bool) {
	rec, dotDefault, _ = recursiveNames(name, args)
	return rec, dotDefault
}

// recursiveNames is recursive, and also reports a program that only lists
// names in the trees (tree, du, ls -R, fd, rg --files), reading no file's
// contents.
func recursiveNames(name string, args []xword) (rec, dotDefault, namesOnly bool) {
	shortHas := func(letters string) bool {
		for _, a := range args {
			v := a.Value
			if a.Kind != Literal || v == "--" {
				if v == "--" {
					break
				}
				continue
			}
			if len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], letters) {
				return true
			}
		}
		return false
	}
	longHas := func(names ...string) bool {
		for i, a := range args {
			if a.Kind != Literal {
				continue
			}
			for _, n := range names {
				if opt, val, ok := strings.Cut(n, "="); ok {
					// --directories=recurse, also as two words.
					if optIs(a.Value, opt) && (strings.HasSuffix(a.Value, "="+val) ||
						i+1 < len(args) && args[i+1].Value == val) {
						return true
					}
					continue
				}
				if optIs(a.Value, n) {
					return true
				}
			}
		}
		return false
	}
	switch name {
	case "grep", "egrep", "fgrep", "zgrep", "git-grep", "rgrep":
		if name == "rgrep" {
			return true, true, false
		}
		r := shortHas("rR") || longHas("--recursive", "--dereference-recursive")
		for i, a := range args {
			// -d/--directories ACTION, abbreviated as getopt does
			// ("rec" is "recurse").
			v := a.Value
			val := ""
			switch {
			case (v == "-d" || optIs(v, "--directories") && !strings.Contains(v, "=")) && i+1 < len(args):
				val = args[i+1].Value
			case strings.HasPrefix(v, "-d") && len(v) > 2 && v[1] == 'd':
				val = v[2:]
			case optIs(v, "--directories") && strings.Contains(v, "="):
				_, val, _ = strings.Cut(v, "=")
			}
			if len(val) >= 3 && strings.HasPrefix("recurse", val) || a.Kind != Literal {
				r = true
			}
		}
		return r, r, false
	case "tree", "du", "fd", "fdfind":
		return true, true, true
	case "rg":
		return true, true, longHas("--files")
	case "ag", "ack":
		return true, true, false
	case "ls", "dir", "vdir":
		r := shortHas("R") || longHas("--recursive")
		return r, r, r
	case "gzip", "gunzip", "bzip2", "xz", "zstd", "lz4", "pigz", "brotli":
		return shortHas("r") || longHas("--recursive"), false, false
	case "lsattr", "getfacl":
		r := shortHas("R") || longHas("--recursive")
		return r, r, false
	case "chattr":
		return shortHas("R") || longHas("--recursive"), false, false
	case "chmod", "chown", "chgrp", "setfacl":
		return shortHas("R") || longHas("--recursive"), false, false
	case "cp", "scp":
		return shortHas("rRa") || longHas("--recursive", "--archive"), false, false
	case "rsync":
		return shortHas("ra") || longHas("--recursive", "--archive"), false, false
	case "rm":
		return shortHas("rR") || longHas("--recursive"), false, false
	case "zip":
		// -R matches its patterns in the whole working directory.
		pat := shortHas("R") || longHas("--recurse-patterns")
		return pat || shortHas("r") || longHas("--recurse-paths"), pat, false
	case "diff":
		return shortHas("r") || longHas("--recursive"), false, false
	case "tar":
		return true, false, false
	case "shred", "wipe":
		return shortHas("r"), false, false
	}
	return false, false, false
}

// gitRecursive reports git subcommands that read or write every file of
// the work tree, untracked ones included: add -A/--all/., stash -u/-a,
// clean. It returns the operation.
func gitRecursive(sub string, args []xword) (Op, bool) {
	has := func(opts ...string) bool {
		for _, a := range args {
			for _, o := range opts {
				if a.Kind == Literal && (a.Value == o || strings.HasPrefix(o, "-") && optIs(a.Value, o)) {
					return true
				}
			}
		}
		return false
	}
	switch sub {
	case "add":
		if has("-A", "--all", ".", "./", ":/", "*") || len(args) == 0 {
			return Read, true
		}
	case "stash":
		if has("-u", "--include-untracked", "-a", "--all") {
			return Read, true
		}

	case "grep":
		if has("--untracked", "--no-index") {
			return Read, true
		}
	case "clean":
		if has("-n", "--dry-run") {
			return 0, false
		}
		return Write, true
	}
	return 0, false
}

// valueOpts are the short options of the recursive readers that take the
// next word as their value.
var valueOpts = map[string]string{
	"grep": "efmABCdD", "egrep": "efmABCdD", "fgrep": "efmABCdD", "zgrep": "efmABCdD",
	"rg": "efmABCgtTjM", "ag": "ABCGgm", "ack": "ABCm", "fd": "edtEcjx", "fdfind": "edtEcjx",
	"tree": "LPIo", "du": "BdX",
}

// namesNoPath reports whether a recursive reader that walks the working
// directory by default was given no path operand: grep, rg, ag, ack and
// fd take a pattern first (unless grep's -e or -f gave it).
func namesNoPath(name string, args []xword) bool {
	if name == "zip" {
		return true // -R: the patterns match under the working directory
	}
	vals := valueOpts[name]
	patternFirst := name != "tree" && name != "du" && name != "ls" && name != "dir" && name != "vdir" &&
		name != "lsattr" && name != "getfacl"
	n := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if a.Kind == Literal && v == "--" {
			n += len(args) - i - 1
			break
		}
		if a.Kind == Literal && len(v) > 1 && v[0] == '-' {
			if v[1] != '-' {
				if len(v) == 2 && strings.Contains(vals, v[1:]) {
					i++
				}
				if (name == "grep" || name == "egrep" || name == "fgrep" || name == "zgrep" || name == "rg") &&
					(strings.ContainsAny(v[1:], "ef")) {
					patternFirst = false
				}
			} else if v == "--regexp" || v == "--file" || strings.HasPrefix(v, "--regexp=") || strings.HasPrefix(v, "--file=") {
				patternFirst = false
				if !strings.Contains(v, "=") {
					i++
				}
			}
			continue
		}
		n++
	}
	if patternFirst && n > 0 {
		n--
	}
	return n == 0
}
