package shellscan

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// maxBraceWords caps the words one brace expansion may produce; a word that
// would expand to more is treated as dynamic.
const maxBraceWords = 64

// xword is one shell word after brace expansion, quote removal, ANSI-C
// decoding and the expansions the gate knows ("~", $HOME, $PWD).
type xword struct {
	Word
	raw string // as written

	// dyn says why the word's value is not known for rule matching.
	dyn string
	// brace reports that the word came from a brace expansion.
	brace bool

	// path is the value for path claims: "~" and $HOME expanded, $PWD as
	// ".", a leading literal (quoted) "~" written "./~". For a glob it is
	// the value with metacharacters.
	path string
	// pathGlob is the glob pattern (quoted metacharacters escaped) when the
	// word is a glob; "" when the glob cannot be expressed (extglob).
	pathGlob string
	// unresolved says why path is not known ("" when it is).
	unresolved string
	// slash reports a "/" in the word's literal parts.
	slash bool
	// tilde reports an unquoted leading "~".
	tilde bool
	// procSubst reports a word that is only a process substitution.
	procSubst bool
	// found reports find's {}: a file under the trees find walks.
	found bool
}

// literal reports whether the word's value is fully known.
func (x *xword) literal() bool { return x.Kind == Literal }

// expandWord evaluates a word into one or more xwords (brace expansion).
// Command substitutions inside it are walked as segments.
func (w *walker) expandWord(c ctx, word *syntax.Word, st *cwdState) []xword {
	w.nested(c, word, st)
	return w.expandOnly(c, word)
}

// expandOnly is expandWord without walking substitutions.
func (w *walker) expandOnly(c ctx, word *syntax.Word) []xword {
	return w.expandInto(nil, c, word)
}

// hasBrace reports a literal part with "{", the only words SplitBraces changes.
func hasBrace(word *syntax.Word) bool {
	for _, p := range word.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// expandInto appends the expansion of word to dst.
func (w *walker) expandInto(dst []xword, c ctx, word *syntax.Word) []xword {
	raw := c.text(word)
	if !hasBrace(word) {
		return append(dst, w.evalParts(word.Parts, raw))
	}
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), word.Parts...)}
	if !syntax.SplitBraces(cp) {
		return append(dst, w.evalParts(word.Parts, raw))
	}
	alts, ok := braceAlternatives(cp.Parts, maxBraceWords)
	if !ok {
		x := w.evalParts(word.Parts, raw)
		x.Kind, x.Value, x.dyn = Dynamic, raw, "brace expansion of more than 64 words"
		x.unresolved = x.dyn
		x.brace = true
		return append(dst, x)
	}
	for _, parts := range alts {
		x := w.evalParts(parts, raw)
		x.brace = true
		dst = append(dst, x)
	}
	return dst
}

// braceAlternatives expands BraceExp parts into the list of part sequences
// bash would produce, up to limit.
func braceAlternatives(parts []syntax.WordPart, limit int) ([][]syntax.WordPart, bool) {
	alts := [][]syntax.WordPart{nil}
	for _, p := range parts {
		be, ok := p.(*syntax.BraceExp)
		if !ok {
			for i := range alts {
				alts[i] = append(alts[i], p)
			}
			continue
		}
		var elems [][]syntax.WordPart
		if be.Sequence {
			seq, ok := braceSequence(be, limit)
			if !ok {
				return nil, false
			}
			for _, s := range seq {
				elems = append(elems, []syntax.WordPart{&syntax.Lit{Value: s}})
			}
		} else {
			for _, e := range be.Elems {
				sub, ok := braceAlternatives(e.Parts, limit)
				if !ok {
					return nil, false
				}
				elems = append(elems, sub...)
			}
		}
		if len(alts)*len(elems) > limit {
			return nil, false
		}
		next := make([][]syntax.WordPart, 0, len(alts)*len(elems))
		for _, a := range alts {
			for _, e := range elems {
				n := make([]syntax.WordPart, 0, len(a)+len(e))
				n = append(append(n, a...), e...)
				next = append(next, n)
			}
		}
		alts = next
	}
	return alts, true
}

