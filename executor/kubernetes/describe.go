package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// allControls are the controls this backend reports on.
var allControls = executor.Controls()

// Describe reports what the executor enforces. The pod layer (volumes,
// security context, the pod's own namespaces) holds on every node; what
// the sandbox layer enforces depends on the node's kernel, so it is read
// from cordon-pod describe in a pod: the session pod when one runs,
// else a pod started for the purpose (with no volumes) and deleted
// again; the answer is kept for the process's life, per API server,
// namespace, image, runtime class, seccomp profile and user. Where no pod answers (the cluster cannot
// run one), every control is listed as a gap saying so: nothing
// unverified is claimed.
func (x *Executor) Describe(ctx context.Context) executor.Capabilities {
	caps := executor.Capabilities{
		Backend:    Backend,
		Sandboxed:  true,
		Enforced:   []executor.Control{},
		Gaps:       []executor.Gap{},
		BestEffort: x.cfg.BestEffort,
		Info: map[string]string{
			"server":         x.rest.Host,
			"server_version": x.server,
			"namespace":      x.namespace,
			"image":          x.cfg.Image,
			"helper":         x.helperPath(),
			"user":           fmt.Sprintf("%d:%d", x.uid, x.gid),
			"volumes":        x.volumesInfo(),
			"session":        "one Job of one pod per executor, created by the first command (TTL 0 after it finishes), replaced when the derived volumes change (the old pod stays while a command runs in it), deleted by Close with grace 0; the pod's PID 1 ends the session when the executor's cordon-pod serve exec ends, so a killed caller leaves no running pod",
			"pod_layer":      "read-only root file system, every capability dropped, no privilege escalation, seccomp " + x.seccompInfo() + ", no service-account token, no host network, PID or IPC namespace; the root and grants as volumes, masks as read-only or empty volumes",
			"sandbox_layer":  "every command runs under cordon-pod serve: cordon's Landlock and seccomp sandbox and protected-path guard, derived from the same policy inside the pod, one landlock executor for the session; serve is a child subreaper that kills processes which leave their command's tree",
			"network":        "network none: a default-deny NetworkPolicy for the session's pods (enforced only where the CNI enforces NetworkPolicy) and the sandbox layer; network full: the pod network",
			"requirements":   "RBAC in the namespace: create, patch, delete jobs (batch); list, get, delete pods; create pods/exec; create, delete networkpolicies. The node's kernel needs Landlock (5.13+) for the sandbox layer, which refuses every command in strict mode without it",
		},
	}
	if x.cfg.RuntimeClassName != "" {
		caps.Info["runtime_class"] = x.cfg.RuntimeClassName
	}
	inPod := x.sandboxCaps(ctx)
	if inPod == nil {
		for _, c := range allControls {
			caps.Gaps = append(caps.Gaps, executor.Gap{Control: c, Reason: "not verified: no pod could be started to report what the in-pod sandbox enforces on the cluster's nodes"})
		}
		return caps
	}
	for k, v := range inPod.Info {
		caps.Info["sandbox_"+k] = v
	}
	caps.Sandboxed = inPod.Sandboxed
	caps.Gaps = append(caps.Gaps, inPod.Gaps...)
	if _, ok := caps.Gap(executor.ControlNetAllowList); !ok {
		caps.Gaps = append(caps.Gaps, executor.Gap{Control: executor.ControlNetAllowList, Reason: "no allow-list proxy in the pod yet: network allow-lists are refused in strict mode"})
	}
	for _, c := range allControls {
		if _, ok := caps.Gap(c); !ok {
			caps.Enforced = append(caps.Enforced, c)
		}
	}
	return caps
}

func (x *Executor) helperPath() string {
	if x.cfg.Helper != "" {
		return x.cfg.Helper
	}
	return DefaultHelper
}

func (x *Executor) seccompInfo() string {
	if x.cfg.SeccompLocalhost != "" {
		return "Localhost " + x.cfg.SeccompLocalhost
	}
	return "RuntimeDefault"
}

func (x *Executor) volumesInfo() string {
	if x.cfg.Claim != "" {
		return "the claim " + x.cfg.Claim + " holds the workspace root, mounted at the root's path; grants outside the root are not mounted"
	}
	return "hostPath: the root and grants are the node's paths, so the pod must run on the caller's machine (a single-node cluster, or a caller on the node)"
}

// describeCache keeps the sandbox layer's report per cluster and pod
// configuration for the life of the process (describeKey), so that
// executors made one after another (a session per workspace) ask once.
var describeCache sync.Map

func (x *Executor) describeKey() string {
	c := x.cfg
	return strings.Join([]string{x.rest.Host, x.namespace, c.Image, x.helperPath(), c.RuntimeClassName, c.SeccompLocalhost,
		fmt.Sprint(x.uid, x.gid)}, "\x00")
}

// sandboxCaps returns the sandbox layer's capabilities, asked of a
// session pod once and kept: the current session's when one runs, else
// a pod of its own with no volumes, deleted right after. nil when no pod
// could answer.
func (x *Executor) sandboxCaps(ctx context.Context) *executor.Capabilities {
	x.mu.Lock()
	if x.inPod == nil {
		if v, ok := describeCache.Load(x.describeKey()); ok {
			x.inPod = v.(*executor.Capabilities)
		}
	}
	if x.inPod != nil {
		c := x.inPod.Clone()
		x.mu.Unlock()
		return &c
	}
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	s := x.current
	var own *session
	if s == nil {
		x.seq++
		name := fmt.Sprintf("cordon-%s-%d", x.id, x.seq)
		r, _ := policyderive.PodSpec(&policyderive.Profile{Network: policy.NetworkNone, PrivateTmp: true}, x.podOptions(name))
		own = &session{x: x, name: name, ready: make(chan struct{})}
		x.retired = append(x.retired, own) // Close deletes it, should Describe not
		s = own
		x.mu.Unlock()
		own.start(r)
		defer func() {
			own.delete()
			x.mu.Lock()
			x.retired = slices.DeleteFunc(x.retired, func(r *session) bool { return r == own })
			x.mu.Unlock()
		}()
	} else {
		x.mu.Unlock()
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil
	}
	if s.err != nil || !s.alive() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out strings.Builder
	var errb capped
	if err := s.stream(ctx, []string{x.helperPath(), "describe"}, nil, &out, &errb); err != nil {
		x.log.Debug("kubernetes executor: cordon-pod describe failed", "err", err, "stderr", errb.String())
		return nil
	}
	var c executor.Capabilities
	if err := json.Unmarshal([]byte(out.String()), &c); err != nil {
		return nil
	}
	c.Info = maps.Clone(c.Info)
	if c.Info == nil {
		c.Info = map[string]string{}
	}
	x.mu.Lock()
	x.inPod = &c
	x.mu.Unlock()
	describeCache.Store(x.describeKey(), &c)
	cc := c.Clone()
	return &cc
}
