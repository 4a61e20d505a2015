package policyderive

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Layers of a Kubernetes rendering, named by Element.Layer: which
// mechanism enforces an element, and whether it needs the cluster's
// cooperation.
const (
	// LayerPod is the pod spec as the kubelet and the container runtime
	// apply it on the node: volumes, the read-only root, the security
	// context. Every conformant node enforces it.
	LayerPod = "pod"
	// LayerSandbox is cordon's own Landlock and seccomp sandbox inside
	// the container (cordon-pod run): it holds whatever the cluster
	// enforces, as long as the node's kernel has Landlock.
	LayerSandbox = "sandbox"
	// LayerCluster is enforced only by a cluster that cooperates: a
	// NetworkPolicy needs a CNI plugin that enforces it.
	LayerCluster = "cluster"
)

// PodOptions configure PodSpec.
type PodOptions struct {
	// Image is the container image; it must hold Helper and a shell.
	Image string
	// PullPolicy is the image pull policy ("" leaves the cluster's
	// default).
	PullPolicy corev1.PullPolicy
	// Helper is cordon-pod's path in the image.
	Helper string
	// Claim, when set, names a PersistentVolumeClaim that holds the
	// workspace root: it is mounted at the root and masks inside the
	// root become subPath mounts of it. Grants outside the root are then
	// not mounted, and hidden files are left to the sandbox layer. Empty:
	// the root and every grant are hostPath volumes of the node, which
	// must then be the machine the caller runs on.
	Claim string
	// UID and GID run the container (-1: the image's user). A UID other
	// than 0 also sets runAsNonRoot.
	UID, GID int64
	// RuntimeClassName selects a runtime class (gVisor's "gvisor", say).
	RuntimeClassName string
	// SeccompLocalhost, when set, is a seccomp profile on the node
	// (relative to the kubelet's seccomp directory) used instead of
	// RuntimeDefault.
	SeccompLocalhost string
	// Resources are the container's requests and limits.
	Resources corev1.ResourceRequirements
	// HostNetworkWhenFull sets hostNetwork when the profile's network is
	// full (the node's network namespace instead of the pod network).
	HostNetworkWhenFull bool
	// AttachTimeout is how long cordon-pod init waits for the executor's
	// session (cordon-pod serve) to attach before it ends the pod.
	AttachTimeout string
	// Labels select the session's pods (the NetworkPolicy's selector).
	Labels map[string]string
}

// PodRendering is the profile rendered for Kubernetes.
type PodRendering struct {
	// Pod is the session pod's spec.
	Pod corev1.PodSpec
	// NetworkPolicy denies all ingress and egress of the session's pods
	// when the profile's network is not full; nil otherwise.
	NetworkPolicy *networkingv1.NetworkPolicySpec
}

// ContainerName is the session container's name in PodRendering.Pod.
const ContainerName = "sandbox"

