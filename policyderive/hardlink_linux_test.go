//go:build linux

package policyderive

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// Another name of a denied or protected file is masked like the file:
// `ln docs/notes.md docs/.env.production`, then a secret written in place
// into .env.production, must not be readable through notes.md.
func TestDeriveMasksOtherNamesOfLinkedFiles(t *testing.T) {
	base := fixture(t, "ws/docs/notes.md", "ws/a.txt", "ws/.vscode/settings.json", "ws/secrets/k", "ws/src/")
	root := base + "/ws"
	link := func(old, new string) { require.NoError(t, os.Link(root+"/"+old, root+"/"+new)) }
	link("docs/notes.md", "docs/.env.production")
	link("a.txt", "src/b.txt")                         // twin: neither name is denied
	link(".vscode/settings.json", "src/settings-copy") // another name of a protected file
	link("secrets/k", "src/k-copy")                    // a file below a hidden directory

	p := policy.Coding.Policy()
	p.Secrets = []string{}
	p.DeniedPaths = []string{".env*", "secrets/"}
	pr, err := Derive(p, root, "", "", nil)
	require.NoError(t, err)
	got := map[string]Mask{}
	for _, m := range pr.Masks {
		if m.Reason == "hard link" {
			got[m.Path] = m
		}
	}
	require.Contains(t, got, root+"/docs/notes.md")
	assert.Equal(t, Hide, got[root+"/docs/notes.md"].Kind)
	assert.Equal(t, root+"/docs/.env.production", got[root+"/docs/notes.md"].For)
	require.Contains(t, got, root+"/src/settings-copy")
	assert.Equal(t, ReadOnly, got[root+"/src/settings-copy"].Kind, "another name of a protected file stays readable, not writable")
	require.Contains(t, got, root+"/src/k-copy")
	assert.Equal(t, Hide, got[root+"/src/k-copy"].Kind)
	assert.Len(t, got, 3, "the twin pair a.txt/src/b.txt is not masked: %v", got)

	// The twin: without the denial, the linked name is not masked.
	q := p.Clone()
	q.DeniedPaths = nil
	q.Protect = policy.Protect{Disabled: true}
	pr, err = Derive(q, root, "", "", nil)
	require.NoError(t, err)
	assert.NotContains(t, maskPaths(pr), root+"/docs/notes.md")
}
