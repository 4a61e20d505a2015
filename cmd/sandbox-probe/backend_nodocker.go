//go:build nodocker

package main

// dockerBackend is listed but not built in (-tags nodocker).
var dockerBackend = backend{
	name: "docker", sandboxed: true,
	missing: "this sandbox-probe was built without the docker backend (-tags nodocker)",
	rebuild: "build sandbox-probe without -tags nodocker",
}

func dockerUnavailable(err error) string { return "" }
