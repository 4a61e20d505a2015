//go:build !unix

package mcpserver

// openNonblock: no FIFOs to block on here.
const openNonblock = 0
