//go:build linux

package gateoracle

import "github.com/cordon-sandbox/cordon/policy"

// deniedPaths are the secrets of every oracle policy.
var deniedPaths = []string{".env*", "secrets/", "~/.ssh", "~/.aws", "/etc/shadow"}

// Policies are the policies the oracle judges every command under:
// "coding" (writes inside the root, shell_default ask, a handful of
// allowed programs, git push and rm -rf denied, network tools asked) and
// "trusted" (every command allowed by default, rm, git push and network
// tools denied) — the hardest setting for the gate.
func Policies() map[string]*policy.Policy {
	coding := policy.Coding.Policy()
	coding.DeniedPaths = deniedPaths
	for _, p := range []string{"cat", "ls", "grep", "head", "tail", "wc", "echo", "printf", "find", "sed", "awk",
		"sort", "uniq", "cut", "tr", "xargs", "git", "go test", "npm test", "make", "env", "true", "test", "diff",
		"mkdir", "touch", "cp", "mv", "tee", "tar", "dd", "basename", "dirname", "readlink", "stat", "file"} {
		coding.CommandRules = append(coding.CommandRules, policy.CommandRule{Pattern: p, Action: policy.Allow})
	}
	for _, p := range []string{"git push", "rm -rf"} {
		coding.CommandRules = append(coding.CommandRules, policy.CommandRule{Pattern: p, Action: policy.Deny})
	}
	for _, p := range []string{"rm", "curl", "wget", "ssh", "scp", "rsync", "nc"} {
		coding.CommandRules = append(coding.CommandRules, policy.CommandRule{Pattern: p, Action: policy.Ask})
	}
	// Deny rules first: the first matching rule decides.
	coding.CommandRules = append(coding.CommandRules[len(coding.CommandRules)-9:], coding.CommandRules[:len(coding.CommandRules)-9]...)

	trusted := policy.Trusted.Policy()
	trusted.DeniedPaths = deniedPaths
	for _, p := range []string{"rm", "git push", "curl", "wget", "nc"} {
		trusted.CommandRules = append(trusted.CommandRules, policy.CommandRule{Pattern: p, Action: policy.Deny})
	}
	return map[string]*policy.Policy{"coding": coding, "trusted": trusted}
}