// braceSequence expands {x..y[..incr]} for numbers and single letters.
func braceSequence(be *syntax.BraceExp, limit int) ([]string, bool) {
	vals := make([]string, len(be.Elems))
	for i, e := range be.Elems {
		vals[i] = e.Lit()
	}
	if len(vals) < 2 {
		return nil, false
	}
	incr := 1
	if len(vals) == 3 {
		n, err := strconv.Atoi(vals[2])
		if err != nil {
			return nil, false
		}
		if n < 0 {
			n = -n
		}
		if n == 0 {
			n = 1
		}
		incr = n
	}
	from, err1 := strconv.Atoi(vals[0])
	to, err2 := strconv.Atoi(vals[1])
	letters := false
	if err1 != nil || err2 != nil {
		if len(vals[0]) != 1 || len(vals[1]) != 1 {
			return nil, false
		}
		from, to, letters = int(vals[0][0]), int(vals[1][0]), true
	}
	span := to - from
	if span < 0 {
		span = -span
	}
	if span/incr+1 > limit {
		return nil, false
	}
	step := incr
	if to < from {
		step = -incr
	}
	var out []string
	for v := from; (step > 0 && v <= to) || (step < 0 && v >= to); v += step {
		if letters {
			out = append(out, string(rune(v)))
		} else {
			out = append(out, strconv.Itoa(v))
		}
	}
	return out, true
}

// wordBuilder accumulates a word's value and glob pattern.
type wordBuilder struct {
	val, pat   strings.Builder
	glob       bool
	patUnknown bool
	dyn        string
	pathDyn    string
	slash      bool
}

func (b *wordBuilder) quoted(s string) {
	b.val.WriteString(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.pat.WriteByte('\\')
		case '/':
			b.slash = true
		}
		b.pat.WriteByte(s[i])
	}
}

// unquoted adds an unquoted literal: backslashes escape the next byte and
// glob metacharacters stay special.
func (b *wordBuilder) unquoted(s string) {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch ch {
		case '\\':
			if i+1 < len(s) {
				i++
				b.quoted(s[i : i+1])
				continue
			}
			b.quoted("\\")
			continue
		case '*', '?':
			b.glob = true
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				b.glob = true
			} else {
				b.quoted("[")
				continue
			}
		case '/':
			b.slash = true
		}
		b.val.WriteByte(ch)
		b.pat.WriteByte(ch)
	}
}

func (b *wordBuilder) dynamic(reason string) {
	if b.dyn == "" {
		b.dyn = reason
	}
	if b.pathDyn == "" {
		b.pathDyn = reason
	}
}

// evalParts evaluates word parts (no BraceExp expected but tolerated).
func (w *walker) evalParts(parts []syntax.WordPart, raw string) xword {
	if len(parts) == 1 {
		if lit, ok := parts[0].(*syntax.Lit); ok && !strings.ContainsAny(lit.Value, "\\*?[~") {
			v := lit.Value
			return xword{Word: Word{Value: v}, raw: raw, path: v, slash: strings.IndexByte(v, '/') >= 0}
		}
	}
	var b wordBuilder
	x := xword{raw: raw}
	rest := parts
	if len(parts) > 0 {
		if lit, ok := parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
			prefix, tail, hasSlash := strings.Cut(lit.Value, "/")
			if hasSlash || len(parts) == 1 {
				x.tilde = true
				switch {
				case prefix == "~":
					if w.homeChanged != "" {
						x.unresolved = w.homeChanged
						b.dynamic(w.homeChanged)
						b.val.WriteString("~")
						b.pat.WriteString("~")
					} else if w.opts.Home == "" {
						x.unresolved = "~ used but no home directory is configured"
						b.val.WriteString("~")
						b.pat.WriteString("~")
					} else {
						b.quoted(w.opts.Home)
					}
				case prefix == "~+" && w.pwdChanged == "":
					b.val.WriteString(".")
					b.pat.WriteString(".")
					b.dyn = "~+ is the working directory"
				default:
					x.unresolved = prefix + " names a directory the gate cannot know"
					b.dynamic(x.unresolved)
					b.val.WriteString(prefix)
					b.pat.WriteString(prefix)
				}
				if hasSlash {
					b.val.WriteByte('/')
					b.pat.WriteByte('/')
					b.slash = true
					b.unquoted(tail)
				}
				rest = parts[1:]
			}
		}
	}
	for _, p := range rest {
		w.evalPart(&b, p, false)
	}
	if len(parts) == 1 {
		if _, ok := parts[0].(*syntax.ProcSubst); ok {
			x.procSubst = true
		}
	}
	val := b.val.String()
	x.slash = b.slash
	switch {
	case b.dyn != "":
		x.Kind, x.Value, x.dyn = Dynamic, raw, b.dyn
	case b.glob:
		x.Kind, x.Value, x.Pattern = Glob, val, b.pat.String()
	default:
		x.Kind, x.Value = Literal, val
	}
	if x.unresolved == "" && b.pathDyn != "" {
		x.unresolved = b.pathDyn
	}
	x.path = val
	if b.glob && !b.patUnknown {
		x.pathGlob = b.pat.String()
	}
	if !x.tilde && strings.HasPrefix(val, "~") {
		// A quoted "~" is a literal directory name, not the home.
		x.path = "./" + val
		if x.pathGlob != "" {
			x.pathGlob = "./" + x.pathGlob
		}
	}
	return x
}

