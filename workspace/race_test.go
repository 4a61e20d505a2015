//go:build linux

package workspace_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// swapper exchanges two directory entries atomically (renameat2
// RENAME_EXCHANGE) in a loop until stopped.
type swapper struct {
	a, b  string
	stop  chan struct{}
	done  chan struct{}
	swaps atomic.Int64
}

func startSwapper(t *testing.T, a, b, linkTarget string) *swapper {
	t.Helper()
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("requires renameat2(RENAME_EXCHANGE) on the temporary directory's file system: %v", err)
	}
	sw := &swapper{a: a, b: b, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sw.done)
		for {
			select {
			case <-sw.stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE) == nil {
				sw.swaps.Add(1)
			}
			runtime.Gosched() // let the tools see both states
			// An allowed write may replace the link itself by a regular
			// file (it writes the judged path); put the link back.
			if !isLink(a) && !isLink(b) {
				_ = os.Remove(b)
				_ = os.Symlink(linkTarget, b)
			}
		}
	}()
	t.Cleanup(sw.halt)
	return sw
}

func isLink(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode()&fs.ModeSymlink != 0
}

func (sw *swapper) halt() {
	select {
	case <-sw.stop:
	default:
		close(sw.stop)
	}
	<-sw.done
}

// raceOutcome counts what the file tools did while the swapper ran.
type raceOutcome struct {
	ok, denied, changed, other atomic.Int64
}

func (o *raceOutcome) record(t *testing.T, err error) {
	var de *policy.DeniedError
	switch {
	case err == nil:
		o.ok.Add(1)
	case errors.As(err, &de):
		o.denied.Add(1)
	case errors.Is(err, workspace.ErrPathChanged):
		o.changed.Add(1)
	case errors.Is(err, fs.ErrNotExist):
		o.other.Add(1) // the entry was mid-exchange
	default:
		o.other.Add(1)
		t.Errorf("unexpected error: %v", err)
	}
}

// seenBoth reports whether both successes and refusals happened.
func (o *raceOutcome) seenBoth() bool {
	return o.ok.Load() > 0 && o.denied.Load()+o.changed.Load() > 0
}

