package testenv_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

func TestParseRequire(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		unknown string
	}{
		{in: "", want: nil},
		{in: " , ,", want: nil},
		{in: "landlock", want: []string{"landlock"}},
		{in: "landlock,bwrap,docker", want: []string{"landlock", "bwrap", "docker"}},
		{in: "Landlock, BWRAP\tdocker\nseatbelt", want: []string{"landlock", "bwrap", "docker", "seatbelt"}},
		{in: "bwrap,bwrap,,bwrap", want: []string{"bwrap"}},
		{in: "bwarp", unknown: "bwarp"},
		{in: "landlock,all", unknown: "all"},
		{in: "landlock;bwrap", unknown: "landlock;bwrap"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := testenv.ParseRequire(tt.in)
			if tt.unknown != "" {
				var ue *testenv.UnknownBackendError
				require.ErrorAs(t, err, &ue)
				assert.Equal(t, tt.unknown, ue.Name)
				assert.ErrorIs(t, err, testenv.ErrUnknownBackend)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRequired(t *testing.T) {
	tests := []struct {
		env     string
		backend string
		want    bool
	}{
		{"", testenv.Bwrap, false},
		{"landlock,bwrap,docker", testenv.Bwrap, true},
		{"landlock,bwrap,docker", testenv.Seatbelt, false},
		{"DOCKER", testenv.Docker, true},
		{"landlock", "LANDLOCK", true},
		// An unparsable value requires everything, so Skip reports it.
		{"bwarp", testenv.Seatbelt, true},
	}
	for _, tt := range tests {
		t.Run(tt.env+"/"+tt.backend, func(t *testing.T) {
			t.Setenv(testenv.EnvRequire, tt.env)
			assert.Equal(t, tt.want, testenv.Required(tt.backend))
		})
	}
}

func TestEnvAccessors(t *testing.T) {
	t.Setenv(testenv.EnvDockerHost, "unix:///tmp/x/docker.sock")
	t.Setenv(testenv.EnvDockerImage, "cordon-test/busybox:0123456789ab")
	assert.Equal(t, "unix:///tmp/x/docker.sock", testenv.DockerHost())
	assert.Equal(t, "cordon-test/busybox:0123456789ab", testenv.DockerImage())

	t.Setenv(testenv.EnvUnprivileged, "")
	assert.False(t, testenv.Unprivileged())
	assert.Equal(t, os.Geteuid() == 0, testenv.Root())
}

// helperEnv selects what TestHelperProcess does in a child process:
// "skip BACKEND", "require BACKEND true|false", "unavailable BACKEND
// unsupported|other".
const helperEnv = "CORDON_TESTENV_HELPER"

// TestHelperProcess is not a real test: TestSkipOutcome runs the test binary
// again with only this test selected and helperEnv set.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for TestSkipOutcome")
	}
	f := strings.Fields(mode)
	switch f[0] {
	case "skip":
		testenv.Skip(t, f[1], "facility %s missing", "X")
	case "require":
		testenv.Require(t, f[1], f[2] == "true", "facility missing")
	case "unavailable":
		err := fmt.Errorf("bwrap not found: %w", errors.ErrUnsupported)
		if f[2] == "other" {
			err = errors.New("bwrap crashed")
		}
		testenv.SkipUnavailable(t, f[1], err)
	}
}

// TestSkipOutcome checks, in a child test process, that a missing backend
// skips unless CORDON_REQUIRE names it, and then fails.
func TestSkipOutcome(t *testing.T) {
	tests := []struct {
		helper  string
		require string
		want    string // SKIP, FAIL or PASS
	}{
		{"skip bwrap", "", "SKIP"},
		{"skip bwrap", "landlock,docker", "SKIP"},
		{"skip bwrap", "landlock,bwrap,docker", "FAIL"},
		{"skip bwrap", "BWRAP", "FAIL"},
		{"skip bwrap", "bwarp", "FAIL"}, // typo in CORDON_REQUIRE
		{"skip nosuch", "", "FAIL"},     // typo in the test
		{"require docker true", "docker", "PASS"},
		{"require docker false", "", "SKIP"},
		{"require docker false", "docker", "FAIL"},
		{"unavailable bwrap unsupported", "", "SKIP"},
		{"unavailable bwrap unsupported", "bwrap", "FAIL"},
		{"unavailable bwrap other", "", "FAIL"},
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.helper+"/"+tt.require, func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^TestHelperProcess$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), helperEnv+"="+tt.helper, testenv.EnvRequire+"="+tt.require)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if tt.want == "FAIL" {
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, "output:\n%s", out.String())
				assert.Equal(t, 1, ee.ExitCode())
			} else {
				require.NoError(t, err, "output:\n%s", out.String())
			}
			assert.Contains(t, out.String(), "--- "+tt.want+": TestHelperProcess", "output:\n%s", out.String())
		})
	}
}

// TestUnprivilegedRun checks the environment of the second run as uid 65534
// (scripts/unpriv.sh): not root, no capabilities, a usable HOME and TMPDIR.
func TestUnprivilegedRun(t *testing.T) {
	if !testenv.Unprivileged() {
		t.Skip("not the unprivileged run (CORDON_UNPRIVILEGED=1 as a non-root user)")
	}
	assert.NotEqual(t, 0, os.Geteuid())
	assert.NotContains(t, strings.Split(os.Getenv(testenv.EnvRequire), ","), testenv.Docker)
	for _, dir := range []string{os.Getenv("HOME"), os.TempDir()} {
		require.NotEmpty(t, dir)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "probe"), []byte("x"), 0o600), dir)
	}
	if runtime.GOOS == "linux" {
		status, err := os.ReadFile("/proc/self/status")
		require.NoError(t, err)
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "CapEff:") || strings.HasPrefix(line, "CapPrm:") {
				assert.Equal(t, "0000000000000000", strings.TrimSpace(line[7:]), line)
			}
		}
	}
}
