package policyderive

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// sbplBase lets /bin/sh run under (deny default): process creation
// within the sandbox, system information, file metadata (contents stay
// denied), dyld's helper device. It names only constant system paths.
const sbplBase = `(version 1)
(deny default)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow file-read-metadata)
(allow file-read* (literal "/private/var/select/sh"))
`

// sbplDevices comes last, so that no rule takes the pseudo-devices away.
const sbplDevices = `(allow file-read* file-write-data file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper"))
(allow file-read* (literal "/dev/random") (literal "/dev/urandom"))
(allow file-read* file-write-data (regex #"^/dev/fd/[0-9]+$"))
`

// SBPL operation lists of the two chains.
const (
	sbplReadOps  = "file-read* process-exec"
	sbplWriteOps = "file-write*"
)

// SBPL renders the profile as a Seatbelt profile for sandbox-exec and the
// parameters it needs, each "KEY=VALUE" (pass each as -D KEY=VALUE).
// Paths reach the profile only as parameters or as regex literals with
// every metacharacter escaped; the text never contains a path verbatim.
//
// The policy's decision procedure is rendered directly, not as masks:
// per operation, the defaults (outside the root, the System paths, the
// root), then the rules from the last to the first, so that Seatbelt's
// last-match-wins evaluation reproduces the policy's first-match-wins:
// allow rules as allows, deny rules as denies, ask rules as denies
// followed by allows of the approved grants within them. Bare-name and
// glob patterns are regexes, so they also cover paths created after the
// command starts.
func SBPL(pr *Profile) (text string, params []string, fid *Fidelity) {
	s := &sbplBuilder{pr: pr, f: &Fidelity{Backend: "seatbelt"}, keys: map[string]string{}}
	s.b.WriteString(sbplBase)
	s.chain(policy.Read)
	s.chain(policy.Write)
	s.private()
	s.b.WriteString(sbplDevices)
	switch pr.Network {
	case policy.NetworkFull:
		s.b.WriteString("(allow network*)\n(deny network-outbound (subpath \"/\"))\n(allow network-outbound (literal \"/private/var/run/mDNSResponder\"))\n")
		s.f.exact("network", policy.ControlNetTCP, "", "full: IP networking allowed; Unix sockets denied except the DNS resolver's")
	case policy.NetworkAllowList:
		fmt.Fprintf(&s.b, "(deny network*)\n(allow network-outbound (remote ip \"localhost:%d\"))\n", ProxyPort)
		s.f.exact("network", policy.ControlNetTCP, "", fmt.Sprintf("allow-list: only connections to the proxy on localhost:%d; every other network operation denied, Unix sockets included", ProxyPort))
		s.f.looser("network proxy port", policy.ControlNetTCP, "", fmt.Sprintf("any program listening on localhost:%d of the host can be reached, not only cordon's proxy", ProxyPort), "Seatbelt has no private network namespace: the rule names a local port", "run the proxy on that port (the seatbelt executor does not yet: it refuses the allow-list)", false)
	default:
		s.b.WriteString("(deny network*)\n")
		s.f.exact("network", policy.ControlNetTCP, "", "none: every network operation denied, Unix sockets included")
	}
	f := s.f
	f.exact("signals", policy.ControlSignal, "", "only processes of the same sandbox can be signalled")
	f.exact("new paths", policy.ControlFSNewFiles, "", "patterns are regexes: they cover paths created while the command runs")
	if s.folded {
		f.stricter("letter case", policy.ControlFSRead, "", "deny patterns match letters in either case", "macOS file systems are case-insensitive by default: a deny must also catch .ENV for .env")
	}
	f.looser("metadata", policy.ControlFSMetadata, "", "file metadata (stat, directory entry existence) is readable everywhere except under deny rules", "a shell needs to stat paths along its way; contents stay denied", "none needed for contents; use the bwrap backend to hide existence", true)
	if pr.TmpDir != "" {
		f.exact("tmp "+pr.TmpDir, policy.ControlFSWrite, "", "private temporary directory, writable")
	} else {
		f.stricter("tmp", policy.ControlFSWrite, "", "no temporary directory is writable", "the backend must create a private directory and set it with Profile.WithTmpDir (and TMPDIR)")
	}
	f.exact("devices", policy.ControlFSWrite, "", "/dev/null, /dev/zero and /dev/fd/N are always usable")
	return s.b.String(), s.params, f
}

