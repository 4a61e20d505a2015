//go:build !linux

package landlock

func helperMain() {}