// PodSpec renders the profile as a pod spec: OCIMounts' mounts (image
// mode: the image provides the System paths) as volumes — grants and
// read-only masks as hostPath volumes at the same path (or subPath mounts
// of the claim), hidden directories and /tmp as emptyDir, hidden files as
// the node's /dev/null — a read-only root filesystem, every capability
// dropped, no privilege escalation, seccomp, no service-account token and
// no host namespaces; and, unless the network is full, a NetworkPolicy
// that denies everything. The container's command is cordon-pod init:
// commands run by exec under cordon-pod run, whose Landlock and seccomp
// sandbox (the sandbox layer) enforces the whole profile again inside
// the pod. Each element of the fidelity report names its layer.
func PodSpec(pr *Profile, opts PodOptions) (*PodRendering, *Fidelity) {
	ms, of := OCIMounts(pr, OCIOptions{})
	f := &Fidelity{Backend: "kubernetes"}
	for _, e := range of.Elements {
		e.Layer = LayerPod
		f.add(e)
	}
	c := corev1.Container{
		Name:            ContainerName,
		Image:           opts.Image,
		ImagePullPolicy: opts.PullPolicy,
		Command:         []string{opts.Helper, "init"},
		Resources:       opts.Resources,
		SecurityContext: &corev1.SecurityContext{
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			ReadOnlyRootFilesystem:   new(true),
			AllowPrivilegeEscalation: new(false),
			Privileged:               new(false),
			ProcMount:                new(corev1.DefaultProcMount),
		},
	}
	if opts.AttachTimeout != "" {
		c.Command = append(c.Command, "-attach-timeout", opts.AttachTimeout)
	}
	sc := &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	if opts.SeccompLocalhost != "" {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: new(opts.SeccompLocalhost)}
	}
	if opts.UID >= 0 {
		sc.RunAsUser = new(opts.UID)
		sc.RunAsNonRoot = new(opts.UID != 0)
	}
	if opts.GID >= 0 {
		sc.RunAsGroup = new(opts.GID)
	}
	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		TerminationGracePeriodSeconds: new(int64(0)),
		AutomountServiceAccountToken:  new(false),
		EnableServiceLinks:            new(false),
		HostNetwork:                   false,
		HostPID:                       false,
		HostIPC:                       false,
		ShareProcessNamespace:         new(false),
		SecurityContext:               sc,
	}
	if opts.RuntimeClassName != "" {
		spec.RuntimeClassName = new(opts.RuntimeClassName)
	}
	f.add(Element{Class: Exact, Subject: "security context", Control: policy.ControlFSWrite, Layer: LayerPod,
		Detail: "read-only root filesystem, every capability dropped, no privilege escalation, seccomp " + string(sc.SeccompProfile.Type) + ", no service-account token, no host network, PID or IPC namespace"})
	if opts.UID == 0 {
		f.add(Element{Class: Exact, Subject: "user", Control: policy.ControlFSWrite, Layer: LayerPod,
			Detail: "runs as uid 0 (the caller's), without capabilities: runAsNonRoot cannot be set, files it creates in the root belong to root as the caller's do"})
	}

	claimRoot := opts.Claim != "" && pr.Root != ""
	if claimRoot {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "root", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: opts.Claim}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "root", MountPath: pr.Root})
		f.add(Element{Class: Exact, Subject: "claim " + opts.Claim, Control: policy.ControlFSWrite, Layer: LayerPod,
			Detail: "the workspace root is the claim, mounted at " + pr.Root})
	}
	// The image provides the default System paths: the host's masks
	// there guard host files the pod does not have.
	var image []string
	for _, a := range pr.Read {
		if a.Source == "system" && a.Exists {
			image = append(image, a.Path)
		}
	}
	var binds []string // host trees mounted: a mask below one must stay
	for _, m := range ms {
		if m.Type == "bind" && m.Source != "/dev/null" {
			binds = append(binds, m.Destination)
		}
	}
	masks := map[string]bool{}
	for _, mk := range pr.Masks {
		masks[mk.Path] = true
	}
	skipped := 0
	for i, m := range ms {
		// Only masks are skipped: the root and grants are always mounted,
		// wherever they are (a root under /opt).
		if masks[m.Destination] && abspath.WithinAny(m.Destination, image) && !slices.ContainsFunc(binds, func(b string) bool {
			return b != m.Destination && abspath.Within(m.Destination, b)
		}) {
			skipped++
			continue
		}
		name := "v" + strconv.Itoa(i)
		vm := corev1.VolumeMount{Name: name, MountPath: m.Destination}
		var vs corev1.VolumeSource
		switch {
		case m.Type == "tmpfs":
			ed := &corev1.EmptyDirVolumeSource{}
			if m.Destination != "/tmp" {
				ed.Medium = corev1.StorageMediumMemory
				ed.SizeLimit = new(resource.MustParse("1Mi"))
				vm.ReadOnly = true // nothing can be created in a hidden directory
			}
			vs.EmptyDir = ed
		case m.Source == "/dev/null":
			if claimRoot {
				f.add(Element{Class: Exact, Subject: "hide " + m.Destination, Control: policy.ControlFSRead, Layer: LayerSandbox,
					Detail: "hidden by the sandbox layer only: a claim-backed pod mounts no host path"})
				continue
			}
			vs.HostPath = &corev1.HostPathVolumeSource{Path: "/dev/null", Type: new(corev1.HostPathCharDev)}
			vm.ReadOnly = true
		default:
			vm.ReadOnly = hasOpt(m.Options, "ro")
			if claimRoot {
				if m.Destination == pr.Root && !vm.ReadOnly {
					continue // the claim itself
				}
				if !abspath.Within(m.Source, pr.Root) {
					f.add(Element{Class: Stricter, Subject: "grant " + m.Destination, Control: policy.ControlFSRead, Layer: LayerPod,
						Detail: "not mounted", Reason: "a claim-backed pod holds only the workspace root"})
					continue
				}
				rel, _ := relUnder(pr.Root, m.Source)
				vm.Name, vm.SubPath = "root", rel
				c.VolumeMounts = append(c.VolumeMounts, vm)
				continue
			}
			t := corev1.HostPathDirectory
			if fi, err := os.Stat(m.Source); err == nil && !fi.IsDir() {
				t = corev1.HostPathFile
			}
			vs.HostPath = &corev1.HostPathVolumeSource{Path: m.Source, Type: new(t)}
		}
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: vs})
		c.VolumeMounts = append(c.VolumeMounts, vm)
	}
	if !claimRoot {
		c.VolumeMounts, spec.Volumes = hostTop(pr, c.VolumeMounts, spec.Volumes, f)
	}
	spec.Containers = []corev1.Container{c}
	if skipped > 0 {
		f.add(Element{Class: Exact, Subject: "system paths", Control: policy.ControlFSRead, Layer: LayerPod,
			Detail: fmt.Sprintf("the image provides the default System paths: %d mask(s) of host files there are not mounted (the pod has the image's files, not the host's)", skipped)})
	}

	r := &PodRendering{Pod: spec}
	if pr.Network != policy.NetworkFull {
		r.NetworkPolicy = &networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: opts.Labels},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		}
		f.add(Element{Class: Exact, Subject: "network", Control: policy.ControlNetTCP, Layer: LayerCluster,
			Detail: "a NetworkPolicy denies all ingress and egress of the session's pods, where the cluster's CNI enforces NetworkPolicy"})
		f.add(Element{Class: Exact, Subject: "network", Control: policy.ControlNetTCP, Layer: LayerSandbox,
			Detail: fmt.Sprintf("network %s is enforced again inside the pod by the sandbox layer (Landlock and seccomp), whatever the cluster enforces", pr.Network)})
	} else if opts.HostNetworkWhenFull {
		r.Pod.HostNetwork = true
		f.add(Element{Class: Exact, Subject: "network", Control: policy.ControlNetTCP, Layer: LayerPod, Detail: "full: the node's network namespace (hostNetwork), no NetworkPolicy"})
	} else {
		f.add(Element{Class: Exact, Subject: "network", Control: policy.ControlNetTCP, Layer: LayerPod, Detail: "full: the pod network, no NetworkPolicy"})
	}
	f.add(Element{Class: Exact, Subject: "sandbox", Control: policy.ControlFSRead, Layer: LayerSandbox,
		Detail: "every command runs under cordon-pod's Landlock and seccomp sandbox, derived from the same policy inside the pod: the file rules (hidden files and denied names included) hold there too"})
	return r, f
}

