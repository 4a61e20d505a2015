//go:build !unix

package launcher

// markCloexec does nothing where descriptors are not inherited by default.
func markCloexec() error { return nil }
