package seatbelt

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/executor"
)

// ErrInvalidArgv is wrapped by *ArgvError.
var ErrInvalidArgv = errors.New("invalid sandbox-exec command line")

// ArgvError reports an input Argv cannot put on a command line. It
// unwraps to ErrInvalidArgv.
type ArgvError struct {
	// Field is "profile", "params[2]" or "command".
	Field string
	// Value is the offending value (a parameter, or a parameter name the
	// profile references).
	Value string
	// Reason says what is wrong.
	Reason string
}

func (e *ArgvError) Error() string {
	return fmt.Sprintf("%v: %s %q: %s", ErrInvalidArgv, e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidArgv.
func (e *ArgvError) Unwrap() error { return ErrInvalidArgv }

// paramKey is what a parameter name may be: sandbox-exec splits -D
// KEY=VALUE at the first "=", and profiles name keys in (param "KEY").
var paramKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// paramRef finds the parameters a profile references.
var paramRef = regexp.MustCompile(`\(param "([^"\\]*)"\)`)

// Argv returns the complete command line that runs command under the
// Seatbelt profile text with its parameters:
//
//	/usr/bin/sandbox-exec -p PROFILE -D KEY=VALUE ... /bin/sh -c COMMAND
//
// Every value is one argument of its own, passed to execve as it is: the
// profile and the parameters are never joined into a string a shell
// parses, and command is never put into the profile. Each parameter is
// "KEY=VALUE" (policyderive.SBPL's form): KEY a name of letters, digits
// and underscores, VALUE any bytes but NUL (an "=", spaces, quotes,
// parentheses and non-UTF-8 bytes included). Argv refuses, with an
// *ArgvError, a NUL byte anywhere (execve cannot pass one), an empty
// profile, a malformed or repeated parameter, and a profile that
// references a parameter that is not given (sandbox-exec would fail to
// compile it). No option can be mistaken for another: the profile and
// every KEY=VALUE are arguments of -p and -D, which consume the next
// argument whatever it starts with, and the first argument after them is
// the absolute path /bin/sh, which ends sandbox-exec's options.
func Argv(profile string, params []string, command string) ([]string, error) {
	prefix, err := argvPrefix(Program, profile, params)
	if err != nil {
		return nil, err
	}
	return withCommand(prefix, command)
}

// argvPrefix validates the profile and parameters and returns the
// command line up to (not including) /bin/sh, program as argv[0]
// (Program, or this package's test fake).
func argvPrefix(program, profile string, params []string) ([]string, error) {
	switch {
	case strings.TrimSpace(profile) == "":
		return nil, &ArgvError{Field: "profile", Value: profile, Reason: "empty profile"}
	case strings.IndexByte(profile, 0) >= 0:
		return nil, &ArgvError{Field: "profile", Value: clip(profile), Reason: "contains a NUL byte"}
	}
	argv := make([]string, 0, 3+2*len(params)+3)
	argv = append(argv, program, "-p", profile)
	keys := make(map[string]bool, len(params))
	for i, kv := range params {
		field := fmt.Sprintf("params[%d]", i)
		key, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			return nil, &ArgvError{Field: field, Value: kv, Reason: "not KEY=VALUE"}
		case !paramKey.MatchString(key):
			return nil, &ArgvError{Field: field, Value: kv, Reason: "the key is not a name of ASCII letters, digits and underscores"}
		case strings.IndexByte(kv, 0) >= 0:
			return nil, &ArgvError{Field: field, Value: kv, Reason: "contains a NUL byte"}
		case keys[key]:
			return nil, &ArgvError{Field: field, Value: kv, Reason: "the key is given twice"}
		}
		keys[key] = true
		argv = append(argv, "-D", kv)
	}
	for _, m := range paramRef.FindAllStringSubmatch(profile, -1) {
		if !keys[m[1]] {
			return nil, &ArgvError{Field: "profile", Value: m[1], Reason: "the profile references a parameter that is not given"}
		}
	}
	return argv, nil
}

// withCommand appends /bin/sh -c command to a copy of prefix.
func withCommand(prefix []string, command string) ([]string, error) {
	if strings.IndexByte(command, 0) >= 0 {
		return nil, &ArgvError{Field: "command", Value: clip(command), Reason: "contains a NUL byte"}
	}
	argv := slices.Grow(slices.Clip(prefix), 3)
	return append(argv, executor.Shell, "-c", command), nil
}

// clip shortens long values for error messages.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
