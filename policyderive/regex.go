package policyderive

import (
	"strings"
)

// Regular expressions for SBPL (and for tests, Go's regexp: the syntax
// emitted is common to POSIX extended regexes and RE2). They never
// contain a double quote or a backslash, so they can sit in an SBPL
// #"..." literal whatever its escaping rules, and never any byte outside
// printable ASCII.
//
// Two modes. A deny regex may match more than the pattern (that is
// stricter): letters match in either case (macOS file systems are
// case-insensitive by default, so ".ENV" opens ".env"), a printable
// byte that cannot be written literally (^ " \) becomes [^/], a run of
// bytes outside printable ASCII (a multi-byte character, whether the
// matcher counts bytes or characters) [^ -~]+, and single-character glob
// constructs that a bytewise matcher
// could cut short in the middle of a multi-byte character widen to
// [^/]+. An allow regex must match no more than the pattern: it is exact
// or the translation fails.

type reMode uint8

const (
	reDeny reMode = iota
	reAllow
)

// reResult is a translation: the regex text, whether it is exact (for
// deny mode: whether it matches exactly the pattern, letter case aside),
// and whether it could be produced at all (allow mode fails rather than
// widen).
type reResult struct {
	re    string
	exact bool
	ok    bool
	// whole is set for a glob that is a lone "**": it matches the anchor
	// itself and everything below it, which no regex placed after the
	// anchor's "/" can say; re is then empty.
	whole bool
}

// safeLiteral reports whether the ASCII byte c can stand for itself.
func safeLiteral(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("/_-,=@%~:!#&;<> '`", c) >= 0
}

// literalRegex translates literal path text.
func literalRegex(s string, mode reMode) reResult {
	var b strings.Builder
	r := reResult{exact: true, ok: true}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isLetter(c):
			if mode == reDeny {
				b.WriteString(foldClass(c))
			} else {
				b.WriteByte(c)
			}
		case safeLiteral(c):
			b.WriteByte(c)
		case strings.IndexByte(".*+?(){}|$", c) >= 0:
			b.WriteByte('[')
			b.WriteByte(c)
			b.WriteByte(']')
		case c == '[':
			b.WriteString("[[]")
		case c == ']':
			b.WriteString("[]]")
		case c >= 0x80 || c < 0x20 || c == 0x7f:
			// Outside printable ASCII: a run of such bytes (a multi-byte
			// character, whatever the matcher's unit) is widened to one
			// or more of them.
			if mode == reAllow {
				return reResult{}
			}
			for i+1 < len(s) && (s[i+1] >= 0x80 || s[i+1] < 0x20 || s[i+1] == 0x7f) {
				i++
			}
			b.WriteString("[^ -~]+")
			r.exact = false
		default: // ^ " \ : printable, but not writable in the profile
			if mode == reAllow {
				return reResult{}
			}
			b.WriteString("[^/]")
			r.exact = false
		}
	}
	r.re = b.String()
	return r
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func foldClass(c byte) string {
	return string([]byte{'[', c &^ 0x20, c | 0x20, ']'})
}

// globRegex translates a glob (doublestar syntax: "*" and "?" within a
// segment, "[...]" classes, "{a,b}" alternatives, "**" as a whole segment
// spanning segments, "\" escaping) into a regex matching exactly the
// paths the glob matches, relative to an anchor that ends in "/".
func globRegex(glob string, mode reMode) reResult {
	var segs []string
	for _, seg := range strings.Split(glob, "/") {
		if seg == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue // "**/**" is "**"
		}
		segs = append(segs, seg)
	}
	if len(segs) == 1 && segs[0] == "**" {
		return reResult{exact: true, ok: true, whole: true}
	}
	var b strings.Builder
	res := reResult{exact: true, ok: true}
	for i, seg := range segs {
		last := i == len(segs)-1
		if seg == "**" {
			if last {
				// "a/**": a itself and everything below it.
				s := strings.TrimSuffix(b.String(), "/")
				b.Reset()
				b.WriteString(s)
				b.WriteString("(/[^/]+)*")
			} else {
				b.WriteString("([^/]+/)*")
			}
			continue
		}
		r := segRegex(seg, mode)
		if !r.ok {
			return reResult{}
		}
		res.exact = res.exact && r.exact
		b.WriteString(r.re)
		if !last {
			b.WriteByte('/')
		}
	}
	res.re = b.String()
	return res
}

