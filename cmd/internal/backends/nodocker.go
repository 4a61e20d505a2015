//go:build nodocker

package backends

// dockerBackend is listed but not built in (-tags nodocker).
var dockerBackend = Backend{
	Name: "docker", Sandboxed: true,
	Missing: "this program was built without the docker backend (-tags nodocker)",
	Rebuild: "build it without -tags nodocker",
}

// DockerUnavailable summarises why the docker backend cannot run, or "".
func DockerUnavailable(err error) string { return "" }
