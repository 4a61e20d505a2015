//go:build !linux

package docker

// seccompProfile returns "" on clients other than Linux: the
// containers/common default profile is only built there. The engine then
// applies its own default profile (moby's, from which containers/common's
// descends), which Describe reports.
func seccompProfile(nestedUserns, noUnix bool) (string, string, error) {
	return "", "the engine's built-in default profile (the containers/common profile is only built into Linux clients); nested user namespaces follow the engine's default", nil
}
