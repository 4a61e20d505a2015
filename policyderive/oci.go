package policyderive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/docker/docker/api/types/mount"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// OCIOptions configure OCIMounts.
type OCIOptions struct {
	// HostSystem binds the host's System paths read-only (the docker
	// backend's host mode: an empty image, no registry needed). Without
	// it the image provides /usr, /etc, ...
	HostSystem bool
}

// OCIMounts renders the profile as OCI runtime-spec mounts: /tmp as a
// tmpfs, grants as binds at the same path (read-only or read-write,
// rprivate, nosuid, nodev), pins as read-write binds onto themselves,
// read-only masks as read-only binds, hidden directories and
// placeholders as empty tmpfs with mode 0555, hidden files as /dev/null
// bound read-only. Mounts are ordered by depth (as Docker sorts them),
// each destination once. The runtime adds /proc, /dev and /sys itself;
// the network (none unless Profile.Network is full) is the container's
// network mode.
func OCIMounts(pr *Profile, opts OCIOptions) ([]specs.Mount, *Fidelity) {
	f := &Fidelity{Backend: "oci"}
	ops, _, hasRoot := mountPlan(pr, opts.HostSystem, false)
	if hasRoot {
		f.stricter("read /", policy.ControlFSRead, "", "only the root, the System paths (host mode) or the image and explicit grants are readable", "a container cannot bind the host's / over its own root")
		f.key(FeatureHostRoot)
	}
	bind := func(src, dst string, ro bool) specs.Mount {
		mode := "rw"
		if ro {
			mode = "ro"
		}
		return specs.Mount{Destination: dst, Type: "bind", Source: src, Options: []string{"rbind", mode, "rprivate", "nosuid", "nodev"}}
	}
	tmpfs := func(dst string, opt ...string) specs.Mount {
		return specs.Mount{Destination: dst, Type: "tmpfs", Source: "tmpfs", Options: append([]string{"nosuid", "nodev"}, opt...)}
	}
	ms := []specs.Mount{tmpfs("/tmp", "mode=1777")}
	f.exact("tmp", policy.ControlFSWrite, "", "private /tmp (tmpfs)")
	resolved := map[string]string{}
	for _, l := range pr.Links {
		resolved[l.Path] = l.Resolved
	}
	at := map[string]int{} // index in ms by destination
	for _, op := range ops {
		var m specs.Mount
		switch op.kind {
		case mountRO, mountMaskRO:
			m = bind(op.path, op.path, true)
		case mountLink:
			m = bind(resolved[op.path], op.path, true) // a bind, not a link: mounts cannot make links
		case mountRW, mountPin:
			m = bind(op.path, op.path, false)
		case mountMaskDir:
			m = tmpfs(op.path, "mode=0555", "size=1m")
		case mountMaskFile:
			m = bind("/dev/null", op.path, true)
		}
		// One mount per destination: the later one wins, as it would
		// shadow (it takes the earlier one's place in the order later).
		if i, ok := at[m.Destination]; ok {
			ms[i].Destination = "" // dropped below
		}
		at[m.Destination] = len(ms)
		ms = append(ms, m)
	}
	ms = slices.DeleteFunc(ms, func(x specs.Mount) bool { return x.Destination == "" })
	grantElements(f, pr, true)
	mountElements(f, pr)
	f.add(Element{Class: Exact, Subject: "hidden directories", Control: policy.ControlFSWrite, Detail: "empty tmpfs with mode 0555: without capabilities nothing can be created in them, and anything created there after a chmod by its owner stays in the tmpfs"})
	f.Elements = append(f.Elements, maskElements(pr, "oci")...)
	return ms, f
}

// ErrUnsupportedMount is wrapped by the error of DockerMounts for a mount
// it cannot convert.
var ErrUnsupportedMount = errors.New("mount cannot be converted to a Docker mount")