// private denies the files of System trees that other users may not
// read (the derivation's "private system file" masks): the System grant
// is a subpath, so each is denied by its own path, after the grants.
func (s *sbplBuilder) private() {
	first := true
	for _, m := range s.pr.Masks {
		if m.Reason != "private system file" {
			continue
		}
		if first {
			s.b.WriteString(";; private system files\n")
			first = false
		}
		filter := "(literal " + s.param("PRIVATE", m.Path) + ")"
		if m.Dir {
			filter = s.subpath("PRIVATE", m.Path)
		}
		s.rule("deny", sbplReadOps+" "+sbplWriteOps, filter)
	}
}

type sbplBuilder struct {
	pr     *Profile
	f      *Fidelity
	b      strings.Builder
	params []string
	keys   map[string]string // "PREFIX\x00value" -> key
	n      map[string]int
	folded bool
}

// param returns the (param "KEY") expression for value, adding KEY=value
// to the parameters once per prefix and value.
func (s *sbplBuilder) param(prefix, value string) string {
	id := prefix + "\x00" + value
	key, ok := s.keys[id]
	if !ok {
		if s.n == nil {
			s.n = map[string]int{}
		}
		if prefix == "ROOT" || prefix == "TMP" {
			key = prefix
		} else {
			key = fmt.Sprintf("%s_%d", prefix, s.n[prefix])
			s.n[prefix]++
		}
		s.keys[id] = key
		s.params = append(s.params, key+"="+value)
	}
	return fmt.Sprintf(`(param "%s")`, key)
}

func (s *sbplBuilder) subpath(prefix, value string) string {
	return "(subpath " + s.param(prefix, value) + ")"
}

func (s *sbplBuilder) rule(action, ops string, filters ...string) {
	fmt.Fprintf(&s.b, "(%s %s %s)\n", action, ops, strings.Join(filters, " "))
}

// chain emits the rules of one operation, lowest priority first.
func (s *sbplBuilder) chain(op policy.Op) {
	pr := s.pr
	ops := sbplReadOps
	outside, inside := pr.Defaults.ReadOutside, pr.Defaults.ReadInside
	if op == policy.Write {
		ops = sbplWriteOps
		outside, inside = pr.Defaults.WriteOutside, pr.Defaults.WriteInside
	}
	fmt.Fprintf(&s.b, ";; %s\n", op)
	grants := s.grants(op)
	switch outside {
	case policy.Allow:
		s.rule("allow", ops, `(subpath "/")`)
	case policy.Ask:
		for _, g := range grants {
			s.rule("allow", ops, g)
		}
	}
	if op == policy.Read {
		for _, p := range pr.System {
			s.rule("allow", ops, s.subpath("SYSTEM", p))
		}
	}
	root := s.subpath("ROOT", pr.Root)
	switch inside {
	case policy.Allow:
		s.rule("allow", ops, root)
	case policy.Ask:
		s.rule("deny", ops, root)
		for _, g := range grants {
			s.rule("allow", ops, "(require-all "+root+" "+g+")")
		}
	default:
		s.rule("deny", ops, root)
	}
	if pr.TmpDir != "" {
		s.rule("allow", ops, s.subpath("TMP", pr.TmpDir))
	}
	for i := len(pr.Rules) - 1; i >= 0; i-- {
		r := pr.Rules[i]
		if (op == policy.Read && !r.Read) || (op == policy.Write && !r.Write) || r.Never {
			continue
		}
		subj := fmt.Sprintf("%s %q", r.Source, r.Pattern)
		switch r.Action {
		case policy.Allow:
			f, ok := s.region(i, r, reAllow)
			if !ok.ok {
				s.f.stricter(subj, opControl(op), r.Source, fmt.Sprintf("the allow rule is not rendered for %s", op), "its pattern cannot be written as an exact regex (bytes outside printable ASCII, quotes or backslashes)")
				continue
			}
			s.rule("allow", ops, f)
			s.f.exact(subj, opControl(op), r.Source, fmt.Sprintf("%s allowed", op))
		default:
			f, res := s.region(i, r, reDeny)
			s.rule("deny", ops, f)
			if res.exact {
				what := fmt.Sprintf("%s denied", op)
				if r.Action == policy.Ask {
					what += " (unless granted)"
				}
				s.f.exact(subj, opControl(op), r.Source, what)
			} else {
				s.f.stricter(subj, opControl(op), r.Source, fmt.Sprintf("%s denied on a widened pattern", op), "single-character globs and bytes a Seatbelt regex cannot hold are widened to [^/]+")
			}
			if r.Action != policy.Ask || len(grants) == 0 {
				continue
			}
			af, ares := s.region(i, r, reAllow)
			if !ares.ok {
				s.f.stricter(subj, opControl(op), r.Source, "approved grants are not applied below this ask rule", "its pattern cannot be written as an exact regex")
				continue
			}
			for _, g := range grants {
				s.rule("allow", ops, "(require-all "+af+" "+g+")")
			}
		}
	}
	for _, g := range pr.Grants {
		if op == policy.Read || g.Op == policy.Write {
			s.f.exact(fmt.Sprintf("grant %s %s", g.Op, g.Path), opControl(op), "", "approved for this command where the policy asks")
		}
	}
}

