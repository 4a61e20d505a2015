// Package outbuf holds the bounded output buffers cordon captures command
// output into, so memory stays bounded whatever a command prints.
//
// # HeadTail
//
// HeadTail is the per-stream buffer of a foreground command: it keeps the
// first half and the last half of its limit, counts what fell in between,
// and renders the omission as a marker line:
//
//	<head>
//	[... 123456 bytes omitted ...]
//	<tail>
//
// Output that fits within the limit is kept byte-exact (binary included) and
// gets no marker. The marker is the only text HeadTail ever adds, so the
// result can exceed the limit by the marker's length.
//
// # Ring
//
// Ring is the buffer of a background process: it keeps the newest Size
// bytes, and ReadNew returns what arrived since the previous read together
// with a flag saying whether older unread output was overwritten.
//
// Both types allocate their storage once (lazily, at most the limit) and
// copy each write into it: a command printing a gigabyte costs a gigabyte of
// copying, never a gigabyte of memory. Both are safe for concurrent use.
package outbuf
