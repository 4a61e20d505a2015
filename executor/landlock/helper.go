package landlock

import (
	"errors"
	"sync/atomic"
	"syscall"
)

// helperArg0 is the argv[0] under which the executor re-executes the host
// binary (/proc/self/exe) as its sandbox helper. Init recognises it.
const helperArg0 = "cordon-landlock-sandbox"

// helperRulesetFD is the descriptor number under which the helper
// receives the ruleset (the first of procgroup.Spec.ExtraFiles).
const helperRulesetFD = 3

// initCalled records that the host program called Init, so New can refuse
// to run without the entry point the helper needs.
var initCalled atomic.Bool

// ErrNoInit is returned by New when the program never called Init: the
// executor re-executes the program itself as its sandbox helper, and
// without Init that re-execution would run the program's main instead.
var ErrNoInit = errors.New("landlock.Init was not called: call it first thing in main (and in TestMain)")

// Init is the entry point of the sandbox helper. Every program that uses
// this executor must call it first thing in main, before flags are parsed
// or anything else runs — tests call it first thing in TestMain:
//
//	func main() {
//		landlock.Init()
//		...
//	}
//
// In the program itself Init only records that it was called and returns.
// With cgo the executor starts commands without the helper (see the
// package documentation), but New still requires Init, so that a program
// works the same when built without cgo.
// In the helper — the program re-executed by the executor under the name
// "cordon-landlock-sandbox" — it never returns: it drops every
// capability, sets no_new_privs, installs the seccomp filter, enforces the
// Landlock ruleset passed as descriptor 3 and executes the command, or
// exits with status 126 and the reason on standard error.
func Init() {
	initCalled.Store(true)
	helperMain()
}

// HelperError reports that the sandbox helper (the pure-Go path, without
// cgo) could not restrict itself or execute the command: nothing of the
// command ran. It unwraps to the system call's errno when there is one,
// so errors.Is(err, fs.ErrNotExist) holds for a missing program.
type HelperError struct {
	Errno   syscall.Errno
	Message string
}

func (e *HelperError) Error() string { return "landlock sandbox helper: " + e.Message }

// Unwrap returns Errno, or nil when the failure had none.
func (e *HelperError) Unwrap() error {
	if e.Errno == 0 {
		return nil
	}
	return e.Errno
}
