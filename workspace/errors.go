package workspace

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every typed error of this package wraps one of them (or
// a standard one such as fs.ErrPermission or errors.ErrUnsupported), so
// callers test the class with errors.Is and the detail with errors.As.
var (
	// ErrInvalidOption is wrapped by *OptionError.
	ErrInvalidOption = errors.New("invalid workspace option")
	// ErrClosed is wrapped by *ClosedError.
	ErrClosed = errors.New("workspace session closed")
	// ErrPathChanged is wrapped by *PathChangedError.
	ErrPathChanged = errors.New("path changed after it was checked")
	// ErrNotText is wrapped by *NotTextError.
	ErrNotText = errors.New("not a text file")
	// ErrTooLarge is wrapped by *TooLargeError.
	ErrTooLarge = errors.New("file too large")
	// ErrNoMatch is wrapped by a *MatchError that found nothing.
	ErrNoMatch = errors.New("no match")
	// ErrAmbiguousMatch is wrapped by a *MatchError that found several
	// matches where one was required.
	ErrAmbiguousMatch = errors.New("several matches")
	// ErrConflict is wrapped by *ConflictError.
	ErrConflict = errors.New("file changed during the edit")
	// ErrInvalidArgument is wrapped by *ArgumentError.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrUnknownProcess is wrapped by *UnknownProcessError.
	ErrUnknownProcess = errors.New("unknown background process")
	// ErrUnknownTool is wrapped by *UnknownToolError.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrNotRegular is wrapped by *NotRegularError.
	ErrNotRegular = errors.New("not a regular file")
)

// OptionError reports an option Local rejected. It unwraps to
// ErrInvalidOption and, when set, to Err (for example the error of the
// policy validation).
type OptionError struct {
	Option string
	Value  string
	Reason string
	Err    error
}

func (e *OptionError) Error() string {
	s := "workspace: " + e.Option
	if e.Value != "" {
		s += fmt.Sprintf(" %q", e.Value)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrInvalidOption and Err.
func (e *OptionError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidOption, e.Err}
	}
	return []error{ErrInvalidOption}
}

// ClosedError reports a use of a session after Close. It unwraps to
// ErrClosed.
type ClosedError struct {
	// Op names the method or tool that was called.
	Op string
}

func (e *ClosedError) Error() string {
	return fmt.Sprintf("workspace: %s: the session is closed", e.Op)
}

// Unwrap returns ErrClosed.
func (e *ClosedError) Unwrap() error { return ErrClosed }

// PathChangedError reports that a path was swapped (typically a component
// replaced by a symbolic link) between the policy decision and the open, so
// the file tool refused to touch it. It unwraps to ErrPathChanged.
type PathChangedError struct {
	// Path is the judged, resolved path.
	Path string
	// Opened is what the opened descriptor turned out to be, when known.
	Opened string
	Reason string
}

func (e *PathChangedError) Error() string {
	s := fmt.Sprintf("%s: %s", e.Path, ErrPathChanged)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Opened != "" {
		s += fmt.Sprintf(" (opened %q)", e.Opened)
	}
	return s + "; nothing was read or written, retry if the change was intended"
}

// Unwrap returns ErrPathChanged.
func (e *PathChangedError) Unwrap() error { return ErrPathChanged }

// NotTextError reports a file the text tools refuse: binary content or
// invalid UTF-8. It unwraps to ErrNotText.
type NotTextError struct {
	Path string
	// Offset is the byte offset of the first offending byte.
	Offset int64
	// Reason is "binary (NUL byte)" or "not valid UTF-8".
	Reason string
}

func (e *NotTextError) Error() string {
	return fmt.Sprintf("%s: not a text file: %s at byte %d", e.Path, e.Reason, e.Offset)
}

// Unwrap returns ErrNotText.
func (e *NotTextError) Unwrap() error { return ErrNotText }

// NotRegularError reports a path that is a directory, device, FIFO or
// socket where a regular file was needed. It unwraps to ErrNotRegular.
type NotRegularError struct {
	Path string
	// Kind is "directory", "symlink", "device", "fifo", "socket" or "other".
	Kind string
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: is a %s, not a regular file", e.Path, e.Kind)
}

// Unwrap returns ErrNotRegular.
func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// TooLargeError reports a file larger than the limit of the operation. It
// unwraps to ErrTooLarge.
type TooLargeError struct {
	Path  string
	Size  int64
	Limit int64
	// LimitName names the limit: "MaxFileReadBytes".
	LimitName string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: file too large: %d bytes, the limit (%s) is %d", e.Path, e.Size, e.LimitName, e.Limit)
}

// Unwrap returns ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// MatchError reports an EditText whose old text was not found exactly once.
// It unwraps to ErrNoMatch (Count 0) or ErrAmbiguousMatch (Count > 1).
type MatchError struct {
	Path  string
	Count int
}

func (e *MatchError) Error() string {
	if e.Count == 0 {
		return fmt.Sprintf("%s: the old text was not found (it must match exactly, including whitespace and indentation)", e.Path)
	}
	return fmt.Sprintf("%s: the old text occurs %d times; include more surrounding context to make it unique, or set replace_all", e.Path, e.Count)
}

// Unwrap returns ErrNoMatch or ErrAmbiguousMatch.
func (e *MatchError) Unwrap() error {
	if e.Count == 0 {
		return ErrNoMatch
	}
	return ErrAmbiguousMatch
}

// ConflictError reports a file replaced by someone else between EditText's
// read and its write; the edit was not applied. It unwraps to ErrConflict.
type ConflictError struct {
	Path string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s: the file was replaced while it was being edited; the edit was not applied, read it again", e.Path)
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// ArgumentError reports an invalid argument of a method or tool. It unwraps
// to ErrInvalidArgument (and to Err, when set).
type ArgumentError struct {
	Arg    string
	Value  string
	Reason string
	Err    error
}

func (e *ArgumentError) Error() string {
	s := fmt.Sprintf("invalid argument %s", e.Arg)
	if e.Value != "" {
		s += fmt.Sprintf(" %q", e.Value)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrInvalidArgument and Err.
func (e *ArgumentError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidArgument, e.Err}
	}
	return []error{ErrInvalidArgument}
}

// UnknownProcessError reports a background process id that is not in the
// session's table. It unwraps to ErrUnknownProcess.
type UnknownProcessError struct {
	ID string
	// Live lists the ids of the processes the session knows.
	Live []string
}

func (e *UnknownProcessError) Error() string {
	if len(e.Live) == 0 {
		return fmt.Sprintf("unknown background process %q: there are no background processes", e.ID)
	}
	return fmt.Sprintf("unknown background process %q: the known ids are %s", e.ID, strings.Join(e.Live, ", "))
}

// Unwrap returns ErrUnknownProcess.
func (e *UnknownProcessError) Unwrap() error { return ErrUnknownProcess }

// UnknownToolError reports a tool name that Dispatch does not offer. It
// unwraps to ErrUnknownTool.
type UnknownToolError struct {
	Name string
	// Available lists the tools this session offers.
	Available []string
}

func (e *UnknownToolError) Error() string {
	return fmt.Sprintf("unknown tool %q: this workspace offers %s", e.Name, strings.Join(e.Available, ", "))
}

// Unwrap returns ErrUnknownTool.
func (e *UnknownToolError) Unwrap() error { return ErrUnknownTool }

// BackgroundUnsupportedError reports a Spawn on an executor that does not
// implement executor.Starter. It unwraps to errors.ErrUnsupported.
type BackgroundUnsupportedError struct {
	// Executor is the executor's type.
	Executor string
}

func (e *BackgroundUnsupportedError) Error() string {
	return fmt.Sprintf("background processes are not supported: the executor %s does not implement executor.Starter; run the command in the foreground instead", e.Executor)
}

// Unwrap returns errors.ErrUnsupported.
func (e *BackgroundUnsupportedError) Unwrap() error { return errors.ErrUnsupported }
