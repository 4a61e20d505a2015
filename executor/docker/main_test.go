//go:build unix

package docker_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/mount"

	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/docker"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// strayEnv makes the test binary act as a program that dies without
// closing its executor: it runs one command in image mode (the image and
// root in the variable, "IMAGE ROOT"), prints the container's id and
// exits.
const strayEnv = "CORDON_DOCKER_TEST_STRAY"

func TestMain(m *testing.M) {
	probe.MaybeRun()
	if v := os.Getenv(strayEnv); v != "" {
		os.Exit(stray(v))
	}
	os.Exit(m.Run())
}

func stray(v string) int {
	var image, root string
	if _, err := fmt.Sscan(v, &image, &root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	x, err := docker.New(docker.Config{Image: image})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = x.Run(context.Background(), &executor.Request{Command: "true", Dir: root, Root: root, Policy: policy.Coding.Policy(), Timeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(x.ContainerID())
	return 0 // no Close: the container stays behind
}

// strayHelper runs the test binary as a program that leaves a container
// behind, and returns its output (the container's id).
func strayHelper(t *testing.T, image, root string) ([]byte, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), strayEnv+"="+image+" "+root)
	return cmd.Output()
}

// newExecutor returns an executor closed at the end of the test,
// skipping (or failing, when CORDON_REQUIRE names docker) where no
// engine answers or the image is missing.
func newExecutor(t testing.TB, cfg docker.Config) *docker.Executor {
	t.Helper()
	x, err := docker.New(cfg)
	testenv.SkipUnavailable(t, testenv.Docker, err)
	t.Cleanup(func() { x.Close() })
	return x
}

// imageConfig returns a Config in image mode with the test image
// (CORDON_DOCKER_IMAGE, built locally by make docker-up), skipping when
// there is none.
func imageConfig(t testing.TB) docker.Config {
	t.Helper()
	image := testenv.DockerImage()
	testenv.Require(t, testenv.Docker, image != "", "CORDON_DOCKER_IMAGE is not set (make docker-up builds the test image locally; set -a; . build/docker/env; set +a)")
	return docker.Config{Image: image}
}

type mountT = mount.Mount

func owner(fi fs.FileInfo) uint32 { return fi.Sys().(*syscall.Stat_t).Uid }

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
