package workspace

import (
	"context"
	"testing"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tempDirExecutor is executor.Local with a temporary directory of its own.
type tempDirExecutor struct {
	executor.Local
	dir string
}

func (e *tempDirExecutor) TempDir() string { return e.dir }

var allowPrintf = WithCommandRules(policy.CommandRule{Pattern: "printf", Action: policy.Allow})

func TestTMPDIRFromExecutor(t *testing.T) {
	root := t.TempDir()
	dir := t.TempDir()
	t.Setenv("TMPDIR", "/nonexistent-host-tmp")
	ws, err := Local(root, allowPrintf, WithExecutor(&tempDirExecutor{dir: dir}))
	require.NoError(t, err)
	s, err := ws.Open(context.Background())
	require.NoError(t, err)
	defer s.Close()
	res, err := s.Run(context.Background(), `printf %s "$TMPDIR"`, "", 0)
	require.NoError(t, err)
	assert.Equal(t, dir, string(res.Stdout), "the executor's temporary directory wins over the host's TMPDIR")

	// An explicit WithEnv TMPDIR wins over the executor's.
	ws, err = Local(root, allowPrintf, WithExecutor(&tempDirExecutor{dir: dir}), WithEnv(map[string]string{"TMPDIR": "/mine"}))
	require.NoError(t, err)
	s2, err := ws.Open(context.Background())
	require.NoError(t, err)
	defer s2.Close()
	res, err = s2.Run(context.Background(), `printf %s "$TMPDIR"`, "", 0)
	require.NoError(t, err)
	assert.Equal(t, "/mine", string(res.Stdout))

	// The plain local executor keeps the host's value (the allowed twin).
	ws, err = Local(root, allowPrintf)
	require.NoError(t, err)
	s3, err := ws.Open(context.Background())
	require.NoError(t, err)
	defer s3.Close()
	res, err = s3.Run(context.Background(), `printf %s "$TMPDIR"`, "", 0)
	require.NoError(t, err)
	assert.Equal(t, "/nonexistent-host-tmp", string(res.Stdout))
}
