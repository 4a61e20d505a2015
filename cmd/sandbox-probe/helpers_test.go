package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/workspace"
)

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", maxBatchLine+10)
	r := bufio.NewReaderSize(strings.NewReader("a\r\n\nb"+"\n"+long+"\nc"), 16)
	var got []string
	for {
		line, err := readLine(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errLineTooLong) {
			got = append(got, "<too long>")
			continue
		}
		require.NoError(t, err)
		got = append(got, string(line))
	}
	assert.Equal(t, []string{"a", "", "b", "<too long>", "c"}, got)
}

func TestWrapText(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"short", 40, []string{"short"}},
		{"one two three four five six", 20, []string{"one two three four", "five six"}},
		{strings.Repeat("a", 30) + " b", 20, []string{strings.Repeat("a", 30), "b"}},
		{"no wrap below twenty columns at all", 10, []string{"no wrap below twenty columns at all"}},
	} {
		assert.Equal(t, tc.want, wrapText(tc.in, tc.width), tc.in)
	}
}

func TestTableAlignsPaintedCells(t *testing.T) {
	for _, p := range []palette{{}, {on: true}} {
		var b strings.Builder
		tab := &table{header: []string{"a", "bb"}}
		tab.add(cell{text: "long cell", paint: p.red}, cell{text: "x"})
		tab.addText("s", "y")
		require.NoError(t, tab.write(&b, p))
		if !p.on {
			assert.Equal(t, "a          bb\nlong cell  x\ns          y\n", b.String())
			continue
		}
		assert.Equal(t, "\x1b[1ma\x1b[0m          \x1b[1mbb\x1b[0m\n\x1b[31mlong cell\x1b[0m  x\ns          y\n", b.String(),
			"padding stays outside the colour")
	}
}

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		d      []time.Duration
		p      int
		want   time.Duration
		reason string
	}{
		{ms(1, 2, 3), 50, 2 * time.Millisecond, "odd median"},
		{ms(1, 2, 3, 4), 50, 2500 * time.Microsecond, "even median: mean of the middle two"},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 95, 19 * time.Millisecond, "nearest rank"},
		{ms(7), 95, 7 * time.Millisecond, "one sample"},
	} {
		assert.Equal(t, tc.want, percentile(tc.d, tc.p), tc.reason)
	}
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		res  workspace.RunResult
		want int
	}{
		{workspace.RunResult{ExitCode: 0}, 0},
		{workspace.RunResult{ExitCode: 7}, 7},
		{workspace.RunResult{ExitCode: -1, Signal: syscall.SIGKILL.String()}, 137},
		{workspace.RunResult{ExitCode: -1, Signal: syscall.SIGTERM.String()}, 143},
		{workspace.RunResult{ExitCode: -1, Signal: "no such signal"}, 137},
		{workspace.RunResult{ExitCode: -1, TimedOut: true, Signal: syscall.SIGKILL.String()}, exitTimedOut},
	} {
		assert.Equal(t, tc.want, exitStatus(&tc.res), "%+v", tc.res)
	}
}

func TestCommandLine(t *testing.T) {
	assert.Equal(t, "make && make test", commandLine([]string{"make && make test"}))
	assert.Equal(t, `exec ls -la 'my dir' 'it'\''s'`, commandLine([]string{"ls", "-la", "my dir", "it's"}))
}

func TestOneLine(t *testing.T) {
	assert.Equal(t, "a; b; c", oneLine("a\n  b\r\nc\n"))
	assert.Equal(t, "plain", oneLine(" plain "))
}

// TestParseBackends: a bad --backend is a usage error (the parsing itself
// is cmd/internal/backends's, tested there).
func TestParseBackends(t *testing.T) {
	list, err := parseBackends([]string{"bwrap,local"})
	require.NoError(t, err)
	assert.Len(t, list, 2)
	for _, bad := range [][]string{{"nosuch"}, {","}, {"bwrap,nosuch"}} {
		_, err := parseBackends(bad)
		var ee *exitError
		require.ErrorAs(t, err, &ee, "%q", bad)
		assert.Equal(t, exitSetup, ee.code)
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "/dev/null is a character device but no terminal")
	assert.False(t, isTerminal(&strings.Builder{}))
	assert.False(t, newPalette("auto", f).on)
	assert.True(t, newPalette("always", f).on)
	t.Setenv("NO_COLOR", "1")
	assert.False(t, newPalette("auto", os.Stdout).on)
}

func TestAccessNames(t *testing.T) {
	assert.Equal(t, []string{"execute", "read_file"}, accessNames(stringer("{execute,read_file}")))
	assert.Equal(t, []string{}, accessNames(stringer("∅")))
}

type stringer string

func (s stringer) String() string { return string(s) }

// TestTrees: --tree sizes parse (a k suffix, nm:N) and bad ones are
// usage errors naming the value; a generated tree holds what its row
// says: the files, and the ones the secrets policy denies.
func TestTrees(t *testing.T) {
	got, err := parseTrees([]string{"1k", "250", "nm:2k"})
	require.NoError(t, err)
	assert.Equal(t, []treeSpec{{Files: 1000}, {Files: 250}, {Masked: 2000}}, got)
	for _, bad := range []string{"", "x", "0", "-5", "3000k", "nm:"} {
		_, err := parseTrees([]string{bad})
		assert.ErrorContains(t, err, "--tree", "%q", bad)
	}
	dir := t.TempDir()
	require.NoError(t, makeTree(dir, treeSpec{Files: 1050}))
	files, masked, err := countTree(dir)
	require.NoError(t, err)
	assert.Equal(t, 1050+2*3, files, "1,050 files in 11 directories, the first and the eleventh with three secrets each")
	assert.Equal(t, 2*3, masked)
	dir = t.TempDir()
	require.NoError(t, makeTree(dir, treeSpec{Masked: 12}))
	files, masked, err = countTree(dir)
	require.NoError(t, err)
	assert.Equal(t, 12, masked)
	assert.Equal(t, 12+3*5, files, "three packages of five ordinary files")
}
