package main

import (
	"bufio"
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
	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/landlock"
)

// Exit codes (see the package documentation).
const (
	exitOK     = 0
	exitFailed = 1
	exitSetup  = 2
	// exitRefused is run's status when the gate or the user refused the
	// command, so that it cannot be mistaken for the command's own status.
	exitRefused = 126
)

func main() {
	// The conformance suite may copy this program as its static probe and
	// run it as cordon-probe: that must happen before anything else.
	// The landlock executor re-executes this program as its sandbox
	// helper; the helper never returns from Init.
	landlock.Init()
	bwrap.Init()
	probe.MaybeRun()
	os.Exit(main1())
}

// main1 runs sandbox-probe with os.Args and returns the exit status. Tests
// register it as the "sandbox-probe" command of their scripts.
func main1() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp(os.Stdin, os.Stdout, os.Stderr)
	return app.execute(ctx, os.Args[1:])
}

// app is one invocation of sandbox-probe: its streams and global flags.
type app struct {
	stdin          io.Reader
	in             *bufio.Reader // the terminal, buffered, for prompts
	stdout, stderr io.Writer
	verbose        bool
	color          string
	dockerImage    string
	kubeImage      string
	kubeNamespace  string
	// status is the exit status a subcommand chose without an error (run:
	// the command's own status).
	status int
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *app {
	return &app{stdin: stdin, stdout: stdout, stderr: stderr, color: "auto"}
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
		return a.status
	}
	code := exitSetup
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if ctx.Err() != nil && code == exitSetup {
		code = 130
	}
	fmt.Fprintf(a.stderr, "sandbox-probe: %s\n", oneLine(err.Error()))
	return code
}

// backendOptions returns the options every backend is built with.
func (a *app) backendOptions(bestEffort bool) backendOptions {
	return backendOptions{BestEffort: bestEffort, DockerImage: a.dockerImage, KubeImage: a.kubeImage, KubeNamespace: a.kubeNamespace}
}

// setupLogging sends the backends' log records to stderr: warnings by
// default, everything with --verbose.
func (a *app) setupLogging() {
	level := slog.LevelWarn
	if a.verbose {
		level = slog.LevelDebug
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level})))
}

func (a *app) rootCommand() *cobra.Command {
	po := &probeOptions{}
	root := &cobra.Command{
		Use:   "sandbox-probe",
		Short: "Verify which isolation holds on this host, explain policy decisions, run and benchmark commands",
		Long: `sandbox-probe checks, on this host, what cordon's OS sandboxes actually enforce.

Without a subcommand it runs detect, then the conformance suite on every
sandbox backend available here, and prints one table: a row per case, a
column per backend, then the declared gaps and a verdict.

Exit status: 0 all good, 1 a check failed, 2 usage or setup error.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			switch a.color {
			case "auto", "always", "never":
			default:
				return usageErrorf("invalid --color %q (want auto, always or never)", a.color)
			}
			a.setupLogging()
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runDefault(cmd.Context(), po)
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &exitError{code: exitSetup, err: err}
	})
	root.PersistentFlags().BoolVarP(&a.verbose, "verbose", "v", false, "log debug records of the backends on stderr")
	root.PersistentFlags().StringVar(&a.dockerImage, "docker-image", "", "docker backend: run commands in this local image (never pulled); default: host mode (an empty image, the host's system paths bound read-only)")
	root.PersistentFlags().StringVar(&a.kubeImage, "kube-image", os.Getenv("CORDON_KUBE_IMAGE"), "kubernetes backend: the session pod's image, holding a shell and cordon-pod (default $CORDON_KUBE_IMAGE); the cluster is KUBECONFIG's")
	root.PersistentFlags().StringVar(&a.kubeNamespace, "kube-namespace", "", "kubernetes backend: the namespace of the session pods (default: the kubeconfig's, else default)")
	root.PersistentFlags().StringVar(&a.color, "color", "auto", "colour the human output: auto (only on a terminal, unless NO_COLOR is set), always, never")
	po.addFlags(root)
	root.AddCommand(
		a.detectCommand(),
		a.probeCommand(),
		a.explainCommand(),
		a.deriveCommand(),
		a.runCommand(),
		a.benchCommand(),
		a.versionCommand(),
	)
	// completion bash|zsh|fish|powershell: cobra's generated scripts.
	root.CompletionOptions.HiddenDefaultCmd = false
	return root
}

// exitError carries the exit status for an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf returns an error with exit status 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitSetup, err: fmt.Errorf(format, args...)}
}

// setupError wraps err with exit status 2.
func setupError(err error) error { return &exitError{code: exitSetup, err: err} }

// failed is the error of a check that failed: exit status 1. Its message
// is printed as the last line on stderr.
func failedf(format string, args ...any) error {
	return &exitError{code: exitFailed, err: fmt.Errorf(format, args...)}
}

// oneLine folds a message onto one line.
func oneLine(s string) string { return backends.OneLine(s) }
