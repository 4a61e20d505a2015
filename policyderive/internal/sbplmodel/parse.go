package sbplmodel

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Errors wrapped by *ParseError and *QueryError.
var (
	// ErrSyntax: the text is not a well-formed s-expression profile.
	ErrSyntax = errors.New("SBPL syntax error")
	// ErrUnsupported: a construct outside the subset the model
	// evaluates (an unknown form, operation, filter, escape or regex
	// feature). Never ignored: a misparse must not pass as a sound
	// profile.
	ErrUnsupported = errors.New("SBPL construct not supported")
	// ErrParam: a (param "KEY") with no value, or a bad -D definition.
	ErrParam = errors.New("SBPL parameter")
)

// ParseError reports where a profile could not be parsed.
type ParseError struct {
	Line, Col int // 1-based; Col counts bytes
	// Form is the text of the offending form or token (shortened).
	Form string
	Err  error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("sbpl:%d:%d: %q: %v", e.Line, e.Col, e.Form, e.Err)
}

// Unwrap returns the cause, which wraps ErrSyntax, ErrUnsupported or
// ErrParam.
func (e *ParseError) Unwrap() error { return e.Err }

// Action is a rule's effect.
type Action uint8

// Actions.
const (
	Deny Action = iota
	Allow
)

// String returns "deny" or "allow".
func (a Action) String() string {
	if a == Allow {
		return "allow"
	}
	return "deny"
}

// Profile is a parsed profile.
type Profile struct {
	// Default is the action of the last (allow default) or (deny
	// default): for every operation no rule matches.
	Default Action
	// Rules in profile order, default rules excluded.
	Rules []*Rule
}

// Rule is one (allow ...) or (deny ...) form.
type Rule struct {
	Action Action
	// Ops are the operation names as written.
	Ops []string
	ops []opSpec
	// Filter is nil when the rule has none (it matches every request of
	// its operations). Several filters in one rule are a FilterAny.
	Filter *Filter
	// Line is the rule's line in the profile; Text its source.
	Line int
	Text string
}

// String returns the rule's source text.
func (r *Rule) String() string { return r.Text }

// FilterKind names a filter.
type FilterKind uint8

// Filter kinds.
const (
	// FilterLiteral matches the path Arg exactly.
	FilterLiteral FilterKind = iota
	// FilterSubpath matches Arg and every path below it: "/a/b" covers
	// "/a/b" and "/a/b/c", not "/a/bc".
	FilterSubpath
	// FilterPrefix matches paths starting with the string Arg, without
	// regard to "/" boundaries.
	FilterPrefix
	// FilterRegex matches paths Regex matches.
	FilterRegex
	// FilterAll matches when every Sub filter does (require-all).
	FilterAll
	// FilterAny matches when one Sub filter does (require-any).
	FilterAny
	// FilterNot matches when Sub[0] does not (require-not).
	FilterNot
	// FilterTarget matches a signal or process-info target relation:
	// Arg is self, children, same-sandbox or others.
	FilterTarget
	// FilterRemote and FilterLocal match a network address: Proto is
	// ip, tcp or udp, Arg is "host:port" with host "*" or "localhost"
	// and port "*" or a number.
	FilterRemote
	FilterLocal
)

var filterNames = map[string]FilterKind{
	"literal": FilterLiteral, "subpath": FilterSubpath, "prefix": FilterPrefix, "regex": FilterRegex,
	"require-all": FilterAll, "require-any": FilterAny, "require-not": FilterNot,
	"target": FilterTarget, "remote": FilterRemote, "local": FilterLocal,
}

// Filter is a parsed filter, parameters substituted.
type Filter struct {
	Kind  FilterKind
	Arg   string
	Proto string
	Regex *Regex
	Sub   []*Filter
}

// ParseParams parses sandbox-exec -D definitions, "KEY=VALUE" each (the
// value may contain "="). A definition without "=", an empty key or a key
// defined twice is an error wrapping ErrParam.
func ParseParams(defs []string) (map[string]string, error) {
	out := make(map[string]string, len(defs))
	for _, d := range defs {
		k, v, ok := strings.Cut(d, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("definition %q: not KEY=VALUE: %w", d, ErrParam)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("definition %q: %s defined twice: %w", d, k, ErrParam)
		}
		out[k] = v
	}
	return out, nil
}

