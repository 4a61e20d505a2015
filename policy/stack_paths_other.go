//go:build !darwin

package policy

// managedPolicyPath is the managed layer's file: ManagedPolicyPath.
func managedPolicyPath() string { return ManagedPolicyPath }
