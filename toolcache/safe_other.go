//go:build !unix

package toolcache

import (
	"io/fs"
	"os/exec"
)

func setGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}

// ownedSafe: ownership is not checked here.
func ownedSafe(fs.FileInfo) bool { return true }

func rootID(root string) (string, error) { return root, nil }
