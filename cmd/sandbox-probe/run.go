package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

type runOptions struct {
	pf          policyFlags
	backend     string
	cwd         string
	yes         bool
	timeout     time.Duration
	outputLimit int
	bestEffort  bool
	json        bool
}

// exitTimedOut is run's status when the timeout killed the command (as
// timeout(1) does).
const exitTimedOut = 124

func (a *app) runCommand() *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run --backend B [--policy FILE] [--root DIR] [--yes] -- CMD...",
		Short: "Run a command through the workspace gate and a backend's sandbox",
		Long: `run runs one command the way an agent's shell tool would: the workspace's
policy gate judges it (every segment and path claim), an ask is put to you
on a terminal (or approved by --yes, and refused otherwise), and the backend
runs it in its sandbox with the paths you approved granted for this command
only.

On landlock, bwrap and local, run wraps the command, as bwrap or srt do:
your input is passed to it, its output is printed as it is produced, and
when stdin and stdout are a terminal it gets a terminal of its own (your
terminal is put in raw mode and never handed to the command, so no ioctl
of the command reaches it; its size follows yours). SIGINT, SIGTERM, SIGHUP
and SIGQUIT are forwarded to the command (on bwrap they end the sandbox:
bubblewrap does not forward them). There is no timeout unless --timeout is
given, so an agent or a dev server runs as long as it runs. On docker and
kubernetes (and with --json) stdin is /dev/null and the output is printed
after the command ends.

One argument is a shell command line (run -- 'make && make test'); several
are a program and its arguments, each quoted and run in the shell's place
(run -- ls -la "my dir" runs exec ls -la 'my dir').

Exit status: the command's own; 128+N when signal N killed it; 124 when the
timeout did; 126 when the gate or you refused it; 2 usage or setup error
(for instance a backend that is unavailable or cannot enforce the policy).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.run(cmd.Context(), o, args)
		},
	}
	o.pf.add(cmd, true)
	f := cmd.Flags()
	f.StringVar(&o.backend, "backend", "", "backend to run under: "+strings.Join(backendNames(), ", ")+" (required)")
	f.StringVar(&o.cwd, "cwd", "", "working directory, relative to the root; default: the root")
	f.BoolVarP(&o.yes, "yes", "y", false, "approve every ask without prompting (denies still refuse)")
	f.DurationVar(&o.timeout, "timeout", 0, "kill the command's whole process group after this long; default: none when run wraps the command, the workspace's shell timeout ("+workspace.DefaultShellTimeout.String()+") otherwise")
	f.IntVar(&o.outputLimit, "output-limit", 1<<20, "bytes kept per stream (head and tail)")
	f.BoolVar(&o.bestEffort, "best-effort", false, "run even where the backend cannot enforce the policy strictly (gaps are printed)")
	f.BoolVar(&o.json, "json", false, "print the verdict and the command's result (output included) as JSON")
	return cmd
}

// RunReport is the output of run --json.
type RunReport struct {
	Backend string `json:"backend"`
	// Sandboxed is false for local: only the gate applied.
	Sandboxed bool   `json:"sandboxed"`
	Command   string `json:"command"`
	// Cwd is the directory the command ran in (root-relative inside).
	Cwd string `json:"cwd"`
	// Decision is the gate's verdict before any approval; Approved says
	// whether an ask was approved (by you or --yes).
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	Approved bool   `json:"approved"`
	// Grants are the paths the approval opened for this command.
	Grants     []policy.Grant `json:"grants"`
	ExitCode   int            `json:"exit_code"`
	Signal     string         `json:"signal,omitempty"`
	TimedOut   bool           `json:"timed_out"`
	Truncated  bool           `json:"truncated"`
	DurationMS int64          `json:"duration_ms"`
	Stdout     string         `json:"stdout"`
	Stderr     string         `json:"stderr"`
	// Gaps lists what the backend does not enforce here (best effort).
	Gaps []executor.Gap `json:"gaps"`
	// Violations lists the host-run surface paths the command created or
	// changed and how the guard repaired them.
	Violations []string `json:"violations,omitempty"`
	// Network lists the allow-list proxy's decisions (network.allow
	// policies on landlock and bwrap).
	Network []netproxy.Event `json:"network,omitempty"`
	// Refusals is the workspace's violation report (workspace.Refusal):
	// guard repairs, proxy refusals and the file accesses the sandbox
	// refused as the command's error output shows them.
	Refusals []workspace.Refusal `json:"refusals,omitempty"`
}

// commandLine turns run's arguments into one shell command: one argument
// is a shell command line; several are a program and its arguments, run
// in the shell's place (exec), so that the program is the process that
// signals and ^C reach and whose status run returns, as with any wrapper.
func commandLine(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "exec " + quoteArgs(args)
}

func (a *app) run(ctx context.Context, o *runOptions, args []string) error {
	if o.backend == "" {
		return usageErrorf("run: --backend is required (%s)", strings.Join(backendNames(), ", "))
	}
	if len(args) == 0 {
		return usageErrorf("run: no command (run --backend %s -- CMD...)", o.backend)
	}
	if o.timeout < 0 {
		return usageErrorf("run: --timeout must not be negative")
	}
	if o.outputLimit <= 0 {
		return usageErrorf("run: --output-limit must be positive")
	}
	b, err := lookupBackend(o.backend)
	if err != nil {
		return err
	}
	ws, err := o.pf.load()
	if err != nil {
		return err
	}
	ws.announce(a.stderr)
	bo := a.backendOptions(o.bestEffort)
	av := b.Check(ctx, bo)
	if !av.Available {
		msg := fmt.Sprintf("run: backend %s is unavailable: %s", b.Name, av.Reason)
		if av.Fix != "" {
			msg += " (fix: " + av.Fix + ")"
		}
		return setupError(errors.New(msg))
	}
	x, err := b.New(bo)
	if err != nil {
		return setupError(fmt.Errorf("run: %w", err))
	}
	defer closeExecutor(x)
	command := commandLine(args)

	rep := &RunReport{Backend: b.Name, Sandboxed: b.Sandboxed, Command: command, Grants: []policy.Grant{}, Gaps: []executor.Gap{}}
	var mu sync.Mutex
	// Asks are put to the user on the controlling terminal, as sudo and
	// ssh do, and only when stdin is a terminal too: a pipe into run
	// means nobody is there to answer.
	var tty *os.File
	if isTerminal(a.stdin) {
		if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
			tty = f
			defer tty.Close()
		}
	}
	interactive := tty != nil
	approver := func(ctx context.Context, req *workspace.ApprovalRequest) (workspace.Answer, error) {
		mu.Lock()
		defer mu.Unlock()
		ans := workspace.Answer{Allow: o.yes}
		if o.yes {
			fmt.Fprintf(a.stderr, "sandbox-probe: approved by --yes: %s\n", oneLine(req.Reason()))
		} else if interactive {
			var err error
			if ans, err = a.prompt(tty, req); err != nil {
				return workspace.Answer{}, err
			}
		}
		if ans.Allow {
			rep.Approved = true
			rep.Grants = append(rep.Grants, req.Grants...)
		}
		return ans, nil
	}
	opts := append(ws.options(),
		workspace.WithExecutor(x),
		workspace.WithAsker(approver),
		workspace.WithLimits(workspace.Limits{MaxShellOutputChars: o.outputLimit}),
	)
	if o.timeout > 0 {
		opts = append(opts, workspace.WithShellTimeout(o.timeout))
	}
	if store := policy.ApprovalStorePath(ws.root, ws.home); store != "" && !o.pf.noDefaults {
		// "always" answers go to the user layer.
		opts = append(opts, workspace.WithApprovalStore(store))
	}
	w, err := workspace.Local(ws.root, opts...)
	if err != nil {
		return setupError(fmt.Errorf("run: %w", err))
	}
	if o.cwd != "" {
		// A working directory outside the root is a mistake to report
		// up front, not a read of the outside to approve.
		dir := o.cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(w.Root(), dir)
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return usageErrorf("run: --cwd %s: %v", o.cwd, err)
		}
		if rel, err := filepath.Rel(w.Root(), real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return usageErrorf("run: --cwd %s is %s, outside the workspace root %s", o.cwd, real, w.Root())
		}
	}
	s, err := w.Open(ctx)
	if err != nil {
		return setupError(fmt.Errorf("run: %w", err))
	}
	defer s.Close()
	if caps := s.Capabilities(); caps.BestEffort || !caps.Sandboxed {
		rep.Gaps = append(rep.Gaps, caps.Gaps...)
	}
	if v, err := s.DecideCommand(command, o.cwd); err == nil {
		rep.Decision, rep.Rule = v.Decision.String(), v.Rule
	}
	stream := b.Streams && !o.json
	var res *workspace.RunResult
	if stream {
		res, err = a.runAttached(ctx, s, command, o)
	} else {
		if !o.json && !b.Streams {
			fmt.Fprintf(a.stderr, "sandbox-probe: note: the %s backend does not connect streams yet: stdin is /dev/null and the output is printed when the command ends\n", b.Name)
		}
		res, err = s.Run(ctx, command, o.cwd, o.timeout)
	}
	if err != nil {
		var de *policy.DeniedError
		if errors.As(err, &de) {
			msg := "run: refused: " + oneLine(err.Error())
			if de.Decision == policy.Ask && !o.yes && !interactive {
				msg += " (not a terminal: pass --yes to approve asks)"
			}
			return &exitError{code: exitRefused, err: errors.New(msg)}
		}
		return setupError(fmt.Errorf("run: %w", err))
	}
	rep.Cwd, rep.ExitCode, rep.Signal, rep.TimedOut, rep.Truncated, rep.DurationMS =
		res.Cwd, res.ExitCode, res.Signal, res.TimedOut, res.Truncated, res.DurationMS
	rep.Stdout, rep.Stderr = res.Stdout, res.Stderr
	rep.Violations = res.Violations
	rep.Network = res.Network
	rep.Refusals = res.Refusals
	if o.json {
		if err := writeJSON(a.stdout, rep); err != nil {
			return err
		}
	} else {
		if !stream {
			_, _ = io.WriteString(a.stdout, res.Stdout)
			_, _ = io.WriteString(a.stderr, res.Stderr)
		}
		if !b.Sandboxed {
			fmt.Fprintln(a.stderr, "sandbox-probe: note: the local backend enforces nothing; only the gate applied")
		}
		for _, v := range res.Violations {
			fmt.Fprintf(a.stderr, "sandbox-probe: repaired: %s\n", oneLine(v))
		}
		for _, e := range res.Network {
			if e.Decision != policy.Allow {
				fmt.Fprintf(a.stderr, "sandbox-probe: network refused: %s\n", oneLine(e.String()))
			}
		}
		for _, r := range res.Refusals {
			if r.Source == "os" {
				fmt.Fprintf(a.stderr, "sandbox-probe: refused by the sandbox: %s %s (%s): %s\n", r.Op, r.Target, r.Rule, oneLine(r.Detail))
			}
		}
		for _, g := range rep.Gaps {
			if b.Sandboxed {
				fmt.Fprintf(a.stderr, "sandbox-probe: not enforced (best effort): %s: %s\n", g.Control, oneLine(g.Reason))
			}
		}
		if res.Truncated {
			fmt.Fprintf(a.stderr, "sandbox-probe: output truncated to %d bytes per stream (head and tail)\n", o.outputLimit)
		}
		if ctx.Err() != nil && !stream {
			fmt.Fprintln(a.stderr, "sandbox-probe: interrupted; the command's processes were killed")
		} else if res.TimedOut && stream && o.timeout == 0 {
			fmt.Fprintln(a.stderr, "sandbox-probe: the terminal hung up; the command was ended")
		} else if res.TimedOut {
			fmt.Fprintf(a.stderr, "sandbox-probe: timed out after %s\n", o.timeout)
		} else if res.Signal != "" {
			fmt.Fprintf(a.stderr, "sandbox-probe: killed by signal %d (%s)\n", exitStatus(res)-128, res.Signal)
		}
	}
	a.status = exitStatus(res)
	if ctx.Err() != nil && !stream {
		// Interrupted: the workspace killed the command's whole tree.
		a.status = 130
	}
	return nil
}

// exitStatus maps a result to run's exit status.
func exitStatus(res *workspace.RunResult) int {
	switch {
	case res.TimedOut:
		return exitTimedOut
	case res.ExitCode >= 0:
		return res.ExitCode
	}
	for n := 1; n < 65; n++ {
		if s := syscall.Signal(n); s.String() == res.Signal {
			return 128 + n
		}
	}
	return 128 + int(syscall.SIGKILL)
}

// prompt asks on the terminal tty and reads y or n from it.
func (a *app) prompt(tty *os.File, req *workspace.ApprovalRequest) (workspace.Answer, error) {
	p := newPalette(a.color, tty)
	fmt.Fprintf(tty, "%s the policy asks before this %s:\n", p.yellow("sandbox-probe:"), req.Op)
	if req.Command != "" {
		fmt.Fprintf(tty, "  command: %s\n", req.Command)
		fmt.Fprintf(tty, "  in:      %s\n", req.Cwd)
	}
	if req.Path != "" {
		fmt.Fprintf(tty, "  path:    %s\n", req.Path)
	}
	if req.Host != "" {
		fmt.Fprintf(tty, "  host:    %s\n", net.JoinHostPort(req.Host, strconv.Itoa(int(req.Port))))
	}
	fmt.Fprintf(tty, "  why:     %s\n", oneLine(req.Reason()))
	for _, g := range req.Grants {
		fmt.Fprintf(tty, "  grants:  %s %s (this command only)\n", g.Op, g.Path)
	}
	session := slices.Contains(req.Scopes, workspace.ScopeSession)
	always := slices.Contains(req.Scopes, workspace.ScopeAlways)
	if session {
		fmt.Fprintf(tty, "  [s] covers, for the rest of this run: %s\n", req.Covers)
		if always {
			fmt.Fprint(tty, "  [a] also in every later run: an allow rule in your user policy file\n")
			fmt.Fprint(tty, "allow? [y] once, [s] for this run, [a] always, [N]o: ")
		} else {
			fmt.Fprint(tty, "allow? [y] once, [s] for this run, [N]o: ")
		}
	} else {
		fmt.Fprint(tty, "allow once? [y/N] ")
	}
	if a.in == nil {
		a.in = bufio.NewReader(tty)
	}
	line, err := a.in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return workspace.Answer{}, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return workspace.Answer{Allow: true}, nil
	case "s", "session":
		if session {
			return workspace.Answer{Allow: true, Scope: workspace.ScopeSession}, nil
		}
	case "a", "always":
		if always {
			return workspace.Answer{Allow: true, Scope: workspace.ScopeAlways}, nil
		}
	}
	return workspace.Answer{}, nil
}

// runAttached runs command connected to run's own streams: a terminal of
// the command's own when stdin and stdout are terminals (the caller's put
// in raw mode once the command has started, its size followed), else
// pipes; signals forwarded.
func (a *app) runAttached(ctx context.Context, s *workspace.Session, command string, o *runOptions) (*workspace.RunResult, error) {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	stdio := &executor.Stdio{Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr, Signals: sigs}
	in, inOK := a.stdin.(*os.File)
	out, outOK := a.stdout.(*os.File)
	if inOK && outOK && isTerminal(in) && isTerminal(out) {
		rows, cols := 0, 0
		if c, r, err := term.GetSize(int(out.Fd())); err == nil {
			rows, cols = r, c
		}
		resize := make(chan executor.WindowSize, 1)
		winch := make(chan os.Signal, 1)
		if len(resizeSignals) > 0 {
			signal.Notify(winch, resizeSignals...)
		}
		defer signal.Stop(winch)
		done := make(chan struct{})
		defer close(done)
		go func() {
			defer close(resize)
			for {
				select {
				case <-done:
					return
				case <-winch:
					if c, r, err := term.GetSize(int(out.Fd())); err == nil {
						select {
						case resize <- executor.WindowSize{Rows: uint16(r), Cols: uint16(c)}:
						default:
						}
					}
				}
			}
		}()
		raw := &rawInput{f: in}
		defer raw.restore()
		stdio.Stdin = raw
		stdio.Terminal = &executor.Terminal{Rows: uint16(rows), Cols: uint16(cols), Resize: resize}
	}
	// The command ends by itself, by a forwarded signal or by --timeout:
	// run's own interrupt is forwarded, not a cancellation.
	return s.RunAttached(context.WithoutCancel(ctx), command, o.cwd, o.timeout, stdio)
}

// rawInput reads the caller's terminal, put in raw mode at the first read
// (after the approval prompts, once the command runs), so that every key
// (^C included) goes to the command's own terminal.
type rawInput struct {
	f    *os.File
	once sync.Once
	mu   sync.Mutex
	// state is the mode to restore; done is set by restore, after which
	// the terminal is never made raw again (a first read that comes late,
	// after a command that ended at once, must not leave it raw).
	state *term.State
	done  bool
}

func (r *rawInput) Read(p []byte) (int, error) {
	r.once.Do(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.done {
			return
		}
		if st, err := term.MakeRaw(int(r.f.Fd())); err == nil {
			r.state = st
		}
	})
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done {
		return 0, io.EOF
	}
	return r.f.Read(p)
}

// restore gives the caller's terminal its mode back, once and for all.
func (r *rawInput) restore() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	if r.state != nil {
		_ = term.Restore(int(r.f.Fd()), r.state)
		r.state = nil
	}
}
