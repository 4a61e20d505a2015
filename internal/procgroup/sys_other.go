//go:build !unix

package procgroup

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

func sysProcAttr() (*syscall.SysProcAttr, error) {
	return nil, fmt.Errorf("process groups on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errUnsupported)
}

func killGroup(int) {}

func signalGroup(int, syscall.Signal) {}

func setCtty(*syscall.SysProcAttr) {}

func killTree(int) {}

func waitExited(p *os.Process) (*os.ProcessState, error) { return p.Wait() }
