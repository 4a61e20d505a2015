package main

import (
	"io"
	"strings"
	"unicode/utf8"
)

// wrapWidth is the line width human output wraps long explanations at.
const wrapWidth = 120

// cell is one table cell: its text, and how to paint it once padded.
type cell struct {
	text  string
	paint func(string) string
}

// table is a plain text table whose column widths come from the unpainted
// text, so colour escapes never shift columns.
type table struct {
	header []string
	rows   [][]cell
	// gap separates columns.
	gap string
	// wrap, when positive, wraps the last column so that lines stay within
	// wrap runes, continuing under the column's start.
	wrap int
}

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// addText adds a row of unpainted cells.
func (t *table) addText(texts ...string) {
	row := make([]cell, len(texts))
	for i, s := range texts {
		row[i] = cell{text: s}
	}
	t.add(row...)
}

func (t *table) write(w io.Writer, p palette) error {
	gap := t.gap
	if gap == "" {
		gap = "  "
	}
	n := len(t.header)
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	width := make([]int, n)
	for i, h := range t.header {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c.text))
		}
	}
	var b strings.Builder
	line := func(cells []cell) {
		if t.wrap > 0 && len(cells) > 0 {
			indent := 0
			for i := 0; i < len(cells)-1; i++ {
				indent += width[i] + utf8.RuneCountInString(gap)
			}
			last := cells[len(cells)-1]
			parts := wrapText(last.text, t.wrap-indent)
			if len(parts) > 1 {
				cells = append(cells[:len(cells)-1:len(cells)-1], cell{text: parts[0], paint: last.paint})
				defer func() {
					for _, p := range parts[1:] {
						s := p
						if last.paint != nil {
							s = last.paint(p)
						}
						b.WriteString(strings.Repeat(" ", indent) + s + "\n")
					}
				}()
			}
		}
		var l strings.Builder
		for i, c := range cells {
			s := c.text
			if i < len(cells)-1 {
				s += strings.Repeat(" ", width[i]-utf8.RuneCountInString(c.text)) + gap
			}
			if c.paint != nil {
				// Paint the text only, not the padding.
				pad := s[len(c.text):]
				s = c.paint(c.text) + pad
			}
			l.WriteString(s)
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	if len(t.header) > 0 {
		h := make([]cell, len(t.header))
		for i, s := range t.header {
			h[i] = cell{text: s, paint: p.bold}
		}
		line(h)
	}
	for _, r := range t.rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapText splits s into lines of at most width runes at spaces (a word
// longer than width stays whole). A width under 20 does not wrap.
func wrapText(s string, width int) []string {
	if width < 20 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var lines []string
	var cur strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		wl := utf8.RuneCountInString(w)
		if n > 0 && n+1+wl > width {
			lines = append(lines, cur.String())
			cur.Reset()
			n = 0
		}
		if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(w)
		n += wl
	}
	if n > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
