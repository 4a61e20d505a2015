package policy

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// ValidationError reports an invalid field of a Policy or Spec. Field
// names the offending element as in the policy file: `path_rules[1].action`.
type ValidationError struct {
	Field string
	Value string
	Err   error
}

func (e *ValidationError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("%s %q: %v", e.Field, e.Value, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Field, e.Err)
}

// Unwrap returns the cause.
func (e *ValidationError) Unwrap() error { return e.Err }

// Errors wrapped by *ValidationError.
var (
	// ErrInvalidValue reports an out-of-range enum value.
	ErrInvalidValue = errors.New("invalid value")
	// ErrNotAbsolute reports a relative path where an absolute one is needed.
	ErrNotAbsolute = errors.New("must be an absolute path")
	// ErrEmptyCommandPattern reports a command rule without words.
	ErrEmptyCommandPattern = errors.New("empty command pattern")
	// ErrHostsWithoutAllowList reports network.allow, network.deny or
	// network.unknown set while the network is none or full.
	ErrHostsWithoutAllowList = errors.New("network.allow, network.deny and network.unknown apply only to the allow-list form of network")
	// ErrUnknownHostDecision reports network.unknown other than deny or ask.
	ErrUnknownHostDecision = errors.New("network.unknown must be deny or ask (allow would make the allow-list empty of meaning: use network: full)")
)

// Validate checks the policy: decisions and ops are valid, every pattern
// compiles (a malformed glob is reported with its list, index and pattern,
// as a *PatternError), System paths are absolute, and nothing contains a
// NUL byte. It does not modify p.
func (p *Policy) Validate() error {
	var errs []error
	dec := func(field string, d Decision) {
		if !d.Valid() {
			errs = append(errs, &ValidationError{Field: field, Value: strconv.Itoa(int(d)), Err: ErrInvalidValue})
		}
	}
	dec("write", p.Write)
	dec("read_outside", p.ReadOutside)
	dec("write_outside", p.WriteOutside)
	dec("shell_default", p.ShellDefault)
	if p.Network > NetworkAllowList {
		errs = append(errs, &ValidationError{Field: "network", Value: strconv.Itoa(int(p.Network)), Err: ErrInvalidValue})
	}
	switch {
	case p.Network != NetworkAllowList && (len(p.Hosts.Allow) > 0 || len(p.Hosts.Deny) > 0 || p.Hosts.Unknown != Deny):
		errs = append(errs, &ValidationError{Field: "network", Value: p.Network.String(), Err: ErrHostsWithoutAllowList})
	case p.Hosts.Unknown != Deny && p.Hosts.Unknown != Ask:
		errs = append(errs, &ValidationError{Field: "network.unknown", Value: p.Hosts.Unknown.String(), Err: ErrUnknownHostDecision})
	}
	if _, _, err := compileHostRules(p.Hosts); err != nil {
		errs = append(errs, err)
	}
	checkPattern := func(list string, i int, pat string) {
		// Compile with a placeholder home so "~" patterns are checked too;
		// nothing is matched here.
		if _, err := compileSyntax(pat); err != nil {
			var pe *PatternError
			if asPatternError(err, &pe) {
				pe.List, pe.Index = list, i
			}
			errs = append(errs, err)
		}
	}
	for i, pat := range p.DeniedPaths {
		checkPattern("denied_paths", i, pat)
	}
	for i, pat := range p.Protect.Extra {
		checkPattern("protect", i+len(p.Protect.Patterns())-len(p.Protect.Extra), pat)
	}
	for i, pat := range p.Secrets {
		checkPattern("system_secrets", i, pat)
	}
	for i, r := range p.PathRules {
		checkPattern("path_rules", i, r.Pattern)
		dec(fmt.Sprintf("path_rules[%d].action", i), r.Action)
		for j, op := range r.Ops {
			if !op.Valid() {
				errs = append(errs, &ValidationError{Field: fmt.Sprintf("path_rules[%d].ops[%d]", i, j), Value: strconv.Itoa(int(op)), Err: ErrInvalidValue})
			}
		}
	}
	for i, r := range p.CommandRules {
		field := fmt.Sprintf("command_rules[%d]", i)
		switch {
		case strings.IndexByte(r.Pattern, 0) >= 0:
			errs = append(errs, &ValidationError{Field: field + ".pattern", Value: r.Pattern, Err: ErrNUL})
		case strings.TrimSpace(r.Pattern) == "":
			errs = append(errs, &ValidationError{Field: field + ".pattern", Value: r.Pattern, Err: ErrEmptyCommandPattern})
		}
		dec(field+".action", r.Action)
	}
	for i, s := range p.System {
		field := fmt.Sprintf("system[%d]", i)
		switch {
		case strings.IndexByte(s, 0) >= 0:
			errs = append(errs, &ValidationError{Field: field, Value: s, Err: ErrNUL})
		case !path.IsAbs(s):
			errs = append(errs, &ValidationError{Field: field, Value: s, Err: ErrNotAbsolute})
		}
	}
	return errors.Join(errs...)
}

// compileSyntax checks a pattern's syntax without touching the file system.
func compileSyntax(pat string) (*Pattern, error) {
	return compilePattern(pat, "/nonexistent-home", false)
}

func asPatternError(err error, pe **PatternError) bool { return errors.As(err, pe) }

// TextError reports a text value that names no member of an enumeration
// (a decision, an op, a mode, a network setting): invalid decision "maybe".
// It unwraps to ErrInvalidValue.
type TextError struct {
	// Kind is what was expected: "decision", "op", "mode", "network".
	Kind string
	// Value is the text given.
	Value string
	// Valid lists the accepted values, in the order the error prints them.
	Valid []string
}

func (e *TextError) Error() string {
	msg := fmt.Sprintf("invalid %s %q", e.Kind, e.Value)
	if len(e.Valid) > 0 {
		msg += " (valid: " + strings.Join(e.Valid, ", ") + ")"
	}
	return msg
}

// Unwrap returns ErrInvalidValue.
func (e *TextError) Unwrap() error { return ErrInvalidValue }
