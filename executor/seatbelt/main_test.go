//go:build unix

package seatbelt

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cordon-sandbox/cordon/conformance/probe"
)

// The fake sandbox-exec. Tests of the executor's plumbing that must run
// where there is no Seatbelt (Linux) point the executor at a symbolic
// link named sandbox-exec to this test binary. Run as that, it parses
// its command line exactly as sandbox-exec does (-p PROFILE, then -D
// KEY=VALUE pairs, then the command), records what it was given, and
// executes the command without any sandbox. It is an inspectable
// stand-in for the program, not for the sandbox: isolation is only ever
// checked against the real sandbox-exec (seatbelt_darwin_test.go).
//
// Its directory controls it:
//
//	DIR/sandbox-exec   the link to the test binary
//	DIR/mode           "fail-apply": fail every profile as sandbox-exec
//	                   does inside another sandbox; "fail-deny-default":
//	                   fail profiles containing (deny default)
//	DIR/calls/         when it exists, each call writes PID.argv and
//	                   PID.env there (NUL-separated) and PID.dir
//
// and so does the command's environment: fakeFailEnv=1 fails the call
// as a profile sandbox-exec cannot apply.
const (
	fakeName    = "sandbox-exec"
	fakeFailEnv = "CORDON_FAKE_SANDBOX_EXEC_FAIL"
)

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == fakeName {
		os.Exit(fakeMain(os.Args))
	}
	probe.MaybeRun()
	os.Exit(m.Run())
}

func fakeMain(args []string) int {
	dir := filepath.Dir(args[0])
	mode, _ := os.ReadFile(filepath.Join(dir, "mode"))
	usage := func() int {
		fmt.Fprintln(os.Stderr, "sandbox-exec: usage: sandbox-exec [-f profile-file] [-n profile-name] [-p profile-string] [-D key=value ...] command [arguments ...]")
		return 64
	}
	rest := args[1:]
	if len(rest) < 2 || rest[0] != "-p" {
		return usage()
	}
	profile := rest[1]
	rest = rest[2:]
	for len(rest) >= 2 && rest[0] == "-D" {
		if !strings.Contains(rest[1], "=") {
			return usage()
		}
		rest = rest[2:]
	}
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return usage()
	}
	if calls := filepath.Join(dir, "calls"); isDir(calls) {
		pid := strconv.Itoa(os.Getpid())
		cwd, _ := os.Getwd()
		_ = os.WriteFile(filepath.Join(calls, pid+".argv"), []byte(strings.Join(args, "\x00")), 0o644)
		_ = os.WriteFile(filepath.Join(calls, pid+".env"), []byte(strings.Join(os.Environ(), "\x00")), 0o644)
		_ = os.WriteFile(filepath.Join(calls, pid+".dir"), []byte(cwd), 0o644)
	}
	switch {
	case string(mode) == "fail-apply" || os.Getenv(fakeFailEnv) == "1":
		fmt.Fprintln(os.Stderr, "sandbox-exec: sandbox_apply: Operation not permitted")
		return 71
	case string(mode) == "fail-deny-default" && strings.Contains(profile, "(deny default)"):
		fmt.Fprintln(os.Stderr, "sandbox-exec: execvp() of '/bin/sh' failed: Operation not permitted")
		return 71
	}
	err := syscall.Exec(rest[0], rest, os.Environ())
	fmt.Fprintf(os.Stderr, "sandbox-exec: execvp() of '%s' failed: %v\n", rest[0], err)
	return 71
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
