//go:build linux

package bwrap

// SetArgsInline puts every option on bwrap's command line instead of
// behind --args (the benchmark compares the two).
func (x *Executor) SetArgsInline(on bool) { x.argsInline = on }
