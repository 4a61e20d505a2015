package shellscan

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func summarize(r *Result) string {
	var sb strings.Builder
	for _, s := range r.Segments {
		fmt.Fprintf(&sb, "SEG %q dyn=%q opq=%q\n", s.Text, s.Dynamic, s.Opaque)
		for _, f := range s.Forms {
			var ws []string
			for _, w := range f.Words {
				ws = append(ws, fmt.Sprintf("%s/%d", w.Value, w.Kind))
			}
			fmt.Fprintf(&sb, "   form wrapper=%v tail=%v %v\n", f.Wrapper, f.OpenTail, ws)
		}
	}
	for _, c := range r.Claims {
		fmt.Fprintf(&sb, "CLAIM %s %q path=%q glob=%q dir=%q src=%s unres=%q\n", c.Op, c.Arg, c.Path, c.Glob, c.Dir, c.Source, c.Unresolved)
	}
	return sb.String()
}

func TestDebugScan(t *testing.T) {
	cmd := os.Getenv("SCAN")
	if cmd == "" {
		t.Skip("SCAN not set")
	}
	for _, c := range strings.Split(cmd, "\n@@\n") {
		fmt.Printf("=== %s\n%s", c, summarize(Scan(c, Options{Home: "/home/u"})))
	}
}
