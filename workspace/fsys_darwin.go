package workspace

import "golang.org/x/sys/unix"

// walkDirFlags opens intermediate directories of a walk.
const walkDirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC

// openResolved opens abs component by component with O_NOFOLLOW.
func openResolved(abs string, flags int) (int, error) { return walkOpen(abs, flags) }

// verifyFD is a no-op on darwin: the component walk with O_NOFOLLOW is the
// guarantee (F_GETPATH would return a cached name, which proves nothing).
func verifyFD(int, string) error { return nil }

// renameNoReplace links then unlinks.
func renameNoReplace(dirfd int, old, new string) error { return linkRename(dirfd, old, new) }
