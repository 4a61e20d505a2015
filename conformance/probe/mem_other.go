//go:build unix && !linux

package probe

import "errors"

var errNoMem = errors.New("mem-target and mem-write are Linux only")

func actMemTarget(*prober, []string) error { return errNoMem }

func actMemWrite(*prober, []string) error { return errNoMem }