// Parse parses a profile, substituting (param "KEY") from params.
//
// The profile must start with (version 1) and declare a default; every
// other top-level form is (allow OP... FILTER...) or (deny OP...
// FILTER...). Strings are "..." with the escapes \" \\ \n \t \r and \xHH
// (any other escape is an error) and may hold any byte; regex literals
// are #"..." in which a backslash and the byte after it are passed to the
// regex unchanged (so \" does not end the literal). Comments run from
// ";" to the end of the line. Path arguments of literal, subpath and
// prefix must be absolute and clean ("/a/b", never "/a/b/", "a", "/a/../b")
// and free of NUL after substitution.
func Parse(text string, params map[string]string) (*Profile, error) {
	r := &reader{src: text, line: 1, col: 1}
	forms, err := r.all()
	if err != nil {
		return nil, err
	}
	p := &Profile{}
	b := &builder{src: text, params: params}
	hasDefault := false
	for i, f := range forms {
		if f.kind != nodeList || len(f.list) == 0 || f.list[0].kind != nodeSymbol {
			return nil, b.errorf(f, ErrUnsupported, "not a rule")
		}
		head := f.list[0].text
		if i == 0 {
			if head != "version" || len(f.list) != 2 || f.list[1].kind != nodeSymbol || f.list[1].text != "1" {
				return nil, b.errorf(f, ErrUnsupported, "a profile must start with (version 1)")
			}
			continue
		}
		switch head {
		case "allow", "deny":
		default:
			return nil, b.errorf(f, ErrUnsupported, "unknown form %q", head)
		}
		act := Deny
		if head == "allow" {
			act = Allow
		}
		if len(f.list) == 2 && f.list[1].kind == nodeSymbol && f.list[1].text == "default" {
			p.Default, hasDefault = act, true
			continue
		}
		rule, err := b.rule(f, act)
		if err != nil {
			return nil, err
		}
		p.Rules = append(p.Rules, rule)
	}
	if len(forms) == 0 {
		return nil, &ParseError{Line: 1, Col: 1, Err: fmt.Errorf("empty profile: %w", ErrUnsupported)}
	}
	if !hasDefault {
		return nil, &ParseError{Line: 1, Col: 1, Form: shorten(text), Err: fmt.Errorf("no (deny default) or (allow default): %w", ErrUnsupported)}
	}
	return p, nil
}

// builder turns forms into rules.
type builder struct {
	src    string
	params map[string]string
}

func (b *builder) errorf(n *node, sentinel error, format string, args ...any) error {
	return &ParseError{Line: n.line, Col: n.col, Form: shorten(b.src[n.start:n.end]), Err: fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), sentinel)}
}

func (b *builder) wrap(n *node, err error) error {
	return &ParseError{Line: n.line, Col: n.col, Form: shorten(b.src[n.start:n.end]), Err: err}
}

