//go:build !unix

package policy

import "io/fs"

// linkInfo reports no link information where the platform has none: hard
// links are not searched there.
func linkInfo(fs.FileInfo) (fileKey, uint64, bool) { return fileKey{}, 0, false }
