package workspace

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"hash/maphash"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
)

// helperEnv selects a re-exec entry point of this test binary.
const helperEnv = "CORDON_WORKSPACE_TEST_HELPER"

func TestMain(m *testing.M) {
	landlock.Init()
	bwrap.Init()
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "write-and-hang":
		writeAndHang()
	default:
		os.Stderr.WriteString("unknown helper " + os.Getenv(helperEnv) + "\n")
		os.Exit(2)
	}
}

// writeAndHang writes a large new content over $ROOT/file.txt through
// WriteText and blocks after the data reached the temporary file, before
// the sync and the rename, printing "ready" so the parent can kill it there.
func writeAndHang() {
	root := os.Getenv("ROOT")
	testHookBeforeCommit = func(tmp string) error {
		os.Stdout.WriteString("ready " + tmp + "\n")
		select {} // killed here
	}
	ws, err := Local(root, WithHome(""))
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	s, err := ws.Open(context.Background())
	if err != nil {
		os.Exit(1)
	}
	_, err = s.WriteText(context.Background(), "file.txt", strings.Repeat("new content\n", 1<<16), false)
	os.Stdout.WriteString("error: write returned " + errString(err) + "\n")
	os.Exit(1)
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func hashFile(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

func TestSelectLines(t *testing.T) {
	tests := []struct {
		name       string
		data       string
		start, end int
		max        int
		want       string
		first      int
		last       int
		total      int
		truncated  bool
	}{
		{"whole", "a\nb\nc\n", 0, 0, 100, "a\nb\nc\n", 1, 3, 3, false},
		{"no trailing newline", "a\nb\nc", 0, 0, 100, "a\nb\nc", 1, 3, 3, false},
		{"middle", "a\nb\nc\nd\n", 2, 3, 100, "b\nc\n", 2, 3, 4, false},
		{"end past total", "a\nb\n", 2, 10, 100, "b\n", 2, 2, 2, false},
		{"single line", "a\nb\nc\n", 3, 3, 100, "c\n", 3, 3, 3, false},
		{"empty file", "", 0, 0, 100, "", 0, 0, 0, false},
		{"clip at line boundary", "aaaa\nbbbb\ncccc\n", 0, 0, 11, "aaaa\nbbbb\n", 1, 2, 3, true},
		{"clip inside the first line", "aaaaaaaa\nb\n", 0, 0, 3, "aaa", 1, 1, 2, true},
		{"clip counts runes", "ééé\nb\n", 0, 0, 4, "ééé\n", 1, 1, 2, true},
		{"crlf kept", "a\r\nb\r\n", 0, 0, 100, "a\r\nb\r\n", 1, 2, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ReadResult
			selectLines(&r, []byte(tt.data), tt.start, tt.end, tt.max)
			assert.Equal(t, tt.want, r.Content)
			assert.Equal(t, tt.first, r.StartLine)
			assert.Equal(t, tt.last, r.EndLine)
			assert.Equal(t, tt.total, r.TotalLines)
			assert.Equal(t, tt.truncated, r.Truncated)
		})
	}
	t.Run("start past the end", func(t *testing.T) {
		var r ReadResult
		selectLines(&r, []byte("a\n"), 3, 0, 100)
		assert.Equal(t, -1, r.StartLine)
	})
}

func TestCheckText(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		offset int64
		ok     bool
	}{
		{"ascii", "hello\n", 0, true},
		{"utf8", "héllo ✓\n", 0, true},
		{"nul", "ab\x00cd", 2, false},
		{"latin1", "caf\xe9\n", 3, false},
		{"truncated sequence", "ok\xe2\x9c", 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkText("f", []byte(tt.data))
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			var nt *NotTextError
			require.ErrorAs(t, err, &nt)
			assert.ErrorIs(t, err, ErrNotText)
			assert.Equal(t, tt.offset, nt.Offset)
		})
	}
}

