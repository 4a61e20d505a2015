//go:build linux

package gateoracle

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Entry is one command of a corpus file.
type Entry struct {
	Command string
	// Class is the most recent "# class: NAME" (or "# group: NAME")
	// header before the command.
	Class string
	Line  int
}

// LoadCorpus reads a corpus file: one command per line; blank lines and
// lines starting with "#" are skipped ("# class: NAME" names the class of
// the commands after it); a line starting with a double quote is a Go
// string literal, for commands with newlines or other escapes.
func LoadCorpus(name string) ([]Entry, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	class := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.TrimSpace(l) == "":
			continue
		case strings.HasPrefix(l, "#"):
			h := strings.TrimSpace(strings.TrimPrefix(l, "#"))
			for _, p := range []string{"class:", "group:"} {
				if v, ok := strings.CutPrefix(h, p); ok {
					class = strings.TrimSpace(v)
				}
			}
			continue
		case strings.HasPrefix(l, `"`):
			s, err := strconv.Unquote(l)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			l = s
		}
		out = append(out, Entry{Command: l, Class: class, Line: n})
	}
	return out, sc.Err()
}
