package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// linkDenied refuses reading path, a file with more than one link, when
// another of its names in the root is denied for reading: the policy
// judges names, and a hard link is the same file under a name it does
// not deny (`ln docs/notes.md docs/.env.production`, then a secret
// written in place into .env.production). The other names are searched
// for in the root only; names outside it are not (see the package doc).
// A search that cannot complete refuses the read: never silently looser.
func (s *Session) linkDenied(ctx context.Context, tool, path string, st statInfo) error {
	if st.nlink < 2 || !st.mode.IsRegular() {
		return nil
	}
	denied, err := s.linkedDenials(ctx, []policyderive.FileID{{Dev: st.dev, Ino: st.ino}})
	if err != nil {
		return &policy.DeniedError{Op: policy.Read.String(), Path: path, Rule: "hard links", Decision: policy.Deny,
			Reason: fmt.Sprintf("the file has %d names and its other names could not be checked: %v", st.nlink, err)}
	}
	for _, v := range denied {
		s.ws.log.Info(tool+" denied", "op", "read", "path", path, "link_of", v.Path, "rule", v.Rule)
		return &policy.DeniedError{Op: policy.Read.String(), Path: path, Rule: v.Rule, Decision: policy.Deny,
			Reason: fmt.Sprintf("the file is another name (a hard link) of %s, which may not be read (%s)", s.ws.relOrAbs(v.Path), v.Rule)}
	}
	return nil
}

// linkedDenials returns, for each of the files ids that has a name in the
// root the policy does not allow reading, the verdict on that name; and
// for each that is a private System file (policyderive.PrivateSystemLinks),
// a denial naming its System path.
func (s *Session) linkedDenials(ctx context.Context, ids []policyderive.FileID) (map[policyderive.FileID]*policy.Verdict, error) {
	names, err := policyderive.OtherNames(ctx, s.ws.Root(), nil, ids, policyderive.Options{})
	if errors.Is(err, policyderive.ErrNoInodes) {
		return nil, nil // seatbelt judges each name by path; nothing to search here
	}
	if err != nil {
		return nil, err
	}
	out := map[policyderive.FileID]*policy.Verdict{}
	// A name in the root of a private System file (a root-only key
	// such as /etc/docker/key.json, linked in by its owner): the OS
	// sandbox masks it with the file, and so do the file tools.
	private, err := policyderive.PrivateSystemLinks(ctx, s.ws.checker)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if p, ok := private[id]; ok {
			out[id] = &policy.Verdict{Decision: policy.Deny, Op: policy.Read, Rule: "private system file", Path: p,
				Reason: "a file other users may not read is not part of the System grant"}
		}
	}
	for id, list := range names {
		if out[id] != nil {
			continue
		}
		for _, n := range list {
			if v := s.ws.checker.DecideResolved(n, policy.Read); v.Decision != policy.Allow {
				out[id] = v
				break
			}
		}
	}
	return out, nil
}
