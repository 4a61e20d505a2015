package main

import (
	"io"
	"os"
)

// isTerminal reports whether w is a terminal (a character device that
// answers the terminal ioctl: /dev/null is a character device too, and no
// terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	return termios(int(f.Fd()))
}

// palette colours human output; the zero palette prints plain text.
type palette struct{ on bool }

// newPalette colours output for w according to --color: auto colours only
// a terminal, and never when NO_COLOR is set or TERM is dumb.
func newPalette(mode string, w io.Writer) palette {
	switch mode {
	case "always":
		return palette{on: true}
	case "never":
		return palette{}
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return palette{}
	}
	return palette{on: isTerminal(w)}
}

const (
	sgrReset  = "\x1b[0m"
	sgrRed    = "\x1b[31m"
	sgrGreen  = "\x1b[32m"
	sgrYellow = "\x1b[33m"
	sgrDim    = "\x1b[2m"
	sgrBold   = "\x1b[1m"
)

func (p palette) paint(sgr, s string) string {
	if !p.on || s == "" {
		return s
	}
	return sgr + s + sgrReset
}

func (p palette) red(s string) string    { return p.paint(sgrRed, s) }
func (p palette) green(s string) string  { return p.paint(sgrGreen, s) }
func (p palette) yellow(s string) string { return p.paint(sgrYellow, s) }
func (p palette) dim(s string) string    { return p.paint(sgrDim, s) }
func (p palette) bold(s string) string   { return p.paint(sgrBold, s) }
