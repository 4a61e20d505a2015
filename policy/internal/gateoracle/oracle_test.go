//go:build linux

package gateoracle

import (
	"context"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

func needOracle(t testing.TB) *Fixture {
	t.Helper()
	if why := Available(); why != "" {
		testenv.Skip(t, testenv.Bwrap, "the gate's execution oracle cannot run: %s", why)
	}
	f, err := NewFixture(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func checkers(t *testing.T, f *Fixture) map[string]*policy.Checker {
	t.Helper()
	out := map[string]*policy.Checker{}
	for name, p := range Policies() {
		c, err := policy.NewChecker(p, f.Root, f.Home)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = c
	}
	return out
}

// TestOracleSees runs commands that do what the policy forbids, without
// asking the gate, and requires the oracle to report each under every
// shell; each has an allowed twin the oracle must pass, so that neither a
// blind oracle nor one that reports everything can pass.
func TestOracleSees(t *testing.T) {
	f := needOracle(t)
	c := checkers(t, f)["coding"]
	cases := []struct{ bad, twin, want string }{
		{"cat .env", "cat a.txt", "read"},
		{"cat envlink", "cat src/main.go", "read"},
		{"cat envhard", "cat b.txt", "hard link"},
		{"cat ~/.ssh/id_rsa", "cat ~/.gitconfig >/dev/null", "read"},
		{"cat secrets/db.txt", "cat sub/a.txt", "read"},
		{"ls secrets", "ls sub", "listed"},
		{"echo x > .git/hooks/pre-commit", "echo x > src/new.txt", "wrote"},
		{"echo x > /tmp/oracle-x", "echo x > sub/new.txt", "wrote"},
		{"mkdir /tmp/oracle-d", "mkdir sub/d", "wrote"},
		{"rm a.txt", "ls a.txt", "executed"},
		{"git push -q origin main:other", "git status --short", "push"},
		{"ln .env copy", "ln a.txt copy", "linked"},
		{"cd secrets && cat api.key", "cd sub && cat a.txt", "read"},
		// A write whose name the command does not spell (git writes
		// .git/config through config.lock and a rename), in a fixture
		// that may itself live under /tmp.
		{"git branch -q -u origin/main", "git branch -q other", "protect"},
	}
	ctx := context.Background()
	for _, sh := range Shells {
		for _, tc := range cases {
			tr, err := Run(ctx, f, sh, tc.bad)
			if err != nil {
				t.Fatal(err)
			}
			vs := Judge(c, f, tr)
			if sh.Name == "busybox" && tc.want == "executed" {
				// busybox sh runs its applets (rm) without exec: the
				// oracle sees their effects, not their names.
			} else if !anyContains(vs, tc.want) {
				t.Errorf("%s: %q: the oracle saw no %q violation: %v\nevents: %v\noutput: %s", sh.Name, tc.bad, tc.want, vs, tr.Events, tr.Output)
			}
			tr, err = Run(ctx, f, sh, tc.twin)
			if err != nil {
				t.Fatal(err)
			}
			if vs := Judge(c, f, tr); len(vs) != 0 {
				t.Errorf("%s: twin %q: violations %v\noutput: %s", sh.Name, tc.twin, vs, tr.Output)
			}
			if tr.Err != nil {
				t.Errorf("%s: twin %q failed: %v: %s", sh.Name, tc.twin, tr.Err, tr.Output)
			}
		}
	}
}

func anyContains(vs []Violation, s string) bool {
	for _, v := range vs {
		if strings.Contains(v.What, s) || strings.Contains(v.Rule, s) {
			return true
		}
	}
	return false
}

// checkCorpus runs every command of the corpus that the gate allows under
// any policy, once per shell, and judges the run under each policy that
// allowed it; it fails for each violation. The runs are spread over one
// fixture per CPU.
func checkCorpus(t *testing.T, name string) (allowed map[string]int, total int) {
	if why := Available(); why != "" {
		testenv.Skip(t, testenv.Bwrap, "the gate's execution oracle cannot run: %s", why)
	}
	entries, err := LoadCorpus(name)
	if err != nil {
		t.Fatal(err)
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	fixtures := make([]*Fixture, workers)
	var cs []map[string]*policy.Checker
	for i := range fixtures {
		if fixtures[i], err = NewFixture(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, checkers(t, fixtures[i]))
	}
	names := []string{"coding", "trusted"}
	type job struct {
		e    Entry
		pols []string
	}
	var jobs []job
	allowed = map[string]int{}
	for _, e := range entries {
		var pols []string
		for _, pn := range names {
			v, err := cs[0][pn].DecideCommand(e.Command, "")
			if err == nil && v.Decision == policy.Allow {
				pols = append(pols, pn)
				allowed[pn]++
			}
		}
		if len(pols) > 0 {
			jobs = append(jobs, job{e, pols})
		}
	}
	ch := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range fixtures {
		wg.Add(1)
		go func(f *Fixture, cs map[string]*policy.Checker) {
			defer wg.Done()
			for j := range ch {
				for _, sh := range Shells {
					tr, err := Run(context.Background(), f, sh, j.e.Command)
					mu.Lock()
					if err != nil {
						t.Errorf("%s:%d: %v", name, j.e.Line, err)
						mu.Unlock()
						continue
					}
					for _, pn := range j.pols {
						for _, vi := range Judge(cs[pn], f, tr) {
							t.Errorf("%s:%d [%s] %s policy: the gate allowed %q, and the run did: %v", name, j.e.Line, j.e.Class, pn, j.e.Command, vi)
						}
					}
					mu.Unlock()
				}
			}
		}(fixtures[i], cs[i])
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return allowed, len(entries)
}

// TestAdversarialCorpus is the execution oracle over the adversarial
// corpus: no command the gate allows may do, under any of the shells,
// anything the policy denies or asks for.
func TestAdversarialCorpus(t *testing.T) {
	for _, name := range []string{"adversarial.txt", "adversarial2.txt"} {
		t.Run(name, func(t *testing.T) {
			allowed, total := checkCorpus(t, "../../testdata/gate/"+name)
			t.Logf("%d commands; allowed by the gate: %v", total, allowed)
		})
	}
}

// TestOrdinaryCorpus runs the ordinary agent commands the gate allows
// through the same oracle.
func TestOrdinaryCorpus(t *testing.T) {
	allowed, total := checkCorpus(t, "../../testdata/gate/ordinary.txt")
	t.Logf("%d commands; allowed by the gate: %v", total, allowed)
}

// TestPrintVerdicts prints the gate's verdict on every command of the
// corpus named by $GATE_PRINT under each policy, for exploring (skipped
// unless set).
func TestPrintVerdicts(t *testing.T) {
	name := os.Getenv("GATE_PRINT")
	if name == "" {
		t.Skip("set GATE_PRINT to a corpus file")
	}
	f, err := NewFixture(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	entries, err := LoadCorpus(name)
	if err != nil {
		t.Fatal(err)
	}
	cs := checkers(t, f)
	for _, e := range entries {
		for _, pn := range []string{"coding", "trusted"} {
			v, err := cs[pn].DecideCommand(e.Command, "")
			if err != nil {
				t.Logf("%s %-7s ERR %v %q", e.Class, pn, err, e.Command)
				continue
			}
			t.Logf("%s %-7s %-5v %q -- %s: %s", e.Class, pn, v.Decision, e.Command, v.Rule, v.Reason)
		}
	}
}

// FuzzGate generates commands from a grammar of bypass constructs
// (Generate) and runs every one the gate allows through the oracle: none
// may do what the policy denies or asks for. The seeds run in go test.
func FuzzGate(f *testing.F) {
	for _, s := range []string{"", "\x00\x05", "\x07\x01\x02\x03", "\x02\x11\x04\x09", "\x08\x03\x00\x10\x00",
		"\x06\x02\x00\x0c\x01", "\x09\x1a\x00\x03", "\x03\x00\x14\x02\x0b"} {
		f.Add([]byte(s))
	}
	fx := needOracle(f)
	var cs map[string]*policy.Checker
	f.Fuzz(func(t *testing.T, data []byte) {
		if cs == nil {
			cs = checkers(t, fx)
		}
		cmd := Generate(data)
		for _, pn := range []string{"coding", "trusted"} {
			v, err := cs[pn].DecideCommand(cmd, "")
			if err != nil || v.Decision != policy.Allow {
				continue
			}
			for _, sh := range Shells {
				tr, err := Run(context.Background(), fx, sh, cmd)
				if err != nil {
					t.Fatal(err)
				}
				for _, vi := range Judge(cs[pn], fx, tr) {
					t.Errorf("%s policy: the gate allowed %q, and the run did: %v", pn, cmd, vi)
				}
			}
		}
	})
}