// grants returns the subpath filters of the approved grants covering op.
func (s *sbplBuilder) grants(op policy.Op) []string {
	var out []string
	for _, g := range s.pr.Grants {
		if op == policy.Read || g.Op == policy.Write {
			out = append(out, s.subpath("GRANT", g.Path))
		}
	}
	return slices.Compact(out)
}

// region returns the filter matching the paths rule i matches: exactly
// in allow mode (or not ok), at least in deny mode.
func (s *sbplBuilder) region(i int, r Rule, mode reMode) (string, reResult) {
	if r.Path != "" {
		return s.subpath("RULE", r.Path), reResult{exact: true, ok: true}
	}
	if mode == reDeny {
		s.folded = true
	}
	if r.Form == "name" {
		seg := segRegex(r.Glob, mode)
		if !seg.ok {
			return s.fallback(r, mode)
		}
		any := `(regex #"/` + seg.re + `(/|$)")`
		if mode == reAllow && regexp.MustCompile("^(?:"+seg.re+")$").MatchString("") {
			// The name glob matches the empty string, which is no segment:
			// "/" itself has none.
			any = `(require-all (require-not (literal "/")) ` + any + ")"
		}
		if !r.RootSegment {
			return any, seg
		}
		root := literalRegex(s.pr.Root, mode)
		if !root.ok {
			return s.fallback(r, mode)
		}
		in := `(regex #"^` + root.re + `/([^/]+/)*` + seg.re + `(/|$)")`
		out := "(require-all (require-not " + s.subpath("ROOT", s.pr.Root) + ") " + any + ")"
		return "(require-any " + out + " " + in + ")", reResult{re: "", exact: seg.exact && root.exact, ok: true}
	}
	base := literalRegex(strings.TrimSuffix(r.Base, "/"), mode)
	g := globRegex(r.Glob, mode)
	if !base.ok || !g.ok {
		return s.fallback(r, mode)
	}
	if g.whole {
		// "x/**" is x and everything below it.
		return `(regex #"^` + base.re + `(/|$)")`, reResult{exact: base.exact, ok: true}
	}
	return `(regex #"^` + base.re + `/` + g.re + `(/|$)")`, reResult{exact: base.exact && g.exact, ok: true}
}

// fallback is the region of a rule whose pattern could not be
// translated: nothing for an allow (not ok), and for a deny the whole
// tree the pattern can match in (the root for a relative pattern,
// everything otherwise).
func (s *sbplBuilder) fallback(r Rule, mode reMode) (string, reResult) {
	if mode == reAllow {
		return "", reResult{}
	}
	if r.Form == "relative" {
		return s.subpath("ROOT", s.pr.Root), reResult{ok: true}
	}
	return `(subpath "/")`, reResult{ok: true}
}
