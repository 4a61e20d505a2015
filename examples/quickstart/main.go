// Command quickstart is the README's library quick start as a complete
// program: a workspace on a directory with the coding preset, `.env*` and
// `secrets/` denied, `go test` allowed, commands sandboxed by bubblewrap
// (or Landlock, or nothing with -backend local), and every other ask put
// to the user on the terminal.
//
//	go run ./examples/quickstart -root ~/project -- go test ./...
//
// It runs the command, prints its output and the violation report meant
// for the model, then reads the first lines of a file through the
// race-safe file tool and prints the workspace's instructions.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

func main() {
	// Both executors re-execute this program as their helper: Init must
	// come first in main.
	landlock.Init()
	bwrap.Init()

	root := flag.String("root", ".", "the workspace root")
	backend := flag.String("backend", "bwrap", "the sandbox: bwrap, landlock or local (no OS sandbox)")
	file := flag.String("read", "", "a file to read through the file tool after the command (relative to the root)")
	flag.Parse()
	command := strings.Join(flag.Args(), " ")
	if command == "" {
		command = "go test ./..."
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	x, err := newExecutor(*backend)
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(2)
	}
	code, err := run(ctx, os.Stdout, *root, x, command, *file, askOnTerminal(os.Stdin, os.Stderr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// newExecutor returns the named executor.
func newExecutor(name string) (executor.Executor, error) {
	switch name {
	case "bwrap":
		return bwrap.New(bwrap.Config{})
	case "landlock":
		return landlock.New(landlock.Config{})
	case "local":
		return executor.NewLocal(), nil
	}
	return nil, fmt.Errorf("unknown backend %q (valid: bwrap, landlock, local)", name)
}

// run opens the workspace, runs command through the gate and the sandbox,
// and prints what an agent would get back. It returns the command's exit
// status.
func run(ctx context.Context, out io.Writer, root string, x executor.Executor, command, file string, ask workspace.Asker) (int, error) {
	if c, ok := x.(io.Closer); ok {
		defer c.Close() // the executors that hold resources (a loopback, a proxy) release them
	}
	ws, err := workspace.Local(root,
		workspace.WithMode(policy.Coding),
		workspace.WithDeniedPaths(".env*", "secrets/"),
		workspace.WithCommandRules(policy.CommandRule{Pattern: "go test", Action: policy.Allow}),
		workspace.WithExecutor(x),
		// An "ask" the user allows becomes a Grant for that command; the
		// answer may hold once or for the session.
		workspace.WithAsker(ask),
	)
	if err != nil {
		return 0, err
	}
	s, err := ws.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer s.Close() // kills and reaps every background process

	res, err := s.Run(ctx, command, "", 0) // gated by the policy, then run in the sandbox
	var denied *policy.DeniedError
	switch {
	case errors.As(err, &denied):
		// Refused before it ran: the rule and a reason the model can act on.
		fmt.Fprintf(out, "refused: %v\n", err)
		return 1, nil
	case err != nil:
		return 0, err
	}
	fmt.Fprint(out, res.Stdout)
	fmt.Fprint(out, res.Stderr)
	if res.Notice != "" {
		fmt.Fprintln(out, res.Notice) // the violation report, for the model
	}
	if file != "" {
		text, err := s.ReadText(ctx, file, 1, 5) // opens exactly the judged file
		if err != nil {
			fmt.Fprintf(out, "read %s: %v\n", file, err)
		} else {
			fmt.Fprintf(out, "%s, lines 1-5 of %d:\n%s", file, text.TotalLines, text.Content)
		}
	}
	fmt.Fprintln(out, s.AutoAllow().Why) // whether shell_default asks run without asking
	fmt.Fprintln(out, s.Instructions())  // the "## Workspace" system-prompt section
	fmt.Fprintf(out, "%d agent tools\n", len(s.Tools()))
	return res.ExitCode, nil
}

// askOnTerminal puts an ask to the user: y approves once, s for the
// session, anything else refuses.
func askOnTerminal(in io.Reader, out io.Writer) workspace.Asker {
	lines := bufio.NewScanner(in)
	return func(_ context.Context, r *workspace.ApprovalRequest) (workspace.Answer, error) {
		fmt.Fprintf(out, "allow %s %s%s? [y]es once / [s]ession / [N]o: ", r.Op, r.Path, r.Command)
		if !lines.Scan() {
			return workspace.Answer{}, nil
		}
		switch strings.TrimSpace(lines.Text()) {
		case "y", "yes":
			return workspace.Answer{Allow: true, Scope: workspace.ScopeOnce}, nil
		case "s", "session":
			return workspace.Answer{Allow: true, Scope: workspace.ScopeSession}, nil
		}
		return workspace.Answer{}, nil
	}
}
