package executor

import "strings"

// ShellQuote returns s as one word for /bin/sh -c (any POSIX shell, and
// bash), in any position: s itself when it holds only characters no
// shell treats specially anywhere (not "=", which makes a first word an
// assignment, nor "%", which makes it a job in bash), else s in single
// quotes, each single quote inside closing
// the quotes, adding an escaped quote and reopening them. Single quotes
// take every byte literally — newlines, control characters, bytes that
// are not UTF-8 — so the word is exact for every s but one holding a NUL
// byte, which no argument or shell word can carry: ok is false then.
// It is cordon's one shell quoter (the docker runner's scripts, the
// command lines sandbox-probe prints, the conformance suite's commands).
func ShellQuote(s string) (q string, ok bool) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", false
	}
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@+,") == "" {
		return s, true
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", true
}
