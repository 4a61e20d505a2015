package shellscan

import "strings"

// optIs reports whether the argument word v is the option opt as a
// program parsing with getopt_long would read it:
//   - a long option ("--name") matches when v, up to any "=", is a
//     prefix of at least three characters of opt: GNU programs accept any
//     unambiguous abbreviation, and an ambiguous one is refused by the
//     program, so a prefix is judged as the option it may be;
//   - a short option ("-x") matches a cluster of single-dash letters that
//     contains x (-sf is -s -f), or x with its value attached (-xVALUE).
//
// Single-dash long options (go's -exec, gdb's -ex) match exactly or with
// "=" only.
func optIs(v, opt string) bool {
	if v == opt {
		return true
	}
	switch {
	case strings.HasPrefix(opt, "--"):
		name, _, _ := strings.Cut(v, "=")
		return len(name) >= 3 && strings.HasPrefix(name, "--") && strings.HasPrefix(opt, name)
	case len(opt) == 2 && opt[0] == '-':
		if len(v) < 2 || v[0] != '-' || v[1] == '-' {
			return false
		}
		return strings.IndexByte(v[1:], opt[1]) >= 0
	default:
		return strings.HasPrefix(v, opt+"=")
	}
}

// hasArg reports a literal argument equal to v.
func hasArg(args []xword, v string) bool {
	for _, a := range args {
		if a.Kind == Literal && a.Value == v {
			return true
		}
	}
	return false
}
