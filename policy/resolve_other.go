//go:build !linux

package policy

func fastRealpath(string) (string, bool) { return "", false }
