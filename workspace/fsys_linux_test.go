//go:build linux

package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRefusesLinks checks the race-safe open primitive directly: a
// symbolic link anywhere in the path is refused with *PathChangedError,
// while the same file through its real path opens (the control).
func TestOpenRefusesLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "f"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "linkdir")))
	require.NoError(t, os.Symlink("f", filepath.Join(real, "linkfile")))

	f, err := openFile(filepath.Join(real, "f"))
	require.NoError(t, err, "control: the real path opens")
	f.Close()
	d, err := openDir(real)
	require.NoError(t, err, "control: the real directory opens")
	d.Close()

	for _, p := range []string{
		filepath.Join(dir, "linkdir", "f"),
		filepath.Join(real, "linkfile"),
	} {
		_, err := openFile(p)
		var pc *PathChangedError
		assert.ErrorAs(t, err, &pc, p)
		assert.ErrorIs(t, err, ErrPathChanged, p)
	}
	_, err = openDir(filepath.Join(dir, "linkdir"))
	assert.ErrorIs(t, err, ErrPathChanged)

	_, err = openFile(filepath.Join(real, "missing"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// TestWalkOpenFallback exercises the openat walk used where openat2 is
// missing: the same refusals, the same control.
func TestWalkOpenFallback(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "real"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "real", "f"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "link")))

	fd, err := walkOpen(filepath.Join(dir, "real", "f"), syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	require.NoError(t, err)
	require.NoError(t, verifyFD(fd, filepath.Join(dir, "real", "f")))
	syscall.Close(fd)
	_, err = walkOpen(filepath.Join(dir, "link", "f"), syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	assert.ErrorIs(t, err, ErrPathChanged)
	_, err = walkOpen(filepath.Join(dir, "real", "f", "x"), syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	assert.ErrorIs(t, err, syscall.ENOTDIR)
	assert.NotErrorIs(t, err, ErrPathChanged)
}

// TestVerifyFDMismatch checks that a descriptor whose real path differs
// from the judged one is refused.
func TestVerifyFDMismatch(t *testing.T) {
	if !procFD() {
		t.Skip("requires /proc/self/fd")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := filepath.Join(dir, "a")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, verifyFD(int(f.Fd()), p), "control")
	err = verifyFD(int(f.Fd()), filepath.Join(dir, "b"))
	var pc *PathChangedError
	require.ErrorAs(t, err, &pc)
	assert.Equal(t, p, pc.Opened)
}