// segRegex translates one segment (or a brace alternative).
func segRegex(seg string, mode reMode) reResult {
	var b strings.Builder
	res := reResult{exact: true, ok: true}
	lit := func(s string) bool {
		r := literalRegex(s, mode)
		if !r.ok {
			return false
		}
		res.exact = res.exact && r.exact
		b.WriteString(r.re)
		return true
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch c {
		case '*':
			for i+1 < len(seg) && seg[i+1] == '*' {
				i++
			}
			b.WriteString("[^/]*")
		case '?':
			if mode == reDeny {
				b.WriteString("[^/]+")
				res.exact = false
			} else {
				b.WriteString("[^/]")
			}
		case '\\':
			if i+1 < len(seg) {
				i++
				if !lit(seg[i : i+1]) {
					return reResult{}
				}
			}
		case '[':
			end, cls, ok := classRegex(seg[i:], mode)
			if !ok {
				return reResult{}
			}
			if cls.re == "" {
				// Not a class: a literal "[".
				if !lit("[") {
					return reResult{}
				}
				continue
			}
			res.exact = res.exact && cls.exact
			b.WriteString(cls.re)
			i += end
		case '{':
			end := matchingBrace(seg, i)
			if end < 0 {
				if !lit("{") {
					return reResult{}
				}
				continue
			}
			b.WriteByte('(')
			for j, alt := range splitAlternatives(seg[i+1 : end]) {
				if j > 0 {
					b.WriteByte('|')
				}
				r := globRegex(alt, mode)
				if !r.ok || r.whole {
					return reResult{} // a "**" alternative: not translated
				}
				res.exact = res.exact && r.exact
				b.WriteString(r.re)
			}
			b.WriteByte(')')
			i = end
		default:
			// A run of literal bytes at once, so a multi-byte character
			// is widened once.
			j := i + 1
			for j < len(seg) && strings.IndexByte(`*?\[{`, seg[j]) < 0 {
				j++
			}
			if !lit(seg[i:j]) {
				return reResult{}
			}
			i = j - 1
		}
	}
	res.re = b.String()
	return res
}

// classRegex translates the class at the start of s ("[...]"), returning
// the index of its closing "]". A "[" that opens no class gives an empty
// regex (a literal "[").
func classRegex(s string, mode reMode) (end int, r reResult, ok bool) {
	i := 1
	neg := false
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		neg = true
		i++
	}
	type span struct{ lo, hi byte }
	var spans []span
	first := true
	for ; i < len(s); i++ {
		c := s[i]
		if c == ']' && !first {
			break
		}
		first = false
		if c == '\\' && i+1 < len(s) {
			i++
			c = s[i]
		}
		lo, hi := c, c
		if i+2 < len(s) && s[i+1] == '-' && s[i+2] != ']' {
			hi = s[i+2]
			if hi == '\\' && i+3 < len(s) {
				hi = s[i+3]
				i++
			}
			i += 2
		}
		spans = append(spans, span{lo, hi})
	}
	if i >= len(s) {
		return 0, reResult{}, true // unterminated: a literal "["
	}
	end = i
	classSafe := func(c byte) bool {
		return isLetter(c) || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ',' || c == '=' || c == '@' || c == '%' || c == '~' || c == ':' || c == '+'
	}
	for _, sp := range spans {
		if !classSafe(sp.lo) || !classSafe(sp.hi) || sp.lo > sp.hi {
			if mode == reAllow {
				return 0, reResult{}, false
			}
			return end, reResult{re: "[^/]+", ok: true}, true
		}
	}
	if neg {
		if mode == reDeny {
			return end, reResult{re: "[^/]+", ok: true}, true
		}
		var b strings.Builder
		b.WriteString("[^/")
		for _, sp := range spans {
			writeSpan(&b, sp.lo, sp.hi)
		}
		b.WriteByte(']')
		return end, reResult{re: b.String(), exact: true, ok: true}, true
	}
	var b strings.Builder
	b.WriteByte('[')
	exact := true
	for _, sp := range spans {
		writeSpan(&b, sp.lo, sp.hi)
		if mode == reDeny {
			// Add the other case of every letter in the span.
			for c := int(sp.lo); c <= int(sp.hi); c++ {
				if isLetter(byte(c)) {
					o := byte(c) ^ 0x20
					if o < sp.lo || o > sp.hi {
						writeSpan(&b, o, o)
					}
				}
			}
		}
	}
	b.WriteByte(']')
	return end, reResult{re: b.String(), exact: exact, ok: true}, true
}

func writeSpan(b *strings.Builder, lo, hi byte) {
	b.WriteByte(lo)
	if hi != lo {
		b.WriteByte('-')
		b.WriteByte(hi)
	}
}

// matchingBrace returns the index of the "}" closing the "{" at i, or -1.
func matchingBrace(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// splitAlternatives splits brace content at top-level commas.
func splitAlternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:j])
				start = j + 1
			}
		}
	}
	return append(out, s[start:])
}
