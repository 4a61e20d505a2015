package policy

// managedPolicyPath is the managed layer's file on macOS.
func managedPolicyPath() string { return "/Library/Application Support/cordon/policy.yaml" }
