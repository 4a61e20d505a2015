//go:build linux && !amd64

package landlock_test

// canChain reports that chain is the real attacker here: it is not
// (arm64 has neither fork nor time system calls).
const canChain = false

func chain(*byte, []byte, uintptr) {}
