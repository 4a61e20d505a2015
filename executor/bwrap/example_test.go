//go:build linux

package bwrap_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/policy"
)

// ExampleNew runs one command in a coding-mode sandbox of a workspace,
// reporting why bwrap cannot be used when it cannot.
func ExampleNew() {
	x, err := bwrap.New(bwrap.Config{})
	var ue *executor.UnavailableError
	if errors.As(err, &ue) {
		log.Fatalf("no bwrap sandbox here: %s (fix: %s)", ue.Reason, ue.Fix)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	res, err := x.Run(context.Background(), &executor.Request{
		Command: "git status --short",
		Dir:     "/work/repo",
		Root:    "/work/repo",
		Home:    "/home/user",
		Policy:  policy.Coding.Policy(),
		Env:     []string{"PATH=/usr/bin:/bin", "HOME=/home/user"},
	})
	var unenforceable *executor.UnenforceableError
	if errors.As(err, &unenforceable) {
		log.Fatalf("the policy cannot be enforced by bwrap: %v", unenforceable.Gaps)
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exit %d\n%s", res.ExitCode, res.Stdout)
}