// hostTop adds, for a read grant of "/" (trusted mode), a hostPath
// volume of each of the host's top-level directories and files at its
// path, read-only (read-write for a write grant of "/"): a container
// cannot mount the host's / over its own root. Left out: /proc, /dev,
// /sys, /tmp, /run (the pod's own), symbolic links, what a volume already
// covers, and the image's system directories (the top-level entries of
// policy.DefaultSystem). Masks, being deeper, still apply.
func hostTop(pr *Profile, vms []corev1.VolumeMount, vols []corev1.Volume, f *Fidelity) ([]corev1.VolumeMount, []corev1.Volume) {
	tops, writable := HostTops(pr, true, func(p string) bool {
		return slices.ContainsFunc(vms, func(m corev1.VolumeMount) bool { return abspath.Within(p, m.MountPath) })
	})
	var added []string
	for _, top := range tops {
		t := corev1.HostPathDirectory
		if !top.Dir {
			t = corev1.HostPathFile
		}
		name := "top-" + strconv.Itoa(len(added))
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: top.Path, Type: new(t)}}})
		vms = append(vms, corev1.VolumeMount{Name: name, MountPath: top.Path, ReadOnly: !writable})
		added = append(added, top.Path)
	}
	if len(added) > 0 {
		f.add(Element{Class: Exact, Subject: "read /", Control: policy.ControlFSRead, Layer: LayerPod,
			Detail: "the host's top-level entries are mounted at their paths (" + strings.Join(added, ", ") + "); the image provides its system directories, and the pod its own /proc, /dev, /sys, /tmp and /run"})
	}
	return vms, vols
}

