package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

var update = flag.Bool("update", false, "update the testscript files' expected output (cmp) and the golden files")

func TestMain(m *testing.M) {
	// The suite may copy this test binary as its probe (cordon-probe):
	// register it first, as sandbox-probe's main does.
	landlock.Init()
	probe.MaybeRun()
	testscript.Main(m, map[string]func(){
		"sandbox-probe": func() { os.Exit(main1()) },
	})
}

// TestScripts runs the CLI tests in testdata/script: every subcommand, its
// exit status and its errors, through the real binary (this test binary,
// registered as sandbox-probe). Scripts that need a backend skip with
// [!bwrap] skip and the like; CORDON_REQUIRE=landlock,bwrap turns an
// unavailable required backend into a failure.
func TestScripts(t *testing.T) {
	// In Docker image mode the probe runs inside a busybox image, so it
	// must be static: this test binary (which the suite would copy) is not
	// necessarily, and outside this module go build cannot build it.
	staticProbe := ""
	if testenv.DockerImage() != "" && os.Getenv(conformance.ProbeEnv) == "" {
		staticProbe = filepath.Join(t.TempDir(), "cordon-probe")
		cmd := exec.Command("go", "build", "-o", staticProbe, "github.com/cordon-sandbox/cordon/conformance/probe/cmd/cordon-probe")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building a static probe for Docker image mode: %v: %s", err, out)
		}
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Condition:           scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
			"lines":    cmdLines,
		},
		Setup: func(env *testscript.Env) error {
			// Conformance fixtures under /tmp would be hidden by the
			// sandboxes' private /tmp; keep them where a workspace lives.
			if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
				env.Setenv("CONFORMANCE_TMP", "/var/tmp")
			} else {
				env.Setenv("CONFORMANCE_TMP", os.TempDir())
			}
			// The Docker Engine the tests use (make test's private
			// dockerd), and the image it built.
			for _, k := range []string{"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY",
				"DOCKER_API_VERSION", testenv.EnvDockerImage, testenv.EnvRequire} {
				if v, ok := os.LookupEnv(k); ok {
					env.Setenv(k, v)
				}
			}
			if staticProbe != "" {
				env.Setenv(conformance.ProbeEnv, staticProbe)
			}
			if _, ok := os.LookupEnv("DOCKER_CONFIG"); !ok {
				if home, err := os.UserHomeDir(); err == nil {
					env.Setenv("DOCKER_CONFIG", filepath.Join(home, ".docker"))
				}
			}
			return nil
		},
	})
}

// cmdExitcode runs a program and checks its exit status:
//
//	exitcode N prog [args...]
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// cmdLines checks the number of lines of the last stdout or stderr:
//
//	lines stdout|stderr N
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || (args[0] != "stdout" && args[0] != "stderr") {
		ts.Fatalf("usage: lines stdout|stderr N")
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("lines: bad count %q", args[1])
	}
	text := ts.ReadFile(args[0])
	got := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		got++
	}
	if (got == want) == neg {
		ts.Fatalf("%s has %d line(s), want %s%d", args[0], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

var (
	availOnce sync.Once
	avail     map[string]*availability
)

// scriptCondition answers [landlock], [bwrap], [docker], [seatbelt] (the
// backend can run here), [sandbox] (some OS sandbox backend can) and
// [root] and [dockerimage] (make test built a local Docker image). A backend CORDON_REQUIRE names that is unavailable is an error.
func scriptCondition(cond string) (bool, error) {
	availOnce.Do(func() {
		avail = map[string]*availability{}
		for _, av := range checkBackends(context.Background(), nil, backendOptions{}) {
			avail[av.Name] = av
		}
	})
	switch cond {
	case "root":
		return os.Geteuid() == 0, nil
	case "dockerimage":
		return testenv.DockerImage() != "", nil
	case "sandbox":
		for _, av := range avail {
			if av.Available && av.Sandboxed {
				return true, nil
			}
		}
		return false, nil
	}
	av, ok := avail[cond]
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	if !av.Available && testenv.Required(cond) {
		return false, fmt.Errorf("CORDON_REQUIRE names %s, but it is unavailable: %s", cond, av.Reason)
	}
	return av.Available, nil
}
