//go:build !linux || !cgo

package landlock

import "os"

// canSpawn is false without cgo: commands start through the sandbox
// helper (Init).
const canSpawn = false

func spawner(*ruleset, string, *netHandoff, *keptNS) func(string, []string, *os.ProcAttr) (*os.Process, error) {
	return nil
}
