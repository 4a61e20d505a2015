// Package testenv tells cordon's tests what the test machine provides, and
// turns "skip: facility missing" into a failure where CI demands it.
//
// It plays the role of the standard library's internal/testenv: kernel- and
// engine-facing tests ask it before they run, skip with a stated reason when
// the backend is missing, and fail instead when the CORDON_REQUIRE
// environment variable names the backend. CI sets
// CORDON_REQUIRE=landlock,bwrap,docker so that a host which silently lost a
// backend cannot pass by skipping everything.
//
// # Environment
//
// `make test` (scripts/with-env.sh) provisions the machine and sets:
//
//	CORDON_REQUIRE       backends whose absence fails the tests: a comma- or
//	                     space-separated list of landlock, bwrap, docker,
//	                     seatbelt, kubernetes (case-insensitive); empty:
//	                     nothing required
//	DOCKER_HOST          the private dockerd's socket (unix:///…/build/docker/docker.sock);
//	                     unset: the Docker client's default
//	CORDON_DOCKER_IMAGE  a local busybox image imported without any registry
//	                     (cordon-test/busybox:<digest>); unset: none was built
//	KUBECONFIG           the private single-node cluster's admin kubeconfig
//	                     (scripts/kube.sh); unset: no cluster
//	CORDON_KUBE_IMAGE    the cluster's local test image (busybox and
//	                     cordon-pod), imported without any registry
//	CORDON_KUBE_NAMESPACE the namespace the tests use
//	CORDON_UNPRIVILEGED  "1" in the second run of the kernel-facing packages
//	                     as uid 65534 (scripts/unpriv.sh); that run passes
//	                     CORDON_REQUIRE without docker
//
// # Usage
//
//	func TestRun(t *testing.T) {
//		e, err := bwrap.New(bwrap.Config{})
//		testenv.SkipUnavailable(t, testenv.Bwrap, err) // skip, or fail if required
//		...
//	}
//
//	func TestDocker(t *testing.T) {
//		image := testenv.DockerImage()
//		testenv.Require(t, testenv.Docker, image != "", "CORDON_DOCKER_IMAGE is not set (run make test)")
//		...
//	}
//
// A name in CORDON_REQUIRE that is not a known backend is a failure of every
// test that consults it (a typo must not quietly require nothing). To add a
// backend, add its name to [Backends].
package testenv

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// Environment variables read by this package.
const (
	EnvRequire      = "CORDON_REQUIRE"
	EnvDockerHost   = "DOCKER_HOST"
	EnvDockerImage  = "CORDON_DOCKER_IMAGE"
	EnvUnprivileged = "CORDON_UNPRIVILEGED"
	EnvKubeconfig   = "KUBECONFIG"
	EnvKubeImage    = "CORDON_KUBE_IMAGE"
	EnvKubeNS       = "CORDON_KUBE_NAMESPACE"
)

// Backend names as CORDON_REQUIRE spells them.
const (
	Landlock   = "landlock"
	Bwrap      = "bwrap"
	Docker     = "docker"
	Seatbelt   = "seatbelt"
	Kubernetes = "kubernetes"
)

// Backends returns the backend names CORDON_REQUIRE may contain.
func Backends() []string { return []string{Landlock, Bwrap, Docker, Seatbelt, Kubernetes} }

// ErrUnknownBackend is wrapped by [*UnknownBackendError].
var ErrUnknownBackend = errors.New("unknown backend")

// UnknownBackendError reports a name that is not one of [Backends], in
// CORDON_REQUIRE or passed to this package by a test.
type UnknownBackendError struct {
	Name string
}

func (e *UnknownBackendError) Error() string {
	return fmt.Sprintf("%s %q (known: %s)", ErrUnknownBackend, e.Name, strings.Join(Backends(), ", "))
}

// Unwrap returns [ErrUnknownBackend].
func (e *UnknownBackendError) Unwrap() error { return ErrUnknownBackend }

// ParseRequire parses a CORDON_REQUIRE value: backend names separated by
// commas and/or white space, case-insensitive, empty entries ignored. It
// returns the names in order without duplicates, lower-cased, or an
// [*UnknownBackendError] for the first name that is not a backend.
func ParseRequire(s string) ([]string, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	var names []string
	for _, f := range fields {
		name := strings.ToLower(f)
		if !slices.Contains(Backends(), name) {
			return nil, &UnknownBackendError{Name: f}
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// Required reports whether CORDON_REQUIRE names the backend. An unparsable
// CORDON_REQUIRE requires everything, so that [Skip] reports it rather than
// skipping.
func Required(backend string) bool {
	names, err := ParseRequire(os.Getenv(EnvRequire))
	if err != nil {
		return true
	}
	return slices.Contains(names, strings.ToLower(backend))
}

// Skip skips the test with the formatted reason, naming the backend — or
// fails it with the same message when CORDON_REQUIRE names the backend. It
// also fails the test when CORDON_REQUIRE or backend is not a known backend.
func Skip(t testing.TB, backend, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if !slices.Contains(Backends(), backend) {
		t.Fatalf("testenv: %v", &UnknownBackendError{Name: backend})
	}
	if _, err := ParseRequire(os.Getenv(EnvRequire)); err != nil {
		t.Fatalf("testenv: %s=%q: %v; skip reason for %s was: %s", EnvRequire, os.Getenv(EnvRequire), err, backend, reason)
	}
	if Required(backend) {
		t.Fatalf("%s unavailable: %s (required: %s=%s)", backend, reason, EnvRequire, os.Getenv(EnvRequire))
	}
	t.Skipf("%s unavailable: %s (set %s=%s to make this a failure)", backend, reason, EnvRequire, backend)
}

// Require does nothing when available is true; otherwise it calls [Skip]
// with reason.
func Require(t testing.TB, backend string, available bool, reason string) {
	t.Helper()
	if !available {
		Skip(t, backend, "%s", reason)
	}
}

// SkipUnavailable handles the error of a backend's constructor or detection:
// nil does nothing; an error that wraps errors.ErrUnsupported (as
// executor.UnavailableError does) skips via [Skip], giving the error as the
// reason; any other error fails the test.
func SkipUnavailable(t testing.TB, backend string, err error) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, errors.ErrUnsupported):
		Skip(t, backend, "%v", err)
	default:
		t.Fatalf("%s: %v", backend, err)
	}
}

// DockerHost returns DOCKER_HOST, the Docker Engine the tests should use
// (make test points it at the private dockerd); "" means the Docker
// client's default.
func DockerHost() string { return os.Getenv(EnvDockerHost) }

// DockerImage returns CORDON_DOCKER_IMAGE, a local test image (busybox with
// /bin/sh, /etc/passwd with root and nobody, /tmp) that make test imports
// without any registry; "" when none was built. Never pull it.
func DockerImage() string { return os.Getenv(EnvDockerImage) }

// Kube returns the private cluster's kubeconfig, test image and
// namespace (KUBECONFIG, CORDON_KUBE_IMAGE, CORDON_KUBE_NAMESPACE); the
// kubeconfig and image are "" when make test brought up no cluster.
func Kube() (kubeconfig, image, namespace string) {
	return os.Getenv(EnvKubeconfig), os.Getenv(EnvKubeImage), os.Getenv(EnvKubeNS)
}

// Root reports whether the test runs with effective uid 0.
func Root() bool { return os.Geteuid() == 0 }

// Unprivileged reports whether this is the second, unprivileged run of the
// kernel-facing packages (CORDON_UNPRIVILEGED=1 and not uid 0).
func Unprivileged() bool {
	return os.Getenv(EnvUnprivileged) == "1" && !Root()
}
