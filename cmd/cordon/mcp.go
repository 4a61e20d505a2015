package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"golang.org/x/net/netutil"

	"github.com/cordon-sandbox/cordon/cmd/internal/backends"
	"github.com/cordon-sandbox/cordon/cmd/internal/buildinfo"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/mcpserver"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// TokenEnv is the environment variable that may hold the HTTP bearer
// token instead of --token-file.
const TokenEnv = "CORDON_MCP_TOKEN"

// minTokenLen is the shortest bearer token accepted.
const minTokenLen = 16

// maxHTTPConns caps the HTTP connections open at once.
const maxHTTPConns = 128

type mcpOptions struct {
	root, home          string
	policyFiles         []string
	noDefaults          bool
	noToolchains        bool
	backend             string
	bestEffort          bool
	kernelProtect       bool
	dockerImage         string
	kubeImage           string
	kubeNamespace       string
	httpAddr, tokenFile string
	noToken             bool
	onAsk               string
	idle                time.Duration
}

func (a *app) mcpCommand() *cobra.Command {
	o := &mcpOptions{}
	cmd := &cobra.Command{
		Use:   "mcp [--root DIR] [--policy FILE] [--backend NAME|auto] [--http ADDR]",
		Short: "Serve the workspace's tools over MCP (stdio by default)",
		Long: `mcp serves the workspace's agent tools (read_file, list_files, grep_files,
write_file, edit_file, shell, spawn_process, read_process_output,
kill_process, list_processes: those the policy offers) over the Model
Context Protocol, behind the policy gate and the backend's OS sandbox.

Transports: stdio (the default: the client starts cordon mcp and speaks
on its stdin and stdout) or streamable HTTP (--http 127.0.0.1:PORT). HTTP
needs a bearer token (--token-file FILE or $` + TokenEnv + `, at least 16
bytes); every client must send "Authorization: Bearer TOKEN". Only on a
loopback address may --no-token turn that off, and then any local
process (another user's, or a command with network access) can use the
workspace.

An ask (an operation the policy marks ask) is put to the user through the
client's elicitation form (allow once, allow for this session, deny);
with a client that cannot elicit, --on-ask decides (default deny, with a
message the model can relay).

--backend auto picks the strongest OS sandbox this host offers and names
it on stderr; it never falls back to local (no OS sandbox) silently: ask
for --backend local explicitly.

Closing the connection (EOF on stdin, the HTTP session's end, SIGINT or
SIGTERM) kills and reaps every process the session started.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.serveMCP(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.root, "root", "", "workspace root; default: the current directory")
	f.StringArrayVar(&o.policyFiles, "policy", nil, "policy `FILE` (YAML or JSON; see the README's policy file reference), the options layer; repeat it for more (a later file overrides an earlier one); default: the coding preset, refined by the standard policy files")
	f.BoolVar(&o.noDefaults, "no-default-policies", false, "read no standard policy file (the managed "+policy.ManagedPolicyPath+", the user's ~/.config/cordon/policy.yaml, the root's "+policy.ProjectPolicyPath+")")
	f.StringVar(&o.home, "home", "", `home directory "~" stands for; default: $HOME`)
	f.BoolVar(&o.noToolchains, "no-toolchain-caches", false, "grant commands no toolchain cache (the Go module and build caches, npm's, pip's and cargo's; see the README's \"Toolchains\")")
	f.StringVar(&o.backend, "backend", "auto", "backend: auto, "+strings.Join(backends.Names(), ", "))
	f.BoolVar(&o.bestEffort, "best-effort", false, "run commands even where the backend cannot enforce the whole policy (gaps are logged and stated in the instructions)")
	f.BoolVar(&o.kernelProtect, "kernel-protect", false, "deny writes to existing protected paths in the kernel while commands run, not only repair them after (landlock: nothing can then be created directly in the root or .git, so git commit fails; bwrap and docker always do; refused where the backend cannot)")
	f.StringVar(&o.kubeImage, "kube-image", os.Getenv("CORDON_KUBE_IMAGE"), "kubernetes backend: the session pod's image, holding a shell and cordon-pod (default $CORDON_KUBE_IMAGE); the cluster is KUBECONFIG's")
	f.StringVar(&o.kubeNamespace, "kube-namespace", "", "kubernetes backend: the namespace of the session pods (default: the kubeconfig's)")
	f.StringVar(&o.dockerImage, "docker-image", "", "docker backend: run commands in this local image (never pulled); default: host mode")
	f.StringVar(&o.httpAddr, "http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	f.StringVar(&o.tokenFile, "token-file", "", "HTTP: the bearer token clients must send (the file's content, trimmed); $"+TokenEnv+" is read when not given")
	f.BoolVar(&o.noToken, "no-token", false, "HTTP on a loopback address only: accept clients without a token (any local process can then connect)")
	f.StringVar(&o.onAsk, "on-ask", "deny", "what an ask becomes when the client cannot elicit: deny or allow")
	f.DurationVar(&o.idle, "idle-timeout", 30*time.Minute, "HTTP: end a session (and kill its processes) after this long without a request; 0: never")
	return cmd
}

// serveMCP builds the workspace and serves it until the client leaves or
// ctx ends.
func (a *app) serveMCP(ctx context.Context, o *mcpOptions) error {
	log := a.logger()
	onAsk, err := mcpserver.ParseAskFallback(o.onAsk)
	if err != nil {
		return fmt.Errorf("--on-ask: %w", err)
	}
	var token string
	if o.httpAddr != "" {
		if token, err = httpToken(o); err != nil {
			return err
		}
	}
	x, err := a.chooseBackend(ctx, o, log)
	if err != nil {
		return err
	}
	defer backends.Close(x)
	opts := []workspace.Option{workspace.WithExecutor(x), workspace.WithAsker(mcpserver.Approve), workspace.WithLogger(log)}
	if o.noToolchains {
		opts = append(opts, workspace.WithToolchainCaches())
	}
	if o.home != "" {
		opts = append(opts, workspace.WithHome(o.home))
	}
	root := o.root
	if root == "" {
		root = "."
	}
	home := o.home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("--root: %w", err)
	}
	stack, err := policy.LoadStack(o.policyFiles, absRoot, home, !o.noDefaults)
	if err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	if store := policy.ApprovalStorePath(absRoot, home); store != "" && !o.noDefaults {
		// "allow always" answers go to the user layer.
		opts = append(opts, workspace.WithApprovalStore(store))
	}
	if len(stack) > 0 {
		opts = append(opts, workspace.WithPolicyLayers(stack...))
		fmt.Fprintf(a.stderr, "cordon: policy layers: %s\n", stack.Describe())
	}
	ws, err := workspace.Local(root, opts...)
	if err != nil {
		return err
	}
	if o.httpAddr != "" {
		if err := httpReachable(ws.Policy()); err != nil {
			return err
		}
	}
	srv, err := mcpserver.New(ctx, ws, mcpserver.Config{Version: buildinfo.Read().Version, OnAsk: onAsk, Logger: log})
	if err != nil {
		return err
	}
	defer srv.Close()
	if o.httpAddr == "" {
		return srv.Run(ctx, &mcpserver.StdioTransport{})
	}
	return a.serveHTTP(ctx, o, srv, token, log)
}

// chooseBackend builds the executor --backend names; auto picks the
// strongest OS sandbox and says which on stderr.
func (a *app) chooseBackend(ctx context.Context, o *mcpOptions, log *slog.Logger) (executor.Executor, error) {
	x, err := a.buildBackend(ctx, o, log)
	if err != nil || !o.kernelProtect {
		return x, err
	}
	// --kernel-protect: the backend must deny protected paths while
	// commands run; one that only repairs them after (or enforces
	// nothing) is refused, never silently weaker.
	why := "it enforces nothing"
	if d, ok := x.(executor.Describer); ok {
		caps := d.Describe(ctx)
		gap, has := caps.Gap(executor.ControlProtect)
		switch {
		case caps.Sandboxed && !has:
			return x, nil
		case has:
			why = gap.Reason
		}
	}
	if c, ok := x.(interface{ Close() error }); ok {
		c.Close()
	}
	return nil, fmt.Errorf("--kernel-protect: the %s backend cannot deny protected paths while commands run: %s", o.backend, why)
}

// buildBackend builds the executor --backend names.
func (a *app) buildBackend(ctx context.Context, o *mcpOptions, log *slog.Logger) (executor.Executor, error) {
	bo := backends.Options{BestEffort: o.bestEffort, KernelProtect: o.kernelProtect, DockerImage: o.dockerImage, KubeImage: o.kubeImage, KubeNamespace: o.kubeNamespace, Logger: log}
	if o.backend == "auto" {
		b, x, err := backends.Auto(ctx, bo)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(a.stderr, "cordon: --backend auto chose %s\n", b.Name)
		return x, nil
	}
	b, err := backends.Lookup(o.backend)
	if err != nil {
		return nil, fmt.Errorf("--backend: %w", err)
	}
	if av := b.Check(ctx, bo); !av.Available {
		msg := fmt.Sprintf("backend %s is unavailable: %s", b.Name, av.Reason)
		if av.Fix != "" {
			msg += " (fix: " + av.Fix + ")"
		}
		return nil, errors.New(msg)
	}
	if !b.Sandboxed {
		fmt.Fprintf(a.stderr, "cordon: backend %s: no OS sandbox, only the policy gate applies\n", b.Name)
	}
	return b.New(bo)
}

// httpToken returns the bearer token for --http. A token is required
// unless --no-token, which only a loopback address accepts; a token
// source that is given but empty is an error, never "no token".
func httpToken(o *mcpOptions) (string, error) {
	host, _, err := net.SplitHostPort(o.httpAddr)
	if err != nil {
		return "", fmt.Errorf("--http %q: %w", o.httpAddr, err)
	}
	if o.noToken {
		if !loopback(host) {
			return "", fmt.Errorf("--no-token: --http %q is not a loopback address, so clients must authenticate: give a bearer token with --token-file FILE or $%s", o.httpAddr, TokenEnv)
		}
		if o.tokenFile != "" {
			return "", errors.New("--no-token and --token-file contradict each other")
		}
		return "", nil
	}
	token, set := os.LookupEnv(TokenEnv)
	source := "$" + TokenEnv
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		token, set, source = strings.TrimSpace(string(b)), true, "--token-file "+o.tokenFile
	}
	switch {
	case !set && !loopback(host):
		return "", fmt.Errorf("--http %q is not a loopback address, so clients must authenticate: give a bearer token with --token-file FILE or $%s", o.httpAddr, TokenEnv)
	case !set:
		return "", fmt.Errorf("--http needs a bearer token (--token-file FILE or $%s): without one any local process could use the workspace; --no-token accepts that on loopback", TokenEnv)
	case token == "":
		return "", fmt.Errorf("the bearer token from %s is empty", source)
	case len(token) < minTokenLen:
		return "", fmt.Errorf("the bearer token from %s is %d bytes; use at least %d random bytes", source, len(token), minTokenLen)
	}
	return token, nil
}

// httpReachable refuses --http when the workspace's own commands could
// connect to the server: with network: full, or an allow-list that lets
// loopback through, a command could open a session of its own (reading a
// token file the policy lets it read) and approve its own asks.
func httpReachable(p *policy.Policy) error {
	switch p.Network {
	case policy.NetworkFull:
		return errors.New("--http with network: full: the workspace's commands could connect to this server and use it outside their sandbox; serve over stdio, or give the policy network: none or an allow-list")
	case policy.NetworkAllowList:
		for _, h := range p.Hosts.Allow {
			host := h
			if hh, _, err := net.SplitHostPort(h); err == nil {
				host = hh
			}
			host = strings.TrimPrefix(host, "*.")
			if pfx, err := netip.ParsePrefix(host); err == nil && pfx.Addr().IsLoopback() {
				host = pfx.Addr().String()
			}
			if loopback(host) || strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
				return fmt.Errorf("--http with network.allow naming %q: the workspace's commands could connect to this server and use it outside their sandbox; serve over stdio, or drop loopback from the allow-list", h)
			}
		}
	}
	return nil
}

// loopback reports whether host names only the loopback interface.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveHTTP serves streamable HTTP on --http until ctx ends.
func (a *app) serveHTTP(ctx context.Context, o *mcpOptions, srv *mcpserver.Server, token string, log *slog.Logger) error {
	var h http.Handler = srv.HTTPHandler(&mcp.StreamableHTTPOptions{SessionTimeout: o.idle, Logger: log})
	if token != "" {
		verify := func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
			if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				return nil, auth.ErrInvalidToken
			}
			return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
		}
		h = auth.RequireBearerToken(verify, nil)(h)
	}
	l, err := net.Listen("tcp", o.httpAddr)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	// Bounded: connections at once, header size and time, idle
	// keep-alives, and (the SDK) request bodies to 4 MiB. No read or
	// write timeout: net/http cancels a request whose connection hits one,
	// and a tool call's result (or the event stream) may take as long as
	// its command.
	l = netutil.LimitListener(l, maxHTTPConns)
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	if token == "" {
		fmt.Fprintf(a.stderr, "cordon: --no-token: any local process can use this workspace\n")
	}
	fmt.Fprintf(a.stderr, "cordon: serving MCP on http://%s/\n", l.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Close()
	_ = hs.Shutdown(sctx)
	return ctx.Err()
}
