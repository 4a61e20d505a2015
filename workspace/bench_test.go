package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/stretchr/testify/require"
)

// BenchmarkGrep searches a generated tree of 20,000 files (100 directories
// of 200 files of about 1 KiB, one match in every 200th file) for a
// literal, through the whole policy-checked, race-safe path.
//
//	go test -run '^$' -bench BenchmarkGrep ./workspace/
func BenchmarkGrep(b *testing.B) {
	base, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	root := filepath.Join(base, "root")
	body := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit\n", 18)
	n := 0
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", d))
		require.NoError(b, os.MkdirAll(dir, 0o755))
		for f := range 200 {
			content := body
			if n%200 == 0 {
				content += "needle here\n"
			}
			require.NoError(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d.txt", f)), []byte(content), 0o644))
			n++
		}
	}
	ws, err := workspace.Local(root, workspace.WithHome(""))
	require.NoError(b, err)
	s, err := ws.Open(ctx)
	require.NoError(b, err)
	defer s.Close()
	b.ResetTimer()
	for b.Loop() {
		r, err := s.Grep(ctx, "needle", "", "", workspace.GrepOptions{Limit: 100, MaxPerFile: 1})
		if err != nil {
			b.Fatal(err)
		}
		if r.FilesSearched != 20000 || len(r.Matches) != 100 {
			b.Fatalf("searched %d files, %d matches", r.FilesSearched, len(r.Matches))
		}
	}
	b.ReportMetric(float64(20000), "files/op")
}
