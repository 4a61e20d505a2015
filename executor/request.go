package executor

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// ValidateSandboxed checks what every sandboxing executor needs of a
// Request before it derives anything: a policy to derive the sandbox
// from, an absolute root, an absolute Dir (or none), no negative timeout
// or output limit, no NUL byte in the command, the directory or the
// environment (a NUL would cut an argument short, or split it into
// further options of a sandbox tool), and every environment entry of the
// form KEY=VALUE. The error is a *RequestError naming the field.
func (r *Request) ValidateSandboxed() error {
	switch {
	case r == nil:
		return &RequestError{Field: "Request", Value: "<nil>", Reason: "no request"}
	case r.Policy == nil:
		return &RequestError{Field: "Policy", Value: "<nil>", Reason: "a sandboxing executor derives its sandbox from the policy"}
	case r.Checker != nil && r.Checker.Policy() != r.Policy:
		return &RequestError{Field: "Checker", Value: "<checker>", Reason: "not the compilation of the request's Policy (Policy must be Checker.Policy())"}
	case r.Checker != nil && r.Checker.Root() != r.Root:
		return &RequestError{Field: "Root", Value: r.Root, Reason: fmt.Sprintf("not the Checker's root %q", r.Checker.Root())}
	case r.Checker != nil && r.Checker.Home() != r.Home:
		return &RequestError{Field: "Home", Value: r.Home, Reason: fmt.Sprintf("not the Checker's home %q", r.Checker.Home())}
	case r.Root == "" || !filepath.IsAbs(r.Root):
		return &RequestError{Field: "Root", Value: r.Root, Reason: "no absolute workspace root"}
	case r.Dir != "" && !filepath.IsAbs(r.Dir):
		return &RequestError{Field: "Dir", Value: r.Dir, Reason: "not absolute"}
	case r.Timeout < 0:
		return &RequestError{Field: "Timeout", Value: r.Timeout.String(), Reason: "negative timeout"}
	case r.OutputLimit < 0:
		return &RequestError{Field: "OutputLimit", Value: strconv.Itoa(r.OutputLimit), Reason: "negative output limit"}
	case strings.ContainsRune(r.Command, 0):
		return &RequestError{Field: "Command", Value: r.Command, Reason: "contains a NUL byte"}
	case strings.ContainsRune(r.Dir, 0):
		return &RequestError{Field: "Dir", Value: r.Dir, Reason: "contains a NUL byte"}
	}
	for i, kv := range r.Env {
		k, _, ok := strings.Cut(kv, "=")
		switch {
		case strings.ContainsRune(kv, 0):
			return &RequestError{Field: fmt.Sprintf("Env[%d]", i), Value: kv, Reason: "contains a NUL byte"}
		case !ok || k == "":
			return &RequestError{Field: fmt.Sprintf("Env[%d]", i), Value: kv, Reason: "not KEY=VALUE"}
		}
	}
	return nil
}

// Compile sets r.Checker to r.Policy compiled for r.Root and r.Home, and
// Policy, Root and Home to the checker's (the normalised policy, the
// resolved root and home), so that executors compile nothing per command.
// It is the constructor for callers that have only a Policy; a workspace
// compiles its policy once and sets Checker itself.
func (r *Request) Compile() error {
	if r.Policy == nil {
		return &RequestError{Field: "Policy", Value: "<nil>", Reason: "no policy to compile"}
	}
	c, err := policy.NewChecker(r.Policy, r.Root, r.Home)
	if err != nil {
		return err
	}
	r.Checker, r.Policy, r.Root, r.Home = c, c.Policy(), c.Root(), c.Home()
	return nil
}

// Compiled returns the request's compiled policy: Checker when set, else
// Policy compiled for Root and Home (again on every call). Call it after
// ValidateSandboxed.
func (r *Request) Compiled() (*policy.Checker, error) {
	if r.Checker != nil {
		return r.Checker, nil
	}
	return policy.NewChecker(r.Policy, r.Root, r.Home)
}

// ExactEnvCommand returns cmd as a shell must run it for the command's
// environment to be exactly env: prefixed with "unset PATH" when env sets
// no PATH, because a shell started without one (busybox's sh, the shell
// of the docker and kubernetes images) exports a default of its own. The
// shell still finds its builtins and applets without PATH.
func ExactEnvCommand(env []string, cmd string) string {
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		return cmd
	}
	return "unset PATH\n" + cmd
}
