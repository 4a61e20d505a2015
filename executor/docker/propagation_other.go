//go:build !linux

package docker

// hostPropagates is true here: the engine runs elsewhere (a VM), and a
// bind it cannot make rslave fails at container start with the engine's
// message.
func hostPropagates(string) bool { return true }
