//go:build !unix

package workspace_test

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