func (w *walker) evalPart(b *wordBuilder, p syntax.WordPart, inDouble bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		if inDouble {
			b.quoted(unescapeDouble(p.Value))
		} else {
			b.unquoted(p.Value)
		}
	case *syntax.SglQuoted:
		s := p.Value
		if p.Dollar {
			s = decodeANSIC(s)
		}
		b.quoted(s)
	case *syntax.DblQuoted:
		if p.Dollar {
			b.dynamic(`$"..." is translated at run time`)
		}
		for _, q := range p.Parts {
			w.evalPart(b, q, true)
		}
	case *syntax.ParamExp:
		w.evalParam(b, p)
	case *syntax.CmdSubst:
		b.dynamic("command substitution")
	case *syntax.ArithmExp:
		b.dynamic("arithmetic expansion")
	case *syntax.ProcSubst:
		b.dynamic("process substitution")
	case *syntax.ExtGlob:
		b.glob, b.patUnknown = true, true
		s := p.Op.String() + p.Pattern.Value + ")"
		b.val.WriteString(s)
		b.pat.WriteString(s)
	case *syntax.BraceExp:
		b.dynamic("brace expansion")
	default:
		b.dynamic("unsupported word part")
	}
}

func (w *walker) evalParam(b *wordBuilder, p *syntax.ParamExp) {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	simple := p.Param != nil && p.Flags == nil && !p.Excl && !p.Length && !p.Width && !p.IsSet &&
		p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil &&
		p.Split == syntax.OptUnset && p.GlobSubst == syntax.OptUnset && p.RcExpand == syntax.OptUnset
	switch {
	case simple && name == "HOME":
		switch {
		case w.homeChanged != "":
			b.dynamic(w.homeChanged)
		case w.opts.Home == "":
			b.dynamic("$HOME used but no home directory is configured")
		default:
			b.quoted(w.opts.Home)
		}
	case simple && name == "PWD" && w.pwdChanged == "":
		// Known for paths (the tracked working directory), not for rules.
		if b.dyn == "" {
			b.dyn = "$PWD is expanded at run time"
		}
		b.val.WriteString(".")
		b.pat.WriteString(".")
	default:
		if name == "" {
			name = "..."
		}
		b.dynamic("$" + name + " is expanded at run time")
	}
}

// unescapeDouble removes the backslashes that are special inside double
// quotes: before $, `, ", \ and newline.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// decodeANSIC decodes the body of a bash $'...' string. Like bash, the
// result ends at the first NUL byte.
func decodeANSIC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '\\' || i+1 >= len(s) {
			sb.WriteByte(ch)
			continue
		}
		i++
		switch c := s[i]; c {
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case 'e', 'E':
			sb.WriteByte(0x1b)
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte('\v')
		case '\\', '\'', '"', '?':
			sb.WriteByte(c)
		case 'c':
			if i+1 < len(s) {
				i++
				sb.WriteByte(s[i] & 0x1f)
			} else {
				sb.WriteString(`\c`)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			sb.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			maxDigits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			j := i + 1
			for j < len(s) && j < i+1+maxDigits && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				sb.WriteByte('\\')
				sb.WriteByte(c)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if c == 'x' {
				sb.WriteByte(byte(n))
			} else if n <= utf8.MaxRune {
				sb.WriteRune(rune(n))
			}
			i = j - 1
		default:
			sb.WriteByte('\\')
			sb.WriteByte(c)
		}
	}
	out, _, _ := strings.Cut(sb.String(), "\x00")
	return out
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