func TestTrimPartialRune(t *testing.T) {
	assert.Equal(t, "ok", string(trimPartialRune([]byte("ok\xe2\x9c"))))
	assert.Equal(t, "ok✓", string(trimPartialRune([]byte("ok✓"))))
	assert.Equal(t, "abc", string(trimPartialRune([]byte("abc"))))
}

// TestWriteFailureKeepsOriginal injects a failure after the new data
// reached the temporary file (where a failing fsync would strike): the
// original is unchanged and no temporary file is left.
func TestWriteFailureKeepsOriginal(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	target := filepath.Join(dir, "file.txt")
	require.NoError(t, os.WriteFile(target, []byte("original\n"), 0o640))
	before := hashFile(t, target)

	injected := errors.New("injected fsync failure")
	var sawTemp bool
	testHookBeforeCommit = func(tmp string) error {
		b, err := os.ReadFile(tmp)
		sawTemp = err == nil && string(b) == "replacement\n"
		return injected
	}
	t.Cleanup(func() { testHookBeforeCommit = nil })

	dh, err := openDir(dir)
	require.NoError(t, err)
	defer dh.Close()
	_, err = writeFile(dh, "file.txt", []byte("replacement\n"), false, nil)
	require.ErrorIs(t, err, injected)
	assert.True(t, sawTemp, "the data was written to the temporary file before the failure")
	assert.Equal(t, before, hashFile(t, target))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the temporary file was removed")

	// Control: without the failure the same write replaces the file and
	// keeps its mode.
	testHookBeforeCommit = nil
	action, err := writeFile(dh, "file.txt", []byte("replacement\n"), false, nil)
	require.NoError(t, err)
	assert.Equal(t, ActionUpdated, action)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "replacement\n", string(b))
	st, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), st.Mode().Perm())
}

// TestWriteKilledMidwayKeepsOriginal kills a process with SIGKILL while
// its WriteText is between writing the temporary file and renaming it: the
// original's hash is unchanged.
func TestWriteKilledMidwayKeepsOriginal(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	target := filepath.Join(dir, "file.txt")
	require.NoError(t, os.WriteFile(target, []byte(strings.Repeat("original\n", 1000)), 0o644))
	before := hashFile(t, target)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=write-and-hang", "ROOT="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper: %q %v", line, err)
	}
	tmp := strings.TrimSpace(strings.TrimPrefix(line, "ready "))
	st, err := os.Stat(tmp)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(100000), "the helper wrote the new content to the temporary file")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	assert.Equal(t, before, hashFile(t, target), "the original is intact after the kill")
	// Control: the temporary file of the killed write is left behind, which
	// shows the kill landed mid-write.
	_, err = os.Stat(tmp)
	assert.NoError(t, err)
}

func TestPathLocks(t *testing.T) {
	var l pathLocks
	unlock := l.lock("/a")
	m := &l.locks[maphash.String(l.seed, "/a")%uint64(len(l.locks))]
	assert.False(t, m.TryLock(), "the path's stripe is held")
	unlock()
	require.True(t, m.TryLock(), "control: released")
	m.Unlock()
}

// TestWriteConflict checks EditText's guard: a file replaced between the
// read and the write is not overwritten.
func TestWriteConflict(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	target := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
	dh, err := openDir(dir)
	require.NoError(t, err)
	defer dh.Close()
	_, st, err := readForEdit(dh, "f.txt", 1<<20)
	require.NoError(t, err)

	// Someone replaces the file by rename.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other"), []byte("theirs\n"), 0o644))
	require.NoError(t, os.Rename(filepath.Join(dir, "other"), target))
	_, err = writeFile(dh, "f.txt", []byte("mine\n"), false, &st)
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, ErrConflict)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "theirs\n", string(b))

	// Control: with the current file's identity the write goes through.
	_, st, err = readForEdit(dh, "f.txt", 1<<20)
	require.NoError(t, err)
	_, err = writeFile(dh, "f.txt", []byte("mine\n"), false, &st)
	require.NoError(t, err)
}
