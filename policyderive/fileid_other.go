//go:build !linux

package policyderive

import "io/fs"

// inodesListed is false: the mask search's listings carry no inode
// numbers here, so hard links are not searched for (seatbelt, the
// backend of this platform, judges every name by its path rules).
const inodesListed = false

func fileID(fs.FileInfo) (FileID, uint64, bool) { return FileID{}, 0, false }
