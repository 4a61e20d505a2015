package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cordon-sandbox/cordon/cmd/internal/backends"
	"github.com/cordon-sandbox/cordon/cmd/internal/buildinfo"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
)

// Exit codes (see the package documentation).
const (
	exitOK    = 0
	exitSetup = 2
)

func main() {
	// The landlock and bwrap executors re-execute this program as their
	// sandbox helpers; a helper never returns from Init.
	landlock.Init()
	bwrap.Init()
	os.Exit(main1())
}

// main1 runs cordon with os.Args and returns the exit status.
//
// SIGINT, SIGTERM and SIGHUP (the terminal or the client going away) end
// it cleanly: every session's processes are killed and reaped first.
// SIGPIPE is caught, not left to kill the program: a client that closes
// its end of stdout would otherwise make the next write kill cordon before
// it could reap anything. (Caught, not ignored: an ignored signal would
// stay ignored in every command cordon runs.)
func main1() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	return newApp(os.Stdin, os.Stdout, os.Stderr).execute(ctx, os.Args[1:])
}

// app is one invocation of cordon: its streams and global flags.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	verbose        bool
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *app {
	return &app{stdin: stdin, stdout: stdout, stderr: stderr}
}

// execute runs the command line and maps the outcome to an exit status,
// printing an error as one line on stderr.
func (a *app) execute(ctx context.Context, args []string) int {
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return exitOK // SIGINT or SIGTERM: a clean shutdown
	}
	fmt.Fprintf(a.stderr, "cordon: %s\n", backends.OneLine(err.Error()))
	return exitSetup
}

// logger sends records to stderr (stdout may be the MCP stream): warnings
// by default, everything with --verbose.
func (a *app) logger() *slog.Logger {
	level := slog.LevelWarn
	if a.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "cordon",
		Short: "Serve a sandboxed workspace to coding agents",
		Long: `cordon serves a workspace (a directory, a policy and an OS sandbox derived
from it) to coding agents over the Model Context Protocol: cordon mcp.

Exit status: 0 success (and a shutdown by SIGINT or SIGTERM), 2 usage or
setup error.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().BoolVarP(&a.verbose, "verbose", "v", false, "log debug records on stderr")
	root.AddCommand(a.mcpCommand(), a.versionCommand())
	root.CompletionOptions.HiddenDefaultCmd = true
	return root
}

func (a *app) versionCommand() *cobra.Command { return buildinfo.Command("cordon", a.stdout) }