func shorten(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func (b *builder) rule(f *node, act Action) (*Rule, error) {
	r := &Rule{Action: act, Line: f.line, Text: b.src[f.start:f.end]}
	args := f.list[1:]
	for len(args) > 0 && args[0].kind == nodeSymbol {
		name := args[0].text
		if name == "default" {
			return nil, b.errorf(args[0], ErrUnsupported, "default with other operations or filters")
		}
		op, ok := parseOp(name)
		if !ok {
			return nil, b.errorf(args[0], ErrUnsupported, "unknown operation %q", name)
		}
		r.Ops = append(r.Ops, name)
		r.ops = append(r.ops, op)
		args = args[1:]
	}
	if len(r.ops) == 0 {
		return nil, b.errorf(f, ErrUnsupported, "rule without an operation")
	}
	var filters []*Filter
	for _, a := range args {
		flt, err := b.filter(a, 0)
		if err != nil {
			return nil, err
		}
		filters = append(filters, flt)
	}
	switch len(filters) {
	case 0:
	case 1:
		r.Filter = filters[0]
	default:
		r.Filter = &Filter{Kind: FilterAny, Sub: filters}
	}
	return r, nil
}

func (b *builder) filter(n *node, depth int) (*Filter, error) {
	if depth > 64 {
		return nil, b.errorf(n, ErrUnsupported, "filters nested too deeply")
	}
	if n.kind != nodeList || len(n.list) == 0 || n.list[0].kind != nodeSymbol {
		return nil, b.errorf(n, ErrUnsupported, "not a filter")
	}
	name := n.list[0].text
	kind, ok := filterNames[name]
	if !ok {
		if strings.HasPrefix(name, "with") {
			return nil, b.errorf(n, ErrUnsupported, "rule modifier %q", name)
		}
		return nil, b.errorf(n, ErrUnsupported, "unknown filter %q", name)
	}
	args := n.list[1:]
	f := &Filter{Kind: kind}
	switch kind {
	case FilterLiteral, FilterSubpath, FilterPrefix, FilterRegex:
		if len(args) != 1 {
			return nil, b.errorf(n, ErrUnsupported, "%s takes one argument", name)
		}
		s, raw, err := b.str(args[0])
		if err != nil {
			return nil, err
		}
		if kind == FilterRegex {
			if !raw && args[0].kind == nodeString && strings.IndexByte(b.src[args[0].start:args[0].end], '\\') >= 0 {
				// A plain string's escapes were decoded by the reader; a
				// regex written so would mean two levels of escaping.
				return nil, b.errorf(args[0], ErrUnsupported, "regex in a plain string with escapes (write #\"...\")")
			}
			re, err := CompileRegex(s)
			if err != nil {
				return nil, b.wrap(args[0], err)
			}
			f.Arg, f.Regex = s, re
			return f, nil
		}
		if args[0].kind == nodeRegex {
			return nil, b.errorf(args[0], ErrUnsupported, "%s of a regex literal", name)
		}
		if strings.IndexByte(s, 0) >= 0 {
			return nil, b.errorf(args[0], ErrUnsupported, "%s path %q contains NUL", name, s)
		}
		if s == "" || s[0] != '/' || path.Clean(s) != s {
			return nil, b.errorf(args[0], ErrUnsupported, "%s path %q is not absolute and clean", name, s)
		}
		f.Arg = s
	case FilterAll, FilterAny, FilterNot:
		if len(args) == 0 || (kind == FilterNot && len(args) != 1) {
			return nil, b.errorf(n, ErrUnsupported, "%s with %d filters", name, len(args))
		}
		for _, a := range args {
			sub, err := b.filter(a, depth+1)
			if err != nil {
				return nil, err
			}
			f.Sub = append(f.Sub, sub)
		}
	case FilterTarget:
		if len(args) != 1 || args[0].kind != nodeSymbol {
			return nil, b.errorf(n, ErrUnsupported, "target takes one relation")
		}
		switch args[0].text {
		case "self", "children", "same-sandbox", "others":
		default:
			return nil, b.errorf(args[0], ErrUnsupported, "target %q", args[0].text)
		}
		f.Arg = args[0].text
	case FilterRemote, FilterLocal:
		if len(args) != 2 || args[0].kind != nodeSymbol {
			return nil, b.errorf(n, ErrUnsupported, "%s takes a protocol and an address", name)
		}
		switch args[0].text {
		case "ip", "tcp", "udp":
		default:
			return nil, b.errorf(args[0], ErrUnsupported, "protocol %q", args[0].text)
		}
		s, _, err := b.str(args[1])
		if err != nil {
			return nil, err
		}
		host, port, ok := strings.Cut(s, ":")
		if n, err := strconv.Atoi(port); !ok || (host != "*" && host != "localhost") || (port != "*" && (err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port)) {
			return nil, b.errorf(args[1], ErrUnsupported, "address %q (want *:PORT or localhost:PORT, PORT * or a number)", s)
		}
		f.Proto, f.Arg = args[0].text, s
	}
	return f, nil
}

// str evaluates a string argument: a string, a regex literal (raw) or
// (param "KEY").
func (b *builder) str(n *node) (s string, raw bool, err error) {
	switch n.kind {
	case nodeString:
		return n.text, false, nil
	case nodeRegex:
		return n.text, true, nil
	case nodeList:
		if len(n.list) == 2 && n.list[0].kind == nodeSymbol && n.list[0].text == "param" && n.list[1].kind == nodeString {
			v, ok := b.params[n.list[1].text]
			if !ok {
				return "", false, b.errorf(n, ErrParam, "parameter %q not defined", n.list[1].text)
			}
			return v, false, nil
		}
	}
	return "", false, b.errorf(n, ErrUnsupported, "not a string, regex literal or (param \"KEY\")")
}

// The reader.

type nodeKind uint8

const (
	nodeList nodeKind = iota
	nodeSymbol
	nodeString
	nodeRegex
)

type node struct {
	kind       nodeKind
	text       string // symbol name, decoded string
	list       []*node
	line, col  int
	start, end int // byte offsets in the source
}

type reader struct {
	src       string
	i         int
	line, col int
	depth     int
}

func (r *reader) errorf(line, col, start int, sentinel error, format string, args ...any) error {
	end := min(len(r.src), max(r.i, start+1))
	return &ParseError{Line: line, Col: col, Form: shorten(r.src[start:end]), Err: fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), sentinel)}
}

