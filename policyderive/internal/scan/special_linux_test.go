//go:build linux

package scan

import (
	"context"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func matchPaths(res *Result) []string {
	var out []string
	for _, m := range res.Matches {
		out = append(out, m.Path)
	}
	return out
}

// A Socket pattern matches the Unix sockets and nothing else; an Inode
// pattern the non-directory entries with the inode numbers it accepts.
// Through a cache, a socket or a link made after the first search is
// found by the next one.
func TestSearchSocketsAndInodes(t *testing.T) {
	base, err := os.MkdirTemp("/tmp", "scs") // socket paths are short
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	mkTree(t, base, "ws/a/file", "ws/b/")
	l, err := net.Listen("unix", base+"/ws/a/d.sock")
	require.NoError(t, err)
	defer l.Close()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(base+"/ws/a/file", &st))
	never := func(string, string, bool) bool { return false }
	req := &Request{Root: base + "/ws", Patterns: []Pattern{
		{Key: "sockets", Match: never, Socket: true},
		{Key: "inode", Match: never, Inode: func(ino uint64) bool { return ino == st.Ino }},
	}}
	c := NewCache(Options{})
	defer c.Close()
	for _, search := range []func() (*Result, error){
		func() (*Result, error) { return Search(context.Background(), req) },
		func() (*Result, error) { return c.Search(context.Background(), req) },
	} {
		res, err := search()
		require.NoError(t, err)
		assert.Equal(t, []string{base + "/ws/a/d.sock", base + "/ws/a/file"}, matchPaths(res))
		assert.Equal(t, TypeSocket, res.Matches[0].Type)
		assert.Equal(t, []int{0}, res.Matches[0].Patterns)
		assert.Equal(t, []int{1}, res.Matches[1].Patterns)
	}
	require.NoError(t, os.Link(base+"/ws/a/file", base+"/ws/b/other"))
	l2, err := net.Listen("unix", base+"/ws/b/e.sock")
	require.NoError(t, err)
	defer l2.Close()
	res, err := c.Search(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, []string{base + "/ws/a/d.sock", base + "/ws/a/file", base + "/ws/b/e.sock", base + "/ws/b/other"}, matchPaths(res))
}

// A Private pattern matches the entries other users may not read (and the
// directories they may not enter), and neither a symlink nor a readable
// twin; a private directory is not entered. Through a cache, a chmod
// after the first search — either way — is seen by the next one, and a
// cache that listed a tree without modes reads it again for a Private
// pattern.
func TestSearchPrivate(t *testing.T) {
	base := t.TempDir()
	mkTree(t, base, "sys/pub", "sys/key", "sys/d/inner", "sys/open/x", "sys/nox/y")
	require.NoError(t, os.Chmod(base+"/sys/key", 0o600))
	require.NoError(t, os.Chmod(base+"/sys/d", 0o700))
	require.NoError(t, os.Chmod(base+"/sys/nox", 0o754))
	require.NoError(t, os.Symlink("key", base+"/sys/link"))
	never := func(string, string, bool) bool { return false }
	priv := &Request{Roots: []string{base + "/sys"}, Patterns: []Pattern{{Key: "private", Match: never, Private: true}}}
	plain := &Request{Roots: []string{base + "/sys"}, Patterns: []Pattern{{Key: "none", Match: never}}}
	want := []string{base + "/sys/d", base + "/sys/key", base + "/sys/nox"}
	c := NewCache(Options{})
	defer c.Close()
	_, err := c.Search(context.Background(), plain) // listings without modes
	require.NoError(t, err)
	for _, search := range []func() (*Result, error){
		func() (*Result, error) { return Search(context.Background(), priv) },
		func() (*Result, error) { return c.Search(context.Background(), priv) },
	} {
		res, err := search()
		require.NoError(t, err)
		assert.Equal(t, want, matchPaths(res))
	}
	require.NoError(t, os.Chmod(base+"/sys/pub", 0o640))
	require.NoError(t, os.Chmod(base+"/sys/key", 0o644))
	require.NoError(t, os.Chmod(base+"/sys/open/x", 0o400))
	res, err := c.Search(context.Background(), priv)
	require.NoError(t, err)
	assert.Equal(t, []string{base + "/sys/d", base + "/sys/nox", base + "/sys/open/x", base + "/sys/pub"}, matchPaths(res))
}
