package cli

import "github.com/spf13/cobra"

// addSandboxFlag adds --sandbox to a command that runs a model's code.
func addSandboxFlag(cmd *cobra.Command, mode *string) {
	cmd.Flags().StringVar(mode, "sandbox", "", "how the model's code (its tests, its code, the project's scripts) is confined: "+
		"auto (bubblewrap and Landlock, the default), landlock (without bubblewrap) or off (UNCONFINED, with your full powers: only when you mean it); default: [sandbox] mode in your config")
}