// HostTop is one of the host's top-level entries that a container binds
// at its path for a read grant of "/".
type HostTop struct {
	Path string
	Dir  bool // else a regular file
}

// HostTops lists, for a read grant of "/" in pr (trusted mode), the
// host's top-level directories and regular files a container binds at
// their paths — a container cannot bind the host's / over its own root
// — and whether a write grant of "/" makes them writable. Left out:
// /proc, /dev, /sys and /tmp (the container's own), /run (the node's
// runtime sockets come and go between derivation and start, and a
// socket cannot be masked inside a read-only bind then; the container
// has its own), symbolic links, what covered reports as covered by
// another mount, and with image the image's system directories (the
// top-level entries of policy.DefaultSystem). Masks, being deeper, still
// apply. Without a read grant of "/" it returns nothing.
func HostTops(pr *Profile, image bool, covered func(path string) bool) (tops []HostTop, writable bool) {
	grant := func(l []Access) bool {
		return slices.ContainsFunc(l, func(a Access) bool { return a.Path == "/" && a.Exists })
	}
	if !grant(pr.Read) {
		return nil, false
	}
	ents, err := os.ReadDir(hostRootDir)
	if err != nil {
		return nil, false
	}
	skip := []string{"proc", "sys", "dev", "tmp", "run"}
	if image {
		for _, sp := range policy.DefaultSystem() {
			if top, _, _ := strings.Cut(strings.TrimPrefix(sp, "/"), "/"); top != "" {
				skip = append(skip, top)
			}
		}
	}
	for _, e := range ents {
		p := "/" + e.Name()
		if slices.Contains(skip, e.Name()) || e.Type()&fs.ModeSymlink != 0 || !(e.IsDir() || e.Type().IsRegular()) || covered(p) {
			continue
		}
		tops = append(tops, HostTop{Path: p, Dir: e.IsDir()})
	}
	return tops, grant(pr.Write)
}

// hostRootDir is the directory HostTops lists ("/"; the golden tests
// list a fixture instead, so their files do not depend on the host).
var hostRootDir = "/"

func hasOpt(opts []string, o string) bool {
	for _, x := range opts {
		if x == o {
			return true
		}
	}
	return false
}

// relUnder returns p relative to dir ("" for dir itself).
func relUnder(dir, p string) (string, bool) {
	if p == dir {
		return "", true
	}
	if !abspath.Within(p, dir) {
		return "", false
	}
	if dir == "/" {
		return p[1:], true
	}
	return p[len(dir)+1:], true
}

// YAML renders the rendering as Kubernetes manifests: a Pod named name
// with labels (the session pod the executor's Job would create) and,
// when there is one, the NetworkPolicy, as two YAML documents.
func (r *PodRendering) YAML(name, namespace string, labels map[string]string) ([]byte, error) {
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec:       r.Pod,
	}
	out, err := yaml.Marshal(pod)
	if err != nil {
		return nil, err
	}
	if r.NetworkPolicy != nil {
		np := networkingv1.NetworkPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
			Spec:       *r.NetworkPolicy,
		}
		b, err := yaml.Marshal(np)
		if err != nil {
			return nil, err
		}
		out = append(append(out, "---\n"...), b...)
	}
	return out, nil
}
