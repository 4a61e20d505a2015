package sbplmodel

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Regex is a compiled SBPL regex. It matches bytes: "." and "[^/]" match
// exactly one byte, whatever the encoding, so a multi-byte character is
// several positions (the profile's regexes and the queried paths are
// both taken as raw bytes).
type Regex struct {
	src string
	re  *regexp.Regexp
}

// String returns the regex as written.
func (r *Regex) String() string { return r.src }

// Match reports whether the regex matches anywhere in s (unanchored unless
// the regex uses ^ or $).
func (r *Regex) Match(s string) bool { return r.re.MatchString(latin1(s)) }

// latin1 maps each byte of s to the rune of the same value, so that Go's
// rune-based regexp sees one rune per byte.
func latin1(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

// posixClasses are the bracket classes accepted, [:name:].
var posixClasses = map[string]bool{
	"alnum": true, "alpha": true, "blank": true, "cntrl": true, "digit": true, "graph": true,
	"lower": true, "print": true, "punct": true, "space": true, "upper": true, "xdigit": true,
}

// CompileRegex validates src against the accepted subset of POSIX
// extended regular expressions and compiles it.
//
// Accepted: literal bytes; "."; bracket expressions "[...]" and "[^...]"
// with ranges, a leading "]" as a literal and the classes [:alpha:] etc.;
// "^" and "$" (anchors at the start and end of the path); groups "(...)";
// alternation "|"; one repetition per atom: "*", "+", "?", "{m}", "{m,}",
// "{m,n}" (m ≤ n ≤ 255); and "\" before a punctuation byte, which stands
// for that byte.
//
// Rejected, since their meaning is undefined in POSIX or differs between
// engines: "\" before a letter, digit or any non-punctuation byte (\d, \n,
// back references), "\" inside brackets, stacked repetitions ("a**",
// "a*?"), repetition of nothing or of an anchor, "{" outside a valid
// interval, an empty regex, empty alternatives or groups ("a|", "()"),
// "(?", collating
// elements "[.x.]" and equivalence classes "[=x=]", and an unmatched
// ")".
func CompileRegex(src string) (*Regex, error) {
	p := &reParser{s: src}
	if err := p.alt(0); err != nil {
		return nil, err
	}
	if p.i < len(p.s) {
		return nil, p.errorf("unmatched )")
	}
	re, err := regexp.Compile("(?s:" + latin1(src) + ")")
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w: %v", src, ErrUnsupported, err)
	}
	return &Regex{src: src, re: re}, nil
}

type reParser struct {
	s string
	i int
}

func (p *reParser) errorf(format string, args ...any) error {
	return fmt.Errorf("regex %q at byte %d: %s: %w", p.s, p.i, fmt.Sprintf(format, args...), ErrUnsupported)
}

// alt parses concat ("|" concat)*.
func (p *reParser) alt(depth int) error {
	if depth > 100 {
		return p.errorf("groups nested too deeply")
	}
	for {
		if err := p.concat(depth); err != nil {
			return err
		}
		if p.i < len(p.s) && p.s[p.i] == '|' {
			p.i++
			continue
		}
		return nil
	}
}

// concat parses one or more atoms, each with at most one repetition.
func (p *reParser) concat(depth int) error {
	n := 0
	for p.i < len(p.s) && p.s[p.i] != '|' && p.s[p.i] != ')' {
		anchor, err := p.atom(depth)
		if err != nil {
			return err
		}
		n++
		if p.i < len(p.s) && strings.IndexByte("*+?{", p.s[p.i]) >= 0 {
			if anchor {
				return p.errorf("repetition of an anchor")
			}
			if err := p.repeat(); err != nil {
				return err
			}
			if p.i < len(p.s) && strings.IndexByte("*+?{", p.s[p.i]) >= 0 {
				return p.errorf("stacked repetition")
			}
		}
	}
	if n == 0 {
		return p.errorf("empty alternative or group")
	}
	return nil
}

// atom parses one atom and reports whether it is an anchor.
func (p *reParser) atom(depth int) (anchor bool, err error) {
	c := p.s[p.i]
	switch c {
	case '(':
		p.i++
		if p.i < len(p.s) && p.s[p.i] == '?' {
			return false, p.errorf("(? groups")
		}
		if err := p.alt(depth + 1); err != nil {
			return false, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return false, p.errorf("missing )")
		}
		p.i++
	case '[':
		return false, p.bracket()
	case '^', '$':
		p.i++
		return true, nil
	case '\\':
		if p.i+1 >= len(p.s) {
			return false, p.errorf("trailing backslash")
		}
		e := p.s[p.i+1]
		if e >= utf8.RuneSelf || !isPunct(e) {
			return false, p.errorf("escape \\%c", e)
		}
		p.i += 2
	case '*', '+', '?', '{':
		return false, p.errorf("repetition of nothing")
	default:
		p.i++
	}
	return false, nil
}

func isPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
}

// repeat parses "*", "+", "?" or an interval.
func (p *reParser) repeat() error {
	if p.s[p.i] != '{' {
		p.i++
		return nil
	}
	j := strings.IndexByte(p.s[p.i:], '}')
	if j < 0 {
		return p.errorf("{ without }")
	}
	body := p.s[p.i+1 : p.i+j]
	lo, hi, comma := body, "", false
	if k := strings.IndexByte(body, ','); k >= 0 {
		lo, hi, comma = body[:k], body[k+1:], true
	}
	m, ok1 := number(lo)
	n, ok2 := number(hi)
	if !ok1 || (comma && hi != "" && !ok2) || (comma && hi != "" && n < m) || m > 255 || n > 255 {
		return p.errorf("interval {%s}", body)
	}
	p.i += j + 1
	return nil
}

func number(s string) (int, bool) {
	if s == "" || len(s) > 3 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// bracket parses a bracket expression.
func (p *reParser) bracket() error {
	p.i++ // [
	if p.i < len(p.s) && p.s[p.i] == '^' {
		p.i++
	}
	first := true
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ']' && !first:
			p.i++
			return nil
		case c == '\\':
			return p.errorf("backslash in brackets")
		case c == '[' && p.i+1 < len(p.s) && (p.s[p.i+1] == '.' || p.s[p.i+1] == '='):
			return p.errorf("collating element or equivalence class")
		case c == '[' && p.i+1 < len(p.s) && p.s[p.i+1] == ':':
			end := strings.Index(p.s[p.i+2:], ":]")
			if end < 0 || !posixClasses[p.s[p.i+2:p.i+2+end]] {
				return p.errorf("character class")
			}
			p.i += 2 + end + 2
		default:
			p.i++
		}
		first = false
	}
	return p.errorf("missing ]")
}
