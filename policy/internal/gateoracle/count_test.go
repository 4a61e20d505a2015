package gateoracle

import (
	"fmt"
	"os"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
)

func TestCount(t *testing.T) {
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