func treeHash(t *testing.T, dir string) [32]byte {
	t.Helper()
	h := sha256.New()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\n", p)
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	}))
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// TestSwapRace flips a symbolic link between an allowed file (or
// directory) and a denied one while other goroutines run thousands of
// ReadText and WriteText calls: the denied content is never returned and
// never modified. A naive os.ReadFile of the same path in the same loop is
// the control: it does read the denied content, so the race is real.
func TestSwapRace(t *testing.T) {
	const iterations = 2000
	tests := []struct {
		name string
		// setup returns the path the tools use and the two entries to
		// exchange (one of them a link into the denied tree).
		setup func(t *testing.T, f fixture) (path string, a, b, target string)
	}{
		{"directory component", func(t *testing.T, f fixture) (string, string, string, string) {
			write(t, f.root, "dir/file.txt", "ALLOWED\n")
			write(t, f.outside, "secret/file.txt", "SECRET\n")
			write(t, f.outside, "secret/only-secret.txt", "SECRET\n") // a name ListFiles must never show
			require.NoError(t, os.Symlink(filepath.Join(f.outside, "secret"), filepath.Join(f.root, "alt")))
			return "dir/file.txt", filepath.Join(f.root, "dir"), filepath.Join(f.root, "alt"), filepath.Join(f.outside, "secret")
		}},
		{"final component", func(t *testing.T, f fixture) (string, string, string, string) {
			write(t, f.root, "file.txt", "ALLOWED\n")
			write(t, f.outside, "secret/file.txt", "SECRET\n")
			require.NoError(t, os.Symlink(filepath.Join(f.outside, "secret", "file.txt"), filepath.Join(f.root, "alt")))
			return "file.txt", filepath.Join(f.root, "file.txt"), filepath.Join(f.root, "alt"), filepath.Join(f.outside, "secret", "file.txt")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			path, a, b, target := tt.setup(t, f)
			secret := filepath.Join(f.outside, "secret")
			before := treeHash(t, secret)
			s := f.open(t, workspace.WithDeniedPaths(f.outside), workspace.WithApprover(allowAll))

			// Control without the swapper: both operations work.
			r, err := s.ReadText(ctx, path, 0, 0)
			require.NoError(t, err)
			require.Equal(t, "ALLOWED\n", r.Content)

			sw := startSwapper(t, a, b, target)
			var reads, writes raceOutcome
			var naiveSecret, greps, edits, lists atomic.Int64
			var wg sync.WaitGroup
			wg.Add(6)
			go func() {
				defer wg.Done()
				for i := 0; i < iterations; i++ {
					r, err := s.ListFiles(ctx, filepath.Dir(path), "", true, 0)
					if err != nil {
						continue
					}
					lists.Add(1)
					for _, e := range r.Entries {
						if strings.Contains(e.Path, "only-secret") {
							t.Errorf("ListFiles listed the denied directory: %s", e.Path)
						}
					}
				}
			}()
			// Each loop runs at least iterations times, and on (up to ten
			// times longer) until it has seen both outcomes, so an unlucky
			// schedule cannot make the controls below vacuous.
			more := func(i int, seen func() bool) bool { return i < iterations || (!seen() && i < 10*iterations) }
			go func() {
				defer wg.Done()
				for i := 0; more(i, reads.seenBoth); i++ {
					r, err := s.ReadText(ctx, path, 0, 0)
					reads.record(t, err)
					if err == nil && r.Content != "ALLOWED\n" && !strings.HasPrefix(r.Content, "W") {
						t.Errorf("ReadText returned %q", r.Content)
					}
				}
			}()
			go func() {
				defer wg.Done()
				for i := 0; more(i, writes.seenBoth); i++ {
					_, err := s.WriteText(ctx, path, fmt.Sprintf("W%d\n", i), false)
					writes.record(t, err)
				}
			}()
			// Grep and EditText open the same way: Grep must never show
			// the denied file's line, EditText never change it (the tree
			// hash below).
			go func() {
				defer wg.Done()
				for i := 0; i < iterations; i++ {
					r, err := s.Grep(ctx, "SECRET", path, "", workspace.GrepOptions{})
					if err == nil {
						greps.Add(1)
						if len(r.Matches) > 0 {
							t.Errorf("Grep reached the denied file: %+v", r.Matches)
						}
					}
				}
			}()
			go func() {
				defer wg.Done()
				for i := 0; i < iterations; i++ {
					if _, err := s.EditText(ctx, path, "SECRET", "EDITED", false); err == nil {
						edits.Add(1)
					}
				}
			}()
			go func() {
				defer wg.Done()
				for i := 0; more(i, func() bool { return naiveSecret.Load() > 0 }); i++ {
					if b, err := os.ReadFile(filepath.Join(f.root, path)); err == nil && string(b) == "SECRET\n" {
						naiveSecret.Add(1)
					}
				}
			}()
			wg.Wait()
			sw.halt()

			assert.Equal(t, before, treeHash(t, secret), "the denied tree is unmodified")
			assert.Positive(t, reads.ok.Load(), "some reads succeeded")
			assert.Positive(t, writes.ok.Load(), "some writes succeeded")
			assert.Positive(t, reads.denied.Load()+reads.changed.Load(), "some reads were refused")
			assert.Positive(t, naiveSecret.Load(), "control: a naive read of the same path does reach the denied file")
			assert.Positive(t, greps.Load(), "some greps ran")
			assert.Positive(t, lists.Load(), "some listings ran")
			assert.Zero(t, edits.Load(), "no edit found SECRET to replace: it is only in the denied file")
			t.Logf("swaps %d; reads ok %d denied %d changed %d other %d; writes ok %d denied %d changed %d other %d; naive secret reads %d",
				sw.swaps.Load(), reads.ok.Load(), reads.denied.Load(), reads.changed.Load(), reads.other.Load(),
				writes.ok.Load(), writes.denied.Load(), writes.changed.Load(), writes.other.Load(), naiveSecret.Load())
		})
	}
}

