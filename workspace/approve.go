package workspace

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/cordon-sandbox/cordon/policy"
)

// Approver decides an operation the policy marks "ask". It is supplied by
// the library user (a prompt, a UI, an allowlist) and may be called
// concurrently. It returns true to allow this one operation, false to
// refuse it; an error aborts the operation and is returned wrapped.
//
// The context of a network ask (a connection the allow-list's proxy asks
// about while a command runs) is the proxy's, but carries the values of
// the context the command was started with, so an Approver can tell which
// caller's command asks.
//
// An Approver answers once: every ask it approves is asked again next
// time. An Asker (WithAsker) may answer for the session instead. An
// approved command runs with the asked-for paths granted for that command
// only (executor.Request.Grants).
type Approver func(ctx context.Context, req *ApprovalRequest) (bool, error)

// ApprovalRequest describes an operation that needs the user's approval.
type ApprovalRequest struct {
	// Tool is the agent tool that asks (read_file, edit_file, shell,
	// ...); an approver that remembers answers must key them by it too
	// (an approval to list a directory is not one to grep its files).
	Tool string `json:"tool"`
	// Op is "read", "write", "run" (a foreground command), "spawn" (a
	// background command) or "connect" (a connection through the network
	// allow-list's proxy to a host network.unknown: ask covers).
	Op string `json:"op"`
	// Host and Port are the destination of a connect.
	Host string `json:"host,omitempty"`
	Port uint16 `json:"port,omitempty"`
	// HostVerdict is the policy's verdict on a connect.
	HostVerdict *policy.HostVerdict `json:"host_verdict,omitempty"`
	// Path is the resolved path of a file operation.
	Path string `json:"path,omitempty"`
	// Command and Cwd describe a command (for a connect, the command
	// that connects).
	Command string `json:"command,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	// Verdict is the policy's verdict on a file operation.
	Verdict *policy.Verdict `json:"verdict,omitempty"`
	// CommandVerdict is the policy's verdict on a command; its Claims
	// whose Decision is Ask become the command's grants when approved.
	CommandVerdict *policy.CommandVerdict `json:"command_verdict,omitempty"`
	// Grants are the paths the command will be allowed to use if approved.
	Grants []policy.Grant `json:"grants,omitempty"`
	// Scopes are the answers' scopes this ask offers: ScopeOnce;
	// ScopeSession when the request can be covered exactly (not for a
	// dynamic command, or one naming a file too large to pin); ScopeAlways
	// when the workspace has an approval store and the request can be
	// written as allow rules (see ScopeAlways).
	Scopes []Scope `json:"scopes"`
	// Covers says what a ScopeSession answer covers: the exact words of
	// the command's asking segments and the content of the files it
	// names, a path and op for one tool, a host and port.
	Covers string `json:"covers,omitempty"`
}

// Reason returns the policy's explanation of why the operation needs
// approval.
func (r *ApprovalRequest) Reason() string {
	switch {
	case r.Verdict != nil:
		return r.Verdict.Reason
	case r.CommandVerdict != nil:
		return r.CommandVerdict.Reason
	case r.HostVerdict != nil:
		return hostReason(r.HostVerdict)
	}
	return ""
}

// hostReason explains a connect that needs approval.
func hostReason(v *policy.HostVerdict) string {
	return fmt.Sprintf("a command connects to %s, which network.allow does not name (%s)", net.JoinHostPort(v.Host, strconv.Itoa(int(v.Port))), v.Rule)
}

// askNetwork answers the allow-list proxy's asks for command (started by
// tool) through the approver; the answer holds per host:port for that
// command.
func (s *Session) askNetwork(ctx context.Context, tool, command string, host string, port uint16) bool {
	v, err := s.ws.checker.DecideHost(host, port)
	if err != nil {
		return false
	}
	req := &ApprovalRequest{Op: "connect", Host: v.Host, Port: port, HostVerdict: v, Command: command}
	return s.ask(ctx, tool, req, hostScope{hostKey(v.Host, port)}, net.JoinHostPort(v.Host, strconv.Itoa(int(port))), v.Rule, hostReason(v)) == nil
}

// authorizePath judges path for every op (the strictest verdict wins) and
// asks the approver on Ask. It returns the verdict of the allowed
// operation.
func (s *Session) authorizePath(ctx context.Context, tool, path string, ops ...policy.Op) (*policy.Verdict, error) {
	var worst *policy.Verdict
	for _, op := range ops {
		v, err := s.ws.checker.DecidePath(path, op)
		if err != nil {
			return nil, &ArgumentError{Arg: "path", Value: path, Err: err}
		}
		// The strictest verdict wins; on a tie, the write: an approval
		// must never be asked for, or remembered as, a mere read.
		if worst == nil || v.Decision.Stricter(worst.Decision) || (v.Decision == worst.Decision && v.Op == policy.Write) {
			worst = v
		}
	}
	v := worst
	switch v.Decision {
	case policy.Allow:
		s.ws.log.Debug(tool, "op", v.Op.String(), "path", v.Path, "decision", "allow", "rule", v.Rule)
		return v, nil
	case policy.Ask:
		req := &ApprovalRequest{Op: v.Op.String(), Path: v.Path, Verdict: v}
		if err := s.ask(ctx, tool, req, pathScope{pathGrant{tool: tool, op: v.Op, path: v.Path}}, v.Path, v.Rule, pathReason(v)); err != nil {
			return nil, err
		}
		return v, nil
	default:
		err := &policy.DeniedError{Op: v.Op.String(), Path: v.Path, Rule: v.Rule, Decision: policy.Deny, Reason: pathReason(v)}
		s.ws.log.Info(tool+" denied", "op", v.Op.String(), "path", v.Path, "rule", v.Rule)
		return nil, err
	}
}

// ask consults the session's grants, then the approver. A refusal or a
// missing approver is a *policy.DeniedError with Decision Ask. scope is
// what a session answer covers, nil when it cannot be covered.
func (s *Session) ask(ctx context.Context, tool string, req *ApprovalRequest, scope grantScope, what, rule, reason string) error {
	op := req.Op
	if op == "spawn" {
		op = "run"
	}
	req.Tool = tool
	if scope != nil {
		s.grants.mu.Lock()
		ok := scope.covered(&s.grants)
		s.grants.mu.Unlock()
		if ok {
			s.ws.log.Info(tool+" approved by a session grant", "op", req.Op, "target", what, "rule", rule)
			return nil
		}
	}
	req.Scopes = []Scope{ScopeOnce}
	var always persistable
	if scope != nil {
		req.Scopes = append(req.Scopes, ScopeSession)
		req.Covers = scope.describe()
		if p, ok := scope.(persistable); ok && s.ws.store != nil {
			if _, _, ok := p.rules(); ok {
				always = p
				req.Scopes = append(req.Scopes, ScopeAlways)
			}
		}
	}
	a := s.ws.asker
	if a == nil {
		s.ws.log.Info(tool+" needs approval, no approver", "op", req.Op, "target", what, "rule", rule)
		return &policy.DeniedError{Op: op, Path: what, Rule: rule, Decision: policy.Ask,
			Reason: joinReason(reason, "no approver is configured in this workspace, so it was refused")}
	}
	ans, err := a(ctx, req)
	if err != nil {
		return fmt.Errorf("asking approval for %s %s: %w", req.Op, what, err)
	}
	if !ans.Allow {
		s.ws.log.Info(tool+" declined", "op", req.Op, "target", what, "rule", rule)
		return &policy.DeniedError{Op: op, Path: what, Rule: rule, Decision: policy.Ask,
			Reason: joinReason(reason, "the user declined it")}
	}
	if ans.Scope == ScopeAlways && always != nil {
		cmds, paths, _ := always.rules()
		if err := s.ws.store.add(cmds, paths); err != nil {
			// Still approved, for this session: the user said yes.
			s.ws.log.Warn("could not persist an approval in the user policy", "file", s.ws.store.path, "err", err)
		} else {
			s.ws.log.Info(tool+" approved always", "op", req.Op, "target", what, "file", s.ws.store.path)
		}
		ans.Scope = ScopeSession
	}
	if ans.Scope == ScopeSession && scope != nil {
		s.grants.mu.Lock()
		scope.record(&s.grants)
		s.grants.mu.Unlock()
		s.ws.log.Info(tool+" approved for the session", "op", req.Op, "target", what, "rule", rule, "covers", req.Covers)
		return nil
	}
	s.ws.log.Info(tool+" approved", "op", req.Op, "target", what, "rule", rule)
	return nil
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// pathReason returns the verdict's reason, or one derived from it.
func pathReason(v *policy.Verdict) string {
	if v.Reason != "" {
		return v.Reason
	}
	where := "inside the workspace"
	if !v.Inside {
		where = "outside the workspace root"
	}
	switch v.Decision {
	case policy.Ask:
		return fmt.Sprintf("%s %s is %s and needs the user's approval (%s)", v.Op, v.Path, where, v.Rule)
	case policy.Deny:
		return fmt.Sprintf("%s %s is %s and not allowed (%s)", v.Op, v.Path, where, v.Rule)
	}
	return ""
}
