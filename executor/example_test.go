package executor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
)

// Local runs a command with cordon's process hygiene and no isolation.
func ExampleLocal() {
	var e executor.Executor = executor.NewLocal()
	res, err := e.Run(context.Background(), &executor.Request{
		Command: `echo "hello $WHO"; echo oops >&2; exit 3`,
		Dir:     "/",
		Env:     []string{"WHO=cordon"}, // the complete environment
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println("could not run:", err)
		return
	}
	fmt.Printf("exit %d, stdout %q, stderr %q\n", res.ExitCode, res.Stdout, res.Stderr)
	fmt.Println(e.(executor.Describer).Describe(context.Background()).Sandboxed)
	// Output:
	// exit 3, stdout "hello cordon\n", stderr "oops\n"
	// false
}