// TestConcurrentWritesNeverInterleave runs several writers of large,
// distinct contents on one file while readers read it raw: every read sees
// exactly one writer's full content.
func TestConcurrentWritesNeverInterleave(t *testing.T) {
	f := newFixture(t)
	s := f.open(t)
	const writers, rounds = 6, 20
	contents := make(map[string]bool, writers)
	var list []string
	for i := range writers {
		c := strings.Repeat(fmt.Sprintf("writer %d line\n", i), 20000) // ~300 KB
		contents[c] = true
		list = append(list, c)
	}
	_, err := s.WriteText(ctx, "shared.txt", list[0], false)
	require.NoError(t, err)
	target := filepath.Join(f.root, "shared.txt")

	stop := make(chan struct{})
	var readerWG, writerWG sync.WaitGroup
	var reads atomic.Int64
	for range 2 {
		readerWG.Add(1)
		go func() {
			defer readerWG.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				b, err := os.ReadFile(target)
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				if !contents[string(b)] {
					t.Errorf("a read saw mixed content (%d bytes)", len(b))
					return
				}
				reads.Add(1)
			}
		}()
	}
	for i := range writers {
		writerWG.Add(1)
		go func() {
			defer writerWG.Done()
			for range rounds {
				if _, err := s.WriteText(ctx, "shared.txt", list[i], false); err != nil {
					t.Errorf("write: %v", err)
				}
			}
		}()
	}
	writerWG.Wait()
	close(stop)
	readerWG.Wait()
	assert.True(t, contents[read(t, target)], "the final content is one writer's")
	assert.Positive(t, reads.Load())
	// A second workspace on the same root has its own locks: the atomic
	// rename alone keeps writes whole.
	s2 := f.open(t)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(2)
		go func() { defer wg.Done(); _, _ = s.WriteText(ctx, "shared.txt", list[i], false) }()
		go func() { defer wg.Done(); _, _ = s2.WriteText(ctx, "shared.txt", list[(i+1)%writers], false) }()
	}
	wg.Wait()
	assert.True(t, contents[read(t, target)])
}

// TestSessionConcurrentUse runs every kind of operation from many
// goroutines at once (meaningful under -race).
func TestSessionConcurrentUse(t *testing.T) {
	f := newFixture(t)
	for i := range 20 {
		write(t, f.root, fmt.Sprintf("src/f%02d.txt", i), "needle\n")
	}
	s := f.open(t, workspace.WithMode(policy.Trusted))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				name := fmt.Sprintf("out/g%d-%d.txt", g, i)
				_, err := s.WriteText(ctx, name, "x\n", false)
				assert.NoError(t, err)
				_, err = s.EditText(ctx, name, "x", "y", false)
				assert.NoError(t, err)
				_, err = s.ReadText(ctx, name, 0, 0)
				assert.NoError(t, err)
				_, err = s.ListFiles(ctx, "src", "", false, 0)
				assert.NoError(t, err)
				_, err = s.Grep(ctx, "needle", "src", "", workspace.GrepOptions{})
				assert.NoError(t, err)
				_, err = s.BackgroundProcesses()
				assert.NoError(t, err)
			}
			r, err := s.Run(ctx, "echo hi", "", 0)
			assert.NoError(t, err)
			assert.Equal(t, "hi\n", r.Stdout)
			p, err := s.Spawn(ctx, "sleep 1000", "")
			if assert.NoError(t, err) {
				_, err = s.KillProcess(p.ID)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
}
