package workspace

import (
	"errors"
	"fmt"
)

// Limits bound what the tools read, return and keep. A zero field means its
// default (see DefaultLimits).
type Limits struct {
	// MaxFileReadChars caps the characters (runes) ReadText returns.
	MaxFileReadChars int `json:"max_file_read_chars"`
	// MaxFileReadBytes caps the bytes ReadText and EditText read from a
	// file; ReadText reads a larger file through a prefix of this size,
	// EditText refuses it.
	MaxFileReadBytes int64 `json:"max_file_read_bytes"`
	// MaxShellOutputChars caps each output stream of Run (bytes, head and
	// tail kept) and the newest output a background process keeps.
	MaxShellOutputChars int `json:"max_shell_output_chars"`
	// MaxGrepFileBytes is the largest file Grep searches; larger files are
	// skipped and counted.
	MaxGrepFileBytes int64 `json:"max_grep_file_bytes"`
	// MaxGrepLineChars clips every matching line Grep returns.
	MaxGrepLineChars int `json:"max_grep_line_chars"`
	// MaxListResults caps the entries ListFiles returns.
	MaxListResults int `json:"max_list_results"`
	// MaxGrepMatches caps the matches Grep returns per file and in total.
	MaxGrepMatches int `json:"max_grep_matches"`
}

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{
		MaxFileReadChars:    50_000,
		MaxFileReadBytes:    10_000_000,
		MaxShellOutputChars: 30_000,
		MaxGrepFileBytes:    5_000_000,
		MaxGrepLineChars:    400,
		MaxListResults:      500,
		MaxGrepMatches:      100,
	}
}

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileReadChars == 0 {
		l.MaxFileReadChars = d.MaxFileReadChars
	}
	if l.MaxFileReadBytes == 0 {
		l.MaxFileReadBytes = d.MaxFileReadBytes
	}
	if l.MaxShellOutputChars == 0 {
		l.MaxShellOutputChars = d.MaxShellOutputChars
	}
	if l.MaxGrepFileBytes == 0 {
		l.MaxGrepFileBytes = d.MaxGrepFileBytes
	}
	if l.MaxGrepLineChars == 0 {
		l.MaxGrepLineChars = d.MaxGrepLineChars
	}
	if l.MaxListResults == 0 {
		l.MaxListResults = d.MaxListResults
	}
	if l.MaxGrepMatches == 0 {
		l.MaxGrepMatches = d.MaxGrepMatches
	}
	return l
}

// Validate reports a negative limit by name.
func (l Limits) Validate() error {
	var errs []error
	check := func(name string, v int64) {
		if v < 0 {
			errs = append(errs, &OptionError{Option: "WithLimits", Value: fmt.Sprintf("%s=%d", name, v), Reason: "a limit cannot be negative"})
		}
	}
	check("MaxFileReadChars", int64(l.MaxFileReadChars))
	check("MaxFileReadBytes", l.MaxFileReadBytes)
	check("MaxShellOutputChars", int64(l.MaxShellOutputChars))
	check("MaxGrepFileBytes", l.MaxGrepFileBytes)
	check("MaxGrepLineChars", int64(l.MaxGrepLineChars))
	check("MaxListResults", int64(l.MaxListResults))
	check("MaxGrepMatches", int64(l.MaxGrepMatches))
	return errors.Join(errs...)
}
