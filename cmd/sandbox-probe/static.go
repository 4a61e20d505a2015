package main

import (
	"debug/elf"
	"os"
	"runtime"
)

// selfStaticLinux reports whether the running program is a static Linux
// executable (no ELF interpreter), which is what a minimal container image
// can run, and if not, why.
func selfStaticLinux() (bool, string) {
	if runtime.GOOS != "linux" {
		return false, "is a " + runtime.GOOS + " executable, not a Linux one"
	}
	self, err := os.Executable()
	if err != nil {
		return false, "cannot be located: " + err.Error()
	}
	f, err := elf.Open(self)
	if err != nil {
		return false, "cannot be read as ELF: " + err.Error()
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, "is dynamically linked (built with cgo)"
		}
	}
	return true, ""
}
