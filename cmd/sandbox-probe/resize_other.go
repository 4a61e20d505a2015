//go:build !unix

package main

import "os"

// resizeSignals: none without Unix terminals.
var resizeSignals []os.Signal
