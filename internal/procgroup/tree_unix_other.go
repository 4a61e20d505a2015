//go:build unix && !linux && !darwin

package procgroup

import "os"

func waitExited(p *os.Process) (*os.ProcessState, error) { return p.Wait() }

// killTree kills the process group only: no process table walk here.
func killTree(leader int) { killGroup(leader) }
