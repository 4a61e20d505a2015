//go:build !unix

package workspace

// openNonblock: no FIFOs to block on here.
const openNonblock = 0
