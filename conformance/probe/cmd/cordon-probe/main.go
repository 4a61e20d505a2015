// Command cordon-probe is the conformance suite's probe program: see
// package github.com/cordon-sandbox/cordon/conformance/probe for its actions
// and output. The suite builds it with CGO_ENABLED=0 so it is static.
package main

import (
	"os"

	"github.com/cordon-sandbox/cordon/conformance/probe"
)

func main() { os.Exit(probe.Main(os.Args[1:])) }
