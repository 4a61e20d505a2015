package backends_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/cmd/internal/backends"
)

func TestParse(t *testing.T) {
	list, err := backends.Parse([]string{"bwrap,local", "bwrap", " landlock "})
	require.NoError(t, err)
	var names []string
	for _, b := range list {
		names = append(names, b.Name)
	}
	assert.Equal(t, []string{"bwrap", "local", "landlock"}, names, "order kept, duplicates dropped")

	_, err = backends.Parse([]string{"bwrap,nosuch"})
	var ue *backends.UnknownError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "nosuch", ue.Name)
	assert.Contains(t, err.Error(), "landlock", "the error lists the known backends")

	_, err = backends.Parse([]string{" , "})
	assert.Error(t, err, "a list naming nothing")
	list, err = backends.Parse(nil)
	assert.NoError(t, err)
	assert.Empty(t, list)
}

func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range backends.All {
		assert.False(t, seen[b.Name], "duplicate %s", b.Name)
		seen[b.Name] = true
		if b.New == nil {
			assert.NotEmpty(t, b.Missing, "%s has no constructor and no reason", b.Name)
		}
	}
	for _, name := range []string{"landlock", "bwrap", "docker", "seatbelt", "local"} {
		assert.True(t, seen[name], "the README's backend matrix names backend %s", name)
	}
	for _, name := range backends.AutoOrder {
		b, err := backends.Lookup(name)
		require.NoError(t, err, name)
		assert.True(t, b.Sandboxed, "auto considers only OS sandboxes: %s", name)
	}
	assert.False(t, slices.Contains(backends.AutoOrder, "local"))
	local, err := backends.Lookup("local")
	require.NoError(t, err)
	av := local.Check(t.Context(), backends.Options{})
	assert.True(t, av.Available)
	assert.False(t, av.Sandboxed)
}

func TestAutoNeverLocal(t *testing.T) {
	b, x, err := backends.Auto(t.Context(), backends.Options{})
	if err != nil {
		assert.Contains(t, err.Error(), "no OS sandbox backend is usable", "the error says so")
		assert.Nil(t, x)
		return
	}
	defer backends.Close(x)
	assert.True(t, b.Sandboxed, "auto chose %s", b.Name)
	assert.Equal(t, b.Name, backends.AutoOrder[slices.IndexFunc(backends.AutoOrder, func(n string) bool {
		c, _ := backends.Lookup(n)
		return c.Check(t.Context(), backends.Options{}).Available
	})], "auto chose the first available in AutoOrder")
}
