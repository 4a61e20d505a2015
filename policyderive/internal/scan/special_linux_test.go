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
