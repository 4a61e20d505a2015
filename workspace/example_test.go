package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// Local opens a workspace on a directory with the coding preset and the
// plain local executor, writes and reads a file, and shows a denial.
func ExampleLocal() {
	root, _ := os.MkdirTemp("", "cordon-example-")
	defer os.RemoveAll(root)

	ws, err := workspace.Local(root,
		workspace.WithDeniedPaths(".env*"),
		workspace.WithCommandRules(policy.CommandRule{Pattern: "wc", Action: policy.Allow}),
		// With an OS sandbox instead of executor.Local:
		// workspace.WithExecutor(bwrap.New(bwrap.Config{})),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	s, err := ws.Open(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	w, _ := s.WriteText(ctx, "notes/todo.txt", "write tests\nship it\n", false)
	fmt.Println(w.Path, w.Action)

	r, _ := s.ReadText(ctx, "notes/todo.txt", 2, 2)
	fmt.Printf("line %d of %d: %q\n", r.StartLine, r.TotalLines, r.Content)

	run, _ := s.Run(ctx, "wc -l < notes/todo.txt", "", 0)
	fmt.Printf("wc: %s", run.Stdout)

	_, err = s.WriteText(ctx, ".env", "TOKEN=x\n", false)
	var denied *policy.DeniedError
	fmt.Println(errors.Is(err, fs.ErrPermission), errors.As(err, &denied) && denied.Decision == policy.Deny)
	// Output:
	// notes/todo.txt created
	// line 2 of 2: "ship it\n"
	// wc: 2
	// true true
}
