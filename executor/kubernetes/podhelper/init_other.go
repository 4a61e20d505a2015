//go:build !linux

package podhelper

import (
	"errors"
	"time"
)

var errLinuxOnly = errors.New("cordon-pod runs only in a Linux pod")

func initMain(time.Duration) error { return errLinuxOnly }

func attach() error { return errLinuxOnly }

func detach() {}
