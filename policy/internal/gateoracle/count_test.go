//go:build linux

package gateoracle

import (
	"fmt"
	"os"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
)

// TestCount writes the gate's decision on every command of the corpus
// $GATE_PRINT under each policy to $GATE_OUT as tab-separated lines, for
// comparing two versions of the gate (skipped unless both are set).
func TestCount(t *testing.T) {
	if os.Getenv("GATE_PRINT") == "" || os.Getenv("GATE_OUT") == "" {
		t.Skip("set GATE_PRINT to a corpus file and GATE_OUT to an output file")
	}
	f, err := NewFixture(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	entries, err := LoadCorpus(os.Getenv("GATE_PRINT"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.Create(os.Getenv("GATE_OUT"))
	defer out.Close()
	for _, pn := range []string{"coding", "trusted"} {
		c, err := policy.NewChecker(Policies()[pn], f.Root, f.Home)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			v, err := c.DecideCommand(e.Command, "")
			d := "error"
			if err == nil {
				d = v.Decision.String()
			}
			fmt.Fprintf(out, "%s\t%d\t%s\t%s\n", pn, e.Line, d, e.Class)
		}
	}
}
