package main

import (
	"github.com/spf13/cobra"

	"github.com/cordon-sandbox/cordon/cmd/internal/buildinfo"
)

// versionCommand is `sandbox-probe version [--json]` (cmd/internal/buildinfo).
func (a *app) versionCommand() *cobra.Command { return buildinfo.Command("sandbox-probe", a.stdout) }
