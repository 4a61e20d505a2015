// Package netns makes private network namespaces for the network
// allow-list: a namespace whose only interface is loopback, up, in which
// the executor listens for the command's proxy connections and starts the
// command. A command started in it can reach nothing but that namespace's
// own loopback — no host address, no host loopback service, no DNS
// server, no abstract Unix socket of the host (those are per network
// namespace) — so the proxy listening there is the only way out.
//
// Making a namespace and entering it (unshare(2) and setns(2) with
// CLONE_NEWNET) need CAP_SYS_ADMIN in the calling process's user
// namespace: root, or a process that owns its user namespace. A Go
// program cannot unshare its user namespace (it is multi-threaded), so
// an unprivileged host gets ErrUnsupported with the reason from Check.
//
// Each call works on one locked OS thread: it enters the namespace, runs
// the function (which may start a child process, which inherits the
// thread's namespace), and returns the thread to the namespace it came
// from; when that fails the thread is never unlocked, so the Go runtime
// retires it instead of reusing a thread in the wrong namespace.
package netns

import "errors"

// ErrUnsupported is returned where private network namespaces cannot be
// made: not Linux, or no CAP_SYS_ADMIN.
var ErrUnsupported = errors.New("private network namespaces are not available")

// ProxyPort is the port the executor's proxy listens on inside every
// private namespace: each namespace has its own port space, so one fixed
// port serves every command and a Landlock ruleset naming it can be
// reused.
const ProxyPort = 3128
