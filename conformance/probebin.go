//go:build unix

package conformance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"

	"github.com/cordon-sandbox/cordon/conformance/probe"
)

// probeBin is the probe program the cases run: always dir/cordon-probe,
// in a directory of its own that every case adds to Policy.System.
type probeBin struct {
	dir, path string
	how       string // how it was obtained, for the report
	err       error  // why there is none
}

// obtainProbe provides the probe, in the order documented on WithProbe.
func obtainProbe(ctx context.Context, o *options) *probeBin {
	dir, err := os.MkdirTemp(o.tempDir, "cordon-probe-")
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		return &probeBin{err: fmt.Errorf("probe directory: %w", err)}
	}
	pb := &probeBin{dir: dir, path: filepath.Join(dir, probe.Name)}
	src := o.probe
	if src == "" {
		src = os.Getenv(ProbeEnv)
	}
	if src != "" {
		if err := copyExecutable(src, pb.path); err != nil {
			pb.err = fmt.Errorf("probe %q: %w", src, err)
			return pb
		}
		pb.how = "copied from " + src
		return pb
	}
	buildErr := buildProbe(ctx, pb.path)
	if buildErr == nil {
		pb.how = "built with CGO_ENABLED=0 go build (static)"
		return pb
	}
	if probe.Registered() {
		self, err := os.Executable()
		if err == nil {
			err = copyExecutable(self, pb.path)
		}
		if err == nil {
			pb.how = "copy of the running program (registered with probe.MaybeRun)"
			return pb
		}
		pb.err = fmt.Errorf("copying the running program as the probe: %w (and building it failed: %v)", err, buildErr)
		return pb
	}
	pb.err = fmt.Errorf("no probe: pass conformance.WithProbe, set %s, run where the Go toolchain and this module are available, or call probe.MaybeRun in main (build: %w)", ProbeEnv, buildErr)
	return pb
}

// buildProbe builds ./probe/cmd/cordon-probe statically into out.
func buildProbe(ctx context.Context, out string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	pkg := reflect.TypeFor[probe.Record]().PkgPath() + "/cmd/cordon-probe"
	cmd := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w: %s", pkg, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func (pb *probeBin) remove() {
	if pb.dir != "" {
		_ = os.RemoveAll(pb.dir)
	}
}

func (pb *probeBin) describe() string {
	if pb.err != nil {
		return "unavailable: " + pb.err.Error()
	}
	return pb.path + " (" + pb.how + ")"
}