// MountError reports a mount DockerMounts cannot convert. It wraps
// ErrUnsupportedMount.
type MountError struct {
	Destination string
	Type        string
	Option      string
}

func (e *MountError) Error() string {
	if e.Option != "" {
		return fmt.Sprintf("%v: %s (%s): option %q", ErrUnsupportedMount, e.Destination, e.Type, e.Option)
	}
	return fmt.Sprintf("%v: %s: type %q", ErrUnsupportedMount, e.Destination, e.Type)
}

// Unwrap returns ErrUnsupportedMount.
func (e *MountError) Unwrap() error { return ErrUnsupportedMount }

// DockerMounts converts OCI mounts (as OCIMounts renders them) to Docker
// Engine mounts: binds keep their read-only flag and rprivate
// propagation and never create their source (a missing source is an
// error at container creation); tmpfs mounts keep their mode and size.
func DockerMounts(ms []specs.Mount) ([]mount.Mount, error) {
	out := make([]mount.Mount, 0, len(ms))
	for _, m := range ms {
		switch m.Type {
		case "bind":
			dm := mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Destination,
				BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}}
			for _, o := range m.Options {
				switch o {
				case "ro":
					dm.ReadOnly = true
				case "rw", "rbind", "nosuid", "nodev":
				case "bind":
					dm.BindOptions.NonRecursive = true
				case "rprivate", "private", "rshared", "shared", "rslave", "slave":
					dm.BindOptions.Propagation = mount.Propagation(o)
				default:
					return nil, &MountError{Destination: m.Destination, Type: m.Type, Option: o}
				}
			}
			out = append(out, dm)
		case "tmpfs":
			dm := mount.Mount{Type: mount.TypeTmpfs, Target: m.Destination, TmpfsOptions: &mount.TmpfsOptions{}}
			for _, o := range m.Options {
				k, v, _ := strings.Cut(o, "=")
				switch k {
				case "mode":
					n, err := strconv.ParseUint(v, 8, 32)
					if err != nil {
						return nil, &MountError{Destination: m.Destination, Type: m.Type, Option: o}
					}
					dm.TmpfsOptions.Mode = os.FileMode(n) & os.ModePerm
					if n&0o1000 != 0 {
						dm.TmpfsOptions.Mode |= os.ModeSticky
					}
				case "size":
					n, err := parseSize(v)
					if err != nil {
						return nil, &MountError{Destination: m.Destination, Type: m.Type, Option: o}
					}
					dm.TmpfsOptions.SizeBytes = n
				case "nosuid", "nodev":
				default:
					return nil, &MountError{Destination: m.Destination, Type: m.Type, Option: o}
				}
			}
			out = append(out, dm)
		default:
			return nil, &MountError{Destination: m.Destination, Type: m.Type}
		}
	}
	return out, nil
}

// parseSize parses a tmpfs size: bytes with an optional k, m or g suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "g"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return n * mult, nil
}

// ImageProfile returns pr for an image-mode rendering (OCIMounts without
// HostSystem, PodSpec): the System paths of p that are not among
// policy.DefaultSystem (the image provides those) are marked as bound
// from the host, because an image lacks them (the conformance probe's
// directory, a user's /opt/tools). pr itself is not changed.
func ImageProfile(pr *Profile, p *policy.Policy) *Profile {
	var extra []string
	defaults := policy.DefaultSystem()
	for _, s := range p.SystemPaths() {
		if slices.Contains(defaults, s) || !filepath.IsAbs(s) {
			continue
		}
		r := filepath.Clean(s)
		if e, err := filepath.EvalSymlinks(r); err == nil {
			r = e
		}
		extra = append(extra, r)
	}
	if len(extra) == 0 {
		return pr
	}
	q := *pr
	q.Read = slices.Clone(pr.Read)
	for i, a := range q.Read {
		if a.Source == "system" && abspath.WithinAny(a.Path, extra) {
			q.Read[i].Source = "system (not a default system path: bound from the host)"
		}
	}
	return &q
}