func (r *reader) advance() byte {
	c := r.src[r.i]
	r.i++
	if c == '\n' {
		r.line, r.col = r.line+1, 1
	} else {
		r.col++
	}
	return c
}

// skip passes whitespace and comments.
func (r *reader) skip() error {
	for r.i < len(r.src) {
		switch c := r.src[r.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			r.advance()
		case c == ';':
			for r.i < len(r.src) && r.src[r.i] != '\n' {
				r.advance()
			}
		case c == '#' && r.i+1 < len(r.src) && r.src[r.i+1] == '|':
			return r.errorf(r.line, r.col, r.i, ErrUnsupported, "block comment")
		default:
			return nil
		}
	}
	return nil
}

// all reads every top-level form.
func (r *reader) all() ([]*node, error) {
	var out []*node
	for {
		if err := r.skip(); err != nil {
			return nil, err
		}
		if r.i >= len(r.src) {
			return out, nil
		}
		n, err := r.form()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
}

func (r *reader) form() (*node, error) {
	n := &node{line: r.line, col: r.col, start: r.i}
	c := r.src[r.i]
	switch {
	case c == '(':
		r.depth++
		if r.depth > 200 {
			return nil, r.errorf(n.line, n.col, n.start, ErrUnsupported, "nested too deeply")
		}
		r.advance()
		n.kind = nodeList
		for {
			if err := r.skip(); err != nil {
				return nil, err
			}
			if r.i >= len(r.src) {
				return nil, r.errorf(n.line, n.col, n.start, ErrSyntax, "missing )")
			}
			if r.src[r.i] == ')' {
				r.advance()
				break
			}
			sub, err := r.form()
			if err != nil {
				return nil, err
			}
			n.list = append(n.list, sub)
		}
		r.depth--
	case c == ')':
		return nil, r.errorf(n.line, n.col, n.start, ErrSyntax, "unexpected )")
	case c == '"':
		r.advance()
		s, err := r.stringBody(n)
		if err != nil {
			return nil, err
		}
		n.kind, n.text = nodeString, s
	case c == '#' && r.i+1 < len(r.src) && r.src[r.i+1] == '"':
		r.advance()
		r.advance()
		s, err := r.regexBody(n)
		if err != nil {
			return nil, err
		}
		n.kind, n.text = nodeRegex, s
	case c == '#' || c == '\'' || c == '`' || c == ',':
		return nil, r.errorf(n.line, n.col, n.start, ErrUnsupported, "reader syntax %q", c)
	default:
		for r.i < len(r.src) && !strings.ContainsRune(" \t\n\r\f()\";", rune(r.src[r.i])) {
			r.advance()
		}
		n.kind, n.text = nodeSymbol, r.src[n.start:r.i]
	}
	n.end = r.i
	return n, nil
}

// stringBody reads a "..." string after the opening quote.
func (r *reader) stringBody(n *node) (string, error) {
	var b strings.Builder
	for r.i < len(r.src) {
		c := r.advance()
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if r.i >= len(r.src) {
				break
			}
			e := r.advance()
			switch e {
			case '"', '\\':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x':
				if r.i+2 > len(r.src) {
					return "", r.errorf(n.line, n.col, n.start, ErrSyntax, "\\x needs two hex digits")
				}
				v, err := strconv.ParseUint(r.src[r.i:r.i+2], 16, 8)
				if err != nil {
					return "", r.errorf(n.line, n.col, n.start, ErrSyntax, "\\x needs two hex digits")
				}
				r.advance()
				r.advance()
				b.WriteByte(byte(v))
			default:
				return "", r.errorf(n.line, n.col, n.start, ErrUnsupported, "escape \\%c in a string", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", r.errorf(n.line, n.col, n.start, ErrSyntax, "unterminated string")
}

// regexBody reads a #"..." literal after the opening #".
func (r *reader) regexBody(n *node) (string, error) {
	start := r.i
	for r.i < len(r.src) {
		c := r.advance()
		switch c {
		case '"':
			return r.src[start : r.i-1], nil
		case '\\':
			if r.i < len(r.src) {
				r.advance()
			}
		}
	}
	return "", r.errorf(n.line, n.col, n.start, ErrSyntax, "unterminated regex literal")
}
