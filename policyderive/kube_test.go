package policyderive

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cordon-sandbox/cordon/policy"
)

// TestPodSpecOptions: every option of PodOptions lands in the pod spec,
// and the hardening holds whatever the options.
func TestPodSpecOptions(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	pr, err := Derive(policy.Coding.Policy(), root, "", root, nil)
	require.NoError(t, err)
	res := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	r, f := PodSpec(pr, PodOptions{Image: "img", Helper: "/h", UID: 1000, GID: 1001, RuntimeClassName: "gvisor",
		SeccompLocalhost: "profiles/cordon.json", Resources: res, AttachTimeout: "1m0s", Labels: map[string]string{"s": "x"}})
	spec := r.Pod
	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	assert.Equal(t, []string{"/h", "init", "-attach-timeout", "1m0s"}, c.Command)
	assert.Equal(t, res, c.Resources)
	assert.Equal(t, "gvisor", *spec.RuntimeClassName)
	assert.Equal(t, corev1.SeccompProfileTypeLocalhost, spec.SecurityContext.SeccompProfile.Type)
	assert.Equal(t, "profiles/cordon.json", *spec.SecurityContext.SeccompProfile.LocalhostProfile)
	assert.Equal(t, int64(1000), *spec.SecurityContext.RunAsUser)
	assert.Equal(t, int64(1001), *spec.SecurityContext.RunAsGroup)
	assert.True(t, *spec.SecurityContext.RunAsNonRoot)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	assert.False(t, *c.SecurityContext.Privileged)
	assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop)
	assert.Empty(t, c.SecurityContext.Capabilities.Add)
	assert.False(t, *spec.AutomountServiceAccountToken)
	assert.False(t, spec.HostNetwork || spec.HostPID || spec.HostIPC)
	assert.Equal(t, int64(0), *spec.TerminationGracePeriodSeconds)
	assert.Equal(t, corev1.RestartPolicyNever, spec.RestartPolicy)
	require.NotNil(t, r.NetworkPolicy, "network none: a default-deny NetworkPolicy")
	assert.Equal(t, map[string]string{"s": "x"}, r.NetworkPolicy.PodSelector.MatchLabels)
	assert.Empty(t, f.Blocking(), "%s", f)

	// Root: no runAsNonRoot; network full: no NetworkPolicy, the pod
	// network unless HostNetworkWhenFull.
	full := policy.Trusted.Policy()
	pr, err = Derive(full, root, "", root, nil)
	require.NoError(t, err)
	r, _ = PodSpec(pr, PodOptions{Image: "img", Helper: "/h", UID: 0, GID: 0})
	assert.False(t, *r.Pod.SecurityContext.RunAsNonRoot)
	assert.Nil(t, r.NetworkPolicy)
	assert.False(t, r.Pod.HostNetwork)
	r, _ = PodSpec(pr, PodOptions{Image: "img", Helper: "/h", UID: -1, GID: -1, HostNetworkWhenFull: true})
	assert.True(t, r.Pod.HostNetwork)
	assert.Nil(t, r.Pod.SecurityContext.RunAsUser, "-1: the image's user")
}
