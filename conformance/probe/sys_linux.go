package probe

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

const getTermios = unix.TCGETS

// ttyNr returns field 7 of /proc/self/stat: the controlling terminal's
// device number, "0" when there is none.
func ttyNr() string {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return "unknown (" + errnoName(err) + ")"
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s) // state ppid pgrp session tty_nr ...
	if len(f) < 5 {
		return "unknown"
	}
	return f[4]
}
