package main

import (
	"github.com/spf13/cobra"

	"github.com/cordon-sandbox/cordon/internal/buildinfo"
)

// versionInfo is `sandbox-probe version`'s report.
type versionInfo = buildinfo.Info

func buildVersion() versionInfo { return buildinfo.Read() }

func (a *app) versionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print the module version, commit, Go version and the backends built in",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := buildVersion()
			if asJSON {
				return writeJSON(a.stdout, v)
			}
			v.Print(a.stdout, "sandbox-probe")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
