package shellscan

import "strings"

// sed: -i makes the file operands writes; the script is read for the
// commands that run programs (e, s///e) or name files (w, W, r, R).
func (w *walker) sed(seg *Segment, args []xword, cst *cwdState, skip []bool) {
	inPlace, sandbox, scriptGiven := false, false, false
	var scripts []xword
	var files []int
	end := false
	for i := 0; i < len(args); i++ {
		skip[i] = true
		a := &args[i]
		v := a.Value
		if a.Kind == Dynamic {
			v = a.raw
		}
		if end || v == "-" || !strings.HasPrefix(v, "-") {
			files = append(files, i)
			continue
		}
		if v == "--" {
			end = true
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasEq := strings.Cut(v, "=")
			switch longName(name, []string{"--expression", "--file", "--in-place", "--line-length", "--sandbox"}) {
			case "--in-place":
				inPlace = true
			case "--sandbox":
				sandbox = true
			case "--expression":
				scriptGiven = true
				if hasEq {
					scripts = append(scripts, subword(w, a, name+"="))
				} else if i+1 < len(args) {
					i++
					skip[i] = true
					scripts = append(scripts, args[i])
				}
			case "--file":
				scriptGiven = true
				seg.opaque("sed --file runs a script the gate cannot read")
				if hasEq {
					x := subword(w, a, name+"=")
					w.claim(&x, Read, "script", cst)
				} else if i+1 < len(args) {
					i++
					skip[i] = true
					w.claim(&args[i], Read, "script", cst)
				}
			case "--line-length":
				if !hasEq {
					i++
				}
			}
			_ = val
			continue
		}
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case 'i':
				inPlace = true
				if j == len(v)-1 && i+1 < len(args) && args[i+1].Kind == Literal && args[i+1].Value == "" {
					i++ // BSD sed -i '' (no backup suffix)
					skip[i] = true
				}
				j = len(v)
			case 'e', 'f', 'l':
				var x *xword
				if j+1 < len(v) {
					sw := subword(w, a, v[:j+1])
					x = &sw
				} else if i+1 < len(args) {
					i++
					skip[i] = true
					x = &args[i]
				}
				if v[j] != 'l' {
					scriptGiven = true
				}
				if x != nil && v[j] == 'e' {
					scripts = append(scripts, *x)
				} else if x != nil && v[j] == 'f' {
					seg.opaque("sed -f runs a script the gate cannot read")
					w.claim(x, Read, "script", cst)
				}
				j = len(v)
			}
		}
	}
	if !scriptGiven && len(files) > 0 {
		scripts = append(scripts, args[files[0]])
		files = files[1:]
	}
	for _, s := range scripts {
		if s.Kind != Literal {
			seg.opaque("sed runs a script the gate cannot read")
			continue
		}
		execs, writes, reads, ok := scanSed(s.Value)
		switch {
		case !ok:
			seg.opaque("sed script is not understood by the gate")
		case execs && !sandbox:
			seg.opaque("sed script runs commands (e)")
		}
		if sandbox {
			continue
		}
		for _, f := range writes {
			x := w.evalParts(nil, s.raw)
			x.Kind, x.Value, x.path = Literal, f, f
			w.claim(&x, Write, "writer argument", cst)
		}
		for _, f := range reads {
			x := w.evalParts(nil, s.raw)
			x.Kind, x.Value, x.path = Literal, f, f
			w.claim(&x, Read, "argument", cst)
		}
	}
	for _, i := range files {
		a := &args[i]
		if a.Kind == Literal && a.Value == "-" {
			continue
		}
		if inPlace {
			w.claim(a, Write, "writer argument", cst)
		} else {
			w.claim(a, Read, "argument", cst)
		}
	}
}

// scanSed reads a sed script far enough to find the commands that execute
// programs and the files it reads or writes. ok is false when the script
// is not understood.
func scanSed(s string) (execs bool, writes, reads []string, ok bool) {
	i, n := 0, len(s)
	skipSpace := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	toEOL := func() string {
		j := i
		for i < n && s[i] != '\n' {
			i++
		}
		return strings.TrimSpace(s[j:i])
	}
	toSep := func() {
		for i < n && s[i] != '\n' && s[i] != ';' && s[i] != '}' {
			i++
		}
	}
	// delimited reads up to the unescaped delimiter d.
	delimited := func(d byte) bool {
		for i < n {
			switch {
			case s[i] == '\\':
				i += 2
			case s[i] == d:
				i++
				return true
			case s[i] == '\n' && d != '\n':
				return false
			default:
				i++
			}
		}
		return false
	}
	addr := func() bool {
		switch {
		case i < n && s[i] >= '0' && s[i] <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < n && s[i] == '$':
			i++
		case i < n && s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i+1 < n && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	for i < n {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';' || s[i] == '}' || s[i] == '{') {
			i++
		}
		if i >= n {
			break
		}
		if s[i] == '#' {
			toEOL()
			continue
		}
		if !addr() {
			return false, nil, nil, false
		}
		skipSpace()
		if i < n && s[i] == ',' {
			i++
			skipSpace()
			if i < n && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !addr() {
				return false, nil, nil, false
			}
			skipSpace()
		}
		for i < n && (s[i] == '!' || s[i] == ' ') {
			i++
		}
		if i >= n {
			return false, nil, nil, false
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}':
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'l', 'L':
			skipSpace()
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			toSep()
		case 'a', 'i', 'c':
			for {
				line := toEOL()
				if !strings.HasSuffix(line, `\`) || i >= n {
					break
				}
				i++
			}
		case 'r', 'R':
			skipSpace()
			reads = append(reads, toEOL())
		case 'w', 'W':
			skipSpace()
			writes = append(writes, toEOL())
		case 'e':
			execs = true
			toEOL()
		case 's', 'y':
			if i >= n || s[i] == '\n' || s[i] == '\\' {
				return false, nil, nil, false
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return false, nil, nil, false
			}
			if cmd == 'y' {
				break
			}
		flags:
			for i < n {
				switch c := s[i]; {
				case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || c >= '0' && c <= '9':
					i++
				case c == 'e':
					execs = true
					i++
				case c == 'w':
					i++
					skipSpace()
					writes = append(writes, toEOL())
					break flags
				default:
					break flags
				}
			}
		default:
			return false, nil, nil, false
		}
	}
	return execs, writes, reads, true
}
