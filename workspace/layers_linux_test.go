//go:build linux

package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// TestLayeredProtectExtras: protect patterns of a layered policy are
// guarded like the defaults (found by an attack review: the guard knew
// protect rules by their name, "protect[i]", which a layer prefixes, so a
// managed protect: [deploy.sh] created during a command stayed under
// bwrap). The twin: the same without the pattern keeps the file.
func TestLayeredProtectExtras(t *testing.T) {
	for _, b := range []struct {
		name string
		x    func(t *testing.T) executor.Executor
	}{
		{"bwrap", func(t *testing.T) executor.Executor { return newBwrapX(t, bwrap.Config{}) }},
		{"landlock", func(t *testing.T) executor.Executor { return newLandlockX(t, landlock.Config{}) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			for _, protect := range []bool{true, false} {
				f := newAutoFixture(t)
				managed := "mode: coding\n"
				if protect {
					managed += "protect: [deploy.sh]\n"
				}
				layers := []policy.Layer{
					{Kind: policy.LayerManaged, File: "/etc/cordon/policy.yaml", Spec: mustSpec(t, managed)},
					{Kind: policy.LayerUser, File: "user.yaml", Spec: mustSpec(t, "command_rules: [{pattern: touch, action: allow}]\n")},
				}
				s := f.open(t, b.x(t), workspace.WithPolicyLayers(layers...), workspace.WithApprover(allowAll))
				_, err := s.Run(t.Context(), `g=deploy; echo pwned > "$g.sh"`, "", 0)
				require.NoError(t, err)
				_, statErr := os.Stat(filepath.Join(f.root, "deploy.sh"))
				if protect {
					assert.ErrorIs(t, statErr, os.ErrNotExist, "a layered protect pattern is guarded")
				} else {
					assert.NoError(t, statErr, "twin: without the pattern the file stays")
				}
			}
		})
	}
}
