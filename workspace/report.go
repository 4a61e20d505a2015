package workspace

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// Refusal is one thing refused or undone while a command ran: a write on
// the host-run surface the guard undid, a connection the allow-list's
// proxy refused, or a file access the OS sandbox refused as far as the
// command's own error output shows it.
type Refusal struct {
	// Source is "guard" (a protected path written and undone), "proxy" (a
	// connection refused by the network allow-list's proxy) or "os" (a
	// file access the command reported failing with a permission, a
	// read-only or a not-found error, on a path the policy does not
	// allow for that operation).
	Source string `json:"source"`
	// Op is "read", "write", "connect", or "access" when the command's
	// message does not say whether it read or wrote a path the policy
	// refuses both ways.
	Op string `json:"op,omitempty"`
	// Target is the path, or host:port.
	Target string `json:"target"`
	// Rule is the policy rule that refuses it.
	Rule string `json:"rule,omitempty"`
	// Detail says what happened, in words.
	Detail string `json:"detail,omitempty"`
}

// maxOSRefusals bounds the refusals read from one command's output.
const maxOSRefusals = 16

// osErrorRE finds the error messages of a refused file access.
var osErrorRE = regexp.MustCompile(`Permission denied|Operation not permitted|Read-only file system|No such file or directory`)

// pathTokenRE finds what may be a path in an error line: a quoted string,
// or a word with a "/" or a leading "." or "~".
var pathTokenRE = regexp.MustCompile("['‘\"`]([^'’\"`\n]+)['’\"`]|([.~/][^\\s:'’\"`(),]*|[^\\s:'’\"`(),]+/[^\\s:'’\"`(),]*)")

// writeWords mark an error message about a write.
var writeWords = []string{"cannot touch", "cannot create", "can't create", "cannot remove", "cannot mkdir", "Read-only file system", "cannot move", "cannot overwrite", "failed to create", "could not create", "unable to create", "Directory nonexistent"}

// osRefusals reads the command's error output for file accesses the OS
// refused on paths the policy does not allow: the sandbox refuses them
// as Permission denied (Landlock, read-only mounts, Seatbelt), as
// Read-only file system, or hides them (No such file or directory under
// bwrap and Docker). A line with such an error is searched for paths;
// only paths the policy refuses are reported (for the write when the line
// says it writes or the read is allowed, else for the read), so a missing
// file is not taken for a refusal. It is inference from text, not an
// audit of the kernel's decisions: a program that does not print its
// failures is not seen.
func (s *Session) osRefusals(stderr, dir string) []Refusal {
	var out []Refusal
	seen := map[string]bool{}
	for _, line := range strings.Split(stderr, "\n") {
		if len(out) >= maxOSRefusals {
			break
		}
		errText := osErrorRE.FindString(line)
		if errText == "" {
			continue
		}
		writes := false
		for _, w := range writeWords {
			writes = writes || strings.Contains(line, w)
		}
		for _, m := range pathTokenRE.FindAllStringSubmatch(line, 8) {
			p := m[1]
			if p == "" {
				p = m[2]
			}
			p = strings.TrimRight(p, ".,;")
			if p == "" || p == "." || p == ".." {
				continue
			}
			if len(p) > 1024 {
				continue
			}
			switch {
			case strings.HasPrefix(p, "~/") && s.ws.Home() != "":
				p = filepath.Join(s.ws.Home(), p[2:])
			case strings.HasPrefix(p, "~"):
				continue
			case !filepath.IsAbs(p):
				p = filepath.Join(dir, p)
			}
			p = filepath.Clean(p)
			if strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/sys/") {
				continue
			}
			// Judged as written, never resolved on the host: the text is
			// the command's, and resolving it would tell the command what
			// the host's links point to.
			rv := s.ws.checker.DecideResolved(p, policy.Read)
			wv := s.ws.checker.DecideResolved(p, policy.Write)
			v, op := rv, "read"
			switch {
			case writes || rv.Decision == policy.Allow:
				v, op = wv, "write"
			case wv.Decision != policy.Allow:
				op = "access" // refused both ways; the message does not say which
			}
			key := v.Path + "\x00" + op
			if v.Decision == policy.Allow || seen[key] {
				continue
			}
			seen[key] = true
			what := "the policy denies it"
			if v.Decision == policy.Ask {
				what = "it needs the user's approval"
			}
			out = append(out, Refusal{Source: "os", Op: op, Target: display(v), Rule: v.Rule,
				Detail: fmt.Sprintf("the sandbox refused it (%s): %s", errText, what)})
			if len(out) >= maxOSRefusals {
				break
			}
		}
	}
	return out
}

// refusalNotice is the block a shell result ends with for the model: each
// refusal with its rule, and what to do instead of retrying.
func refusalNotice(rs []Refusal) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[cordon] refused while the command ran:\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "- %s %s", r.Source, r.Op)
		if r.Target != "" {
			// Quoted: a path comes from the command's own output.
			b.WriteString(" " + strconv.Quote(clip(r.Target, 200)))
		}
		if r.Rule != "" {
			fmt.Fprintf(&b, " (rule: %s)", oneLineText(r.Rule))
		}
		if r.Detail != "" {
			b.WriteString(": " + oneLineText(r.Detail))
		}
		b.WriteByte('\n')
	}
	b.WriteString("Do not retry these or work around them: the policy refuses them. If the task needs one, ask the user to grant it (a path rule, network.allow, or approving the command).")
	return b.String()
}

// oneLineText replaces control characters (a newline in a file name the
// guard reports) so that a refusal stays one line.
func oneLineText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, clip(s, 500))
}
