package abspath

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPaths(t *testing.T) {
	for _, tt := range []struct {
		p, dir        string
		within, below bool
	}{
		{"/a/b", "/a", true, true},
		{"/a", "/a", true, false},
		{"/ab", "/a", false, false},
		{"/a", "/a/b", false, false},
		{"/a", "/", true, true},
		{"/", "/", true, false},
		{"a", "/", false, false},
	} {
		assert.Equal(t, tt.within, Within(tt.p, tt.dir), "Within(%q, %q)", tt.p, tt.dir)
		assert.Equal(t, tt.below, Below(tt.p, tt.dir), "Below(%q, %q)", tt.p, tt.dir)
	}
	assert.True(t, WithinAny("/x/y", []string{"/a", "/x"}))
	assert.False(t, WithinAny("/x/y", []string{"/a"}))
	assert.Equal(t, 0, Depth("/"))
	assert.Equal(t, 2, Depth("/a/b"))
	assert.Equal(t, "/", Parent("/a"))
	assert.Equal(t, "/", Parent("/"))
	assert.Equal(t, "/a", Parent("/a/b"))
	assert.Equal(t, "/a", Join("/", "a"))
	assert.Equal(t, "/a/b", Join("/a", "b"))
	assert.Equal(t, "/a", Join("/a", "."))
	assert.Equal(t, "/a", Join("/a", ""))
}

func TestTops(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"/a/b", "/a", "/a-b", "/a/b/c", "/a"}, []string{"/a", "/a-b"}},
		{[]string{"/x", "/", "/y/z"}, []string{"/"}},
		{[]string{"/b", "/a/c", "/a/b"}, []string{"/a/b", "/a/c", "/b"}},
	} {
		if got := Tops(slices.Clone(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("Tops(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
