// Package kubernetes runs cordon commands in a Kubernetes pod, sandboxed
// by the same policy as every other backend, on the cluster's own
// machinery: a Job of one pod per session, commands by exec, the policy
// derived into the pod spec (policyderive.PodSpec) and enforced a second
// time inside the pod by cordon's own Landlock and seccomp sandbox.
//
//	x, err := kubernetes.New(kubernetes.Config{Image: "registry.example/cordon-pod:1"})
//	defer x.Close()                  // deletes the session's Job, pod and NetworkPolicy
//	res, err := x.Run(ctx, &executor.Request{Command: "go test ./...", ...})
//
// It talks to the API server with client-go (k8s.io/client-go: the
// kubeconfig that clientcmd's loading rules find, or the in-cluster
// configuration) and runs commands with its remote command API
// (websocket, falling back to SPDY); nothing here speaks the protocols by
// hand.
//
// # The session pod
//
// The first command derives the profile (from the request's compiled
// policy, with the placeholder mount points live in this process as an
// input), renders it as a pod spec (policyderive.PodSpec) and creates a
// Job with one pod (Explain returns that pod and NetworkPolicy without
// creating anything: what sandbox-probe derive --kube-cluster prints),
// backoffLimit 0 and ttlSecondsAfterFinished 0, labelled LabelManagedBy,
// LabelExecutor and LabelSession; unless the network is full, a
// NetworkPolicy owned by the Job denies the session's pods all ingress
// and egress. The pod spec:
//
//   - the workspace root and every grant as volumes at the same path:
//     hostPath volumes of the node by default (so the node must be the
//     caller's machine: a single-node cluster, or a caller that runs on
//     the node), or, with Config.Claim, a PersistentVolumeClaim mounted
//     at the root (the caller and the pod then share the claim; grants
//     outside the root are not mounted, and hidden files are left to the
//     sandbox layer);
//   - read-only masks as read-only volumes, hidden directories as empty
//     read-only emptyDirs, hidden files as the node's /dev/null, /tmp as
//     an emptyDir;
//   - a read-only root file system, every capability dropped,
//     allowPrivilegeEscalation false, seccomp RuntimeDefault (or
//     Config.SeccompLocalhost), runAsUser and runAsGroup the caller's
//     (runAsNonRoot unless that is root), no service-account token, no
//     service links, no host network, PID or IPC namespace, grace 0, an
//     optional runtime class (gVisor) and resource limits.
//
// The container's PID 1 is cordon-pod init (cmd/cordon-pod, which must
// be in the image at Config.Helper). The executor holds the session by
// one exec of cordon-pod serve whose input stays open for the session
// and over which every command runs; when it ends — Close, or the
// caller's process dies and its connection drops — serve kills every
// command and lets the guard repair, PID 1 exits, the kernel kills every
// process of the pod, the Job finishes and its TTL deletes it with the
// pod. A pod no session attached to ends itself after
// DefaultAttachTimeout. The session counts as started only when serve has
// answered its Ready line.

// Later commands derive again: when the rendering is the same (a digest
// of the pod spec), they run in the same pod; when it differs (a denied
// file appeared, a grant was approved for one command, the policy
// changed) a new session pod takes over, and the old one is deleted as
// soon as nothing runs in it.
//
// # Defence in depth
//
// Many clusters enforce no NetworkPolicy, and a pod spec cannot express
// everything a policy says (a denied name inside a granted directory
// that appears while the pod runs, Unix sockets, ...). So cordon-pod
// serve runs each command under the landlock executor inside the
// container — Landlock rules, the seccomp filter and the protected-path
// guard derived from the same policy — so network none and the file
// rules hold even where the cluster enforces nothing. One landlock
// executor serves the whole session, so the guard's bookkeeping spans
// every command (a hook planted by a background command is undone
// before the next command starts, and no command's end restores it),
// and its plans and rulesets are reused. Requests and answers cross as
// JSON lines tagged with a command ID (package internal/wire); a kill
// line kills one command's process tree, and the end of the input kills
// them all. Timeouts are enforced inside the pod; a cancelled context
// sends the kill line. Output is bounded inside the pod like every
// backend's.
//
// A new session pod (the rendering changed while a command still runs in
// the old one) has a serve, and so a guard, of its own. So the caller
// guards the same trees too (package internal/protectguard, the host's
// paths: the hostPath volumes, or the claim the caller shares), with one
// baseline across every session, taken only when no command of the
// executor runs; its repair runs after the pod's and has the last word.
// Before a command starts while others run, it repairs what they
// changed, and the request is derived again.
//
// The pod has no cgroup a command could be put in (its cgroup file
// system is read-only), so serve is a child subreaper
// (landlock.Config.ReapOrphans): a process that double-forks out of its
// command's tree is reparented to serve, not to PID 1, and is killed as
// soon as any command's leader exits, before the guard runs.

// In strict mode a profile the node cannot enforce is refused with
// *executor.UnenforceableError, carrying the gaps the sandbox layer
// reported; the node's kernel needs Landlock. Describe reports the
// sandbox layer's own description (cordon-pod describe), asked of the
// session pod, or of a pod started for the purpose with no volumes and
// deleted again, and kept for the process's life per API server,
// namespace, image, runtime class, seccomp profile and user.
//
// # Choices
//
//   - network: full is the pod network by default; Config.HostNetworkWhenFull
//     gives such pods the node's network namespace instead (the docker
//     backend's default), so commands reach the node's loopback services.
//   - A trusted policy's read of / mounts the host's top-level entries
//     read-only (read-write for a write of /) at their paths, except
//     /proc, /dev, /sys, /tmp, /run (the node's runtime sockets) and the
//     image's system directories; masks still apply below them.
//   - Masks of host files inside the image's system directories are not
//     mounted (the pod has the image's files there), unless a host tree
//     mounted above them exposes them.
//   - The environment is exactly Request.Env: busybox's sh exports a
//     PATH of its own, so a request without PATH runs "unset PATH" first.
//
// # What it needs
//
// RBAC in the namespace: jobs (batch) create, patch (to lift the start
// deadline), delete; pods list, get,
// delete; pods/exec create (and get, for older API servers);
// networkpolicies (networking.k8s.io) create, delete. An image with a shell, the tools
// the agent needs and cordon-pod at Config.Helper (built with
// CGO_ENABLED=0 from cmd/cordon-pod). Network allow-lists
// (policy.NetworkAllowList) are refused in strict mode: no proxy runs in
// the pod yet.
package kubernetes
