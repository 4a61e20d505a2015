//go:build !linux

package podhelper

import (
	"errors"
	"io"
	"time"
)

var errLinuxOnly = errors.New("cordon-pod runs only in a Linux pod")

func initMain(time.Duration) error { return errLinuxOnly }

func leaseMain(io.Reader) error { return errLinuxOnly }
