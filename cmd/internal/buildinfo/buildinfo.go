// Package buildinfo reports what a cordon program was built from and with:
// the module version and commit, the Go toolchain, cgo, and the backends
// built in. sandbox-probe version and cordon version print it.
package buildinfo

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/cordon-sandbox/cordon/cmd/internal/backends"
)

// Info is a program's build report.
type Info struct {
	// Module is the main module's path and Version its version
	// ("(devel)" for a build from a checkout).
	Module  string `json:"module"`
	Version string `json:"version"`
	// Commit and Modified come from the build's VCS stamp, when it has one.
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Go is the toolchain that built the program; Platform its GOOS/GOARCH.
	Go       string `json:"go"`
	Platform string `json:"platform"`
	// CGO says whether cgo was on (the landlock backend's fast start).
	CGO bool `json:"cgo"`
	// Backends lists the backends built into this program for this
	// platform; NotBuilt those built in for other platforms only, or
	// left out by build tags.
	Backends []string `json:"backends"`
	NotBuilt []string `json:"not_built,omitempty"`
}

// Read returns the running program's build report.
func Read() Info {
	v := Info{Module: "github.com/cordon-sandbox/cordon", Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Backends: []string{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Module, v.Version, v.Go = bi.Main.Path, bi.Main.Version, bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			case "CGO_ENABLED":
				v.CGO = s.Value == "1"
			}
		}
		if v.Module == "" {
			v.Module = "github.com/cordon-sandbox/cordon"
		}
	}
	for _, b := range backends.All {
		if b.Built() {
			v.Backends = append(v.Backends, b.Name)
		} else {
			v.NotBuilt = append(v.NotBuilt, b.Name)
		}
	}
	return v
}

// Print writes the report for a person, program's name first.
func (v Info) Print(w io.Writer, program string) {
	fmt.Fprintf(w, "%s %s (%s)\n", program, v.Version, v.Module)
	if v.Commit != "" {
		mod := ""
		if v.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(w, "commit:    %s%s\n", v.Commit, mod)
	}
	fmt.Fprintf(w, "go:        %s %s, cgo %v\n", v.Go, v.Platform, v.CGO)
	fmt.Fprintf(w, "backends:  %v\n", v.Backends)
	if len(v.NotBuilt) > 0 {
		fmt.Fprintf(w, "not built: %v (other platforms or build tags)\n", v.NotBuilt)
	}
}

// Command is the `version [--json]` subcommand of program, writing to
// stdout.
func Command(program string, stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print the module version, commit, Go version and the backends built in",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := Read()
			if !asJSON {
				v.Print(stdout, program)
				return nil
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(v)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
