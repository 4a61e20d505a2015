package policyderive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	"github.com/cordon-sandbox/cordon/internal/netns"
	"github.com/cordon-sandbox/cordon/policy"
)

// Profile is the backend-neutral OS profile derived from a policy for one
// command: what the sandbox lets the command read, write and execute,
// what it hides or makes read-only inside those grants, and the rule
// chain pattern-capable backends render directly.
//
// A Profile is plain data, immutable once derived (renderers never modify
// it) and identified by Key, so backends can cache rulesets and
// containers by profile. Paths are absolute, clean and resolved.
type Profile struct {
	// Root is the resolved workspace root; Home the resolved home ("" when
	// unknown); Cwd the command's resolved working directory.
	Root string `json:"root"`
	Home string `json:"home,omitempty"`
	Cwd  string `json:"cwd"`

	// Network is the OS-level network access. Under
	// policy.NetworkAllowList the renderings assume what the executors
	// provide: the command starts in a private network namespace whose
	// only listener is the proxy on 127.0.0.1:ProxyPort (see
	// AllowListNetwork); an executor that cannot provide it renders
	// NetworkNone instead and says so.
	Network policy.Network `json:"network"`
	// PrivateTmp is always true: /tmp is private to the sandbox. Mount
	// backends mount a tmpfs; Landlock and Seatbelt grant TmpDir instead,
	// when the backend sets one (see WithTmpDir).
	PrivateTmp bool `json:"private_tmp"`
	// TmpDir is a host directory private to this sandbox that backends
	// without a mount namespace grant read-write in place of /tmp (and
	// point TMPDIR at). Empty: none.
	TmpDir string `json:"tmp_dir,omitempty"`

	// Read lists the read (and list) grants, Write the write grants, Exec
	// the execute grants. A write grant implies read. Entries are
	// subtrees (Dir) or single files, sorted by path.
	Read  []Access `json:"read"`
	Write []Access `json:"write"`
	Exec  []Access `json:"exec"`
	// Links are system paths that are symbolic links (/bin -> usr/bin on
	// merged-/usr systems); their targets are granted in Read.
	Links []Link `json:"links,omitempty"`

	// Masks are the paths inside grants that must be hidden or read-only,
	// sorted by path. Placeholders (Exists false) stand for protected or
	// denied paths that do not exist yet and must not be created.
	Masks []Mask `json:"masks,omitempty"`
	// Pinned are the directories between a writable grant and a mask
	// that must not be renamed or removed (mount backends make them mount
	// points), sorted.
	Pinned []string `json:"pinned,omitempty"`
	// Dirs are the listings of the directories Landlock must split
	// because masks lie below them (the ancestors of every mask inside a
	// grant), sorted by path.
	Dirs []Listing `json:"dirs,omitempty"`

	// Defaults and Rules are the policy's decision procedure for
	// pattern-capable backends (Seatbelt): the first rule whose pattern
	// matches and covers the op decides, else the default.
	Defaults Defaults `json:"defaults"`
	Rules    []Rule   `json:"rules,omitempty"`
	// System lists the resolved System paths (read and execute grants of
	// the OS sandbox only; the ACL still judges file tools).
	System []string `json:"system"`

	// Scope lists the trees the mask search covered: the root, the home
	// directory where granted, every explicit grant.
	Scope []string `json:"scope"`
	// Unsearched lists bare-name and glob rules that mask-based backends
	// cannot apply in parts of a grant outside Scope.
	Unsearched []Unsearched `json:"unsearched,omitempty"`
	// Notes are derivation facts every mask-based rendering reports
	// (unreadable directories masked, a mask search that hit its limit).
	Notes []Element `json:"notes,omitempty"`

	// Grants are the approved asks of this command, resolved.
	Grants []policy.Grant `json:"grants,omitempty"`
	// Sockets lists the Unix sockets found in Scope that a path rule or
	// an approved grant names by their own path, sorted: the only sockets
	// found there that are not masked.
	Sockets []string `json:"sockets,omitempty"`
}

// Special marks a grant that backends provide by other means.
type Special string

const (
	// SpecialNone is an ordinary path.
	SpecialNone Special = ""
	// SpecialDevice is a pseudo-device (/dev/null, /dev/zero, ...):
	// bwrap and containers provide their own /dev.
	SpecialDevice Special = "device"
	// SpecialProc is a path under /proc (/proc/self): mount backends
	// mount a fresh procfs; Landlock must add the rule in the sandboxed
	// process itself, since /proc/self names the process that opens it.
	SpecialProc Special = "proc"
)

// Access is one grant of the profile.
type Access struct {
	Path string `json:"path"`
	// Dir is true for a directory (the grant covers its subtree).
	Dir bool `json:"dir"`
	// Exists is false for a grant whose path does not exist: renderers
	// skip it and never create it.
	Exists bool `json:"exists"`
	// Special marks pseudo-devices and /proc paths.
	Special Special `json:"special,omitempty"`
	// Source names what granted it: "root", "system", "grant",
	// "device", "default: read outside root", `path_rules[1] "~/notes"`.
	Source string `json:"source"`
}

// Link is a system path that is a symbolic link.
type Link struct {
	Path string `json:"path"`
	// Target is the link's text, as readlink returns it.
	Target string `json:"target"`
	// Resolved is the resolved path the link leads to (granted in Read).
	Resolved string `json:"resolved"`
}

// MaskKind says what a mask forbids.
type MaskKind uint8

const (
	// Hide denies read and write: a directory becomes an empty tmpfs, a
	// file an empty read-only file.
	Hide MaskKind = iota
	// ReadOnly denies write: the path is bound read-only.
	ReadOnly
)

// String returns "hide" or "read-only".
func (k MaskKind) String() string {
	switch k {
	case Hide:
		return "hide"
	case ReadOnly:
		return "read-only"
	}
	return fmt.Sprintf("MaskKind(%d)", uint8(k))
}

// MarshalText implements encoding.TextMarshaler.
func (k MaskKind) MarshalText() ([]byte, error) {
	if k > ReadOnly {
		return nil, fmt.Errorf("invalid mask kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// Mask is a path inside a grant that the sandbox hides or makes
// read-only.
type Mask struct {
	Path string   `json:"path"`
	Kind MaskKind `json:"kind"`
	// Dir is true for a directory (masked as a directory, subtree
	// included). Placeholders are directories.
	Dir bool `json:"dir"`
	// Exists is false for a placeholder: the path does not exist, and the
	// mask keeps it from being created (a mount backend creates an empty
	// mount point for it; see MountPoints).
	Exists bool `json:"exists"`
	// Rule is the Source of the policy rule that decided, or "" for masks
	// the derivation adds itself (Reason says which).
	Rule string `json:"rule,omitempty"`
	// Reason is "denied", "protected", "not writable", "unreadable
	// directory", "socket" or "hard link".
	Reason string `json:"reason"`
	// For is, for a placeholder, the path the placeholder stands for
	// (".git/config" when the placeholder is ".git"); for a hard link,
	// the masked name it is another name of.
	For string `json:"for,omitempty"`
}

// Listing is a directory's entries, read without following symlinks.
type Listing struct {
	Path    string  `json:"path"`
	Entries []Entry `json:"entries"`
	// Err is set when the directory could not be listed; Entries is then
	// empty and the directory's children get no grant of their own.
	Err string `json:"err,omitempty"`
}

// EntryType is the type of a directory entry.
type EntryType uint8

// Entry types.
const (
	TypeFile EntryType = iota
	TypeDir
	TypeSymlink
	// TypeOther is a device, socket or FIFO.
	TypeOther
)

// String returns "file", "dir", "symlink" or "other".
func (t EntryType) String() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "dir"
	case TypeSymlink:
		return "symlink"
	case TypeOther:
		return "other"
	}
	return fmt.Sprintf("EntryType(%d)", uint8(t))
}

// MarshalText implements encoding.TextMarshaler.
func (t EntryType) MarshalText() ([]byte, error) {
	if t > TypeOther {
		return nil, fmt.Errorf("invalid entry type %d", uint8(t))
	}
	return []byte(t.String()), nil
}

// Entry is one directory entry.
type Entry struct {
	Name string    `json:"name"`
	Type EntryType `json:"type"`
}

// Defaults are the policy's decisions when no rule matches.
type Defaults struct {
	ReadInside   policy.Decision `json:"read_inside"`
	WriteInside  policy.Decision `json:"write_inside"`
	ReadOutside  policy.Decision `json:"read_outside"`
	WriteOutside policy.Decision `json:"write_outside"`
}

// Rule is one effective policy path rule in the backend-neutral form a
// pattern-capable backend needs.
type Rule struct {
	// Source is the rule's name: `denied_paths[0]`, `protect[3]`.
	Source string `json:"source"`
	// List is the policy list the rule comes from ("protect", ...):
	// classify rules by List, never by Source (which may name a layer).
	List string `json:"-"`
	// Pattern is the pattern as written.
	Pattern string `json:"pattern"`
	// Form is "absolute", "relative" or "name".
	Form string `json:"form"`
	// Literal is true when the pattern has no glob metacharacters.
	Literal bool `json:"literal"`
	// Path is, for a literal absolute or relative pattern, the resolved
	// absolute path whose subtree it matches.
	Path string `json:"path,omitempty"`
	// Base is, for a glob, the resolved absolute directory the glob is
	// relative to (the literal prefix; the root for relative patterns).
	Base string `json:"base,omitempty"`
	// Glob is, for a glob, the pattern's remaining segments after Base;
	// for a name pattern, the name glob.
	Glob string `json:"glob,omitempty"`
	// RootSegment is true for a name pattern that matches a segment of
	// the root's own path: the pattern then matches differently inside
	// the root (on the relative path) and outside (on the absolute path).
	RootSegment bool `json:"root_segment,omitempty"`
	// Never is true for a pattern that matches nothing (a "~" pattern
	// when the home is unknown).
	Never  bool            `json:"never,omitempty"`
	Action policy.Decision `json:"action"`
	Read   bool            `json:"read"`
	Write  bool            `json:"write"`
}

// Unsearched is a bare-name or glob rule that a mask search could not
// apply to part of a grant.
type Unsearched struct {
	Rule    string    `json:"rule"`
	Pattern string    `json:"pattern"`
	Op      policy.Op `json:"op"`
	// Grant is the granted tree that extends beyond the search scope.
	Grant string `json:"grant"`
}

// WithTmpDir returns a copy of p in which dir, a host directory private
// to the sandbox, serves as its temporary directory: Landlock and
// Seatbelt grant it read-write. Mount backends keep their tmpfs /tmp.
func (p *Profile) WithTmpDir(dir string) *Profile {
	q := p.clone()
	q.TmpDir = dir
	return q
}

func (p *Profile) clone() *Profile {
	q := *p
	q.Read = slices.Clone(p.Read)
	q.Write = slices.Clone(p.Write)
	q.Exec = slices.Clone(p.Exec)
	q.Links = slices.Clone(p.Links)
	q.Masks = slices.Clone(p.Masks)
	q.Pinned = slices.Clone(p.Pinned)
	q.Dirs = slices.Clone(p.Dirs)
	q.Rules = slices.Clone(p.Rules)
	q.System = slices.Clone(p.System)
	q.Scope = slices.Clone(p.Scope)
	q.Unsearched = slices.Clone(p.Unsearched)
	q.Notes = slices.Clone(p.Notes)
	q.Grants = slices.Clone(p.Grants)
	q.Sockets = slices.Clone(p.Sockets)
	return &q
}

// Placeholders returns the masks for paths that do not exist. A mount
// backend's runtime creates each as an empty mount point on the host
// when its parent is a writable bind (see MountPoints).
func (p *Profile) Placeholders() []Mask {
	var out []Mask
	for _, m := range p.Masks {
		if !m.Exists {
			out = append(out, m)
		}
	}
	return out
}

// MountPoints returns the host paths a mount backend (bwrap, runc) will
// create as empty directories when it mounts the placeholders: the
// backend must remove them after the command exits (rmdir, which fails
// harmlessly when something else now lives there), and must not remove
// one while another sandbox that uses it still runs: unlinking a mount
// point on the host detaches the mount inside other namespaces.
func (p *Profile) MountPoints() []string {
	var out []string
	for _, m := range p.Placeholders() {
		out = append(out, m.Path)
	}
	return out
}

// Key returns a stable digest of the profile: equal profiles have equal
// keys, and any difference in grants, masks, listings, rules, network or
// paths changes it. Backends cache rulesets and containers by Key.
func (p *Profile) Key() string {
	var k keyWriter
	k.line("v1", p.Root, p.Home, p.Cwd)
	k.line("net", uint8(p.Network), p.PrivateTmp, p.TmpDir)
	for _, l := range [][]Access{p.Read, p.Write, p.Exec} {
		k.line("access", len(l))
		for _, a := range l {
			k.line("a", a.Path, a.Dir, a.Exists, string(a.Special), a.Source)
		}
	}
	for _, l := range p.Links {
		k.line("link", l.Path, l.Target, l.Resolved)
	}
	for _, m := range p.Masks {
		k.line("mask", m.Path, uint8(m.Kind), m.Dir, m.Exists, m.Rule, m.Reason, m.For)
	}
	for _, d := range p.Pinned {
		k.line("pin", d)
	}
	for _, d := range p.Dirs {
		k.line("dir", d.Path, d.Err, len(d.Entries))
		for _, e := range d.Entries {
			k.line("e", e.Name, uint8(e.Type))
		}
	}
	k.line("defaults", uint8(p.Defaults.ReadInside), uint8(p.Defaults.WriteInside), uint8(p.Defaults.ReadOutside), uint8(p.Defaults.WriteOutside))
	for _, r := range p.Rules {
		k.line("rule", r.Source, r.Pattern, r.Form, r.Literal, r.Path, r.Base, r.Glob, r.RootSegment, r.Never, uint8(r.Action), r.Read, r.Write)
	}
	for _, s := range p.System {
		k.line("sys", s)
	}
	for _, s := range p.Scope {
		k.line("scope", s)
	}
	for _, u := range p.Unsearched {
		k.line("unsearched", u.Rule, u.Pattern, uint8(u.Op), u.Grant)
	}
	for _, n := range p.Notes {
		k.line("note", uint8(n.Class), n.Subject, string(n.Control), n.Rule, n.Detail, n.Reason, n.Remedy, n.Inherent, n.Concurrent, string(n.Feature))
	}
	for _, g := range p.Grants {
		k.line("grant", g.Path, uint8(g.Op))
	}
	for _, s := range p.Sockets {
		k.line("socket", s)
	}
	sum := sha256.Sum256(k.b)
	return hex.EncodeToString(sum[:])
}

// keyWriter builds the canonical text Key hashes: one line per element,
// strings length-prefixed (so any byte sequence is encoded unambiguously).
type keyWriter struct{ b []byte }

func (k *keyWriter) line(tag string, vs ...any) {
	k.b = append(k.b, tag...)
	for _, v := range vs {
		k.b = append(k.b, ' ')
		switch v := v.(type) {
		case string:
			k.b = strconv.AppendInt(k.b, int64(len(v)), 10)
			k.b = append(k.b, ':')
			k.b = append(k.b, v...)
		case bool:
			k.b = strconv.AppendBool(k.b, v)
		case int:
			k.b = strconv.AppendInt(k.b, int64(v), 10)
		case uint8:
			k.b = strconv.AppendUint(k.b, uint64(v), 10)
		default:
			panic(fmt.Sprintf("policyderive: key of %T", v))
		}
	}
	k.b = append(k.b, '\n')
}

// ProxyPort is the port of the network allow-list's proxy as commands see
// it: 127.0.0.1:ProxyPort inside their private network namespace.
const ProxyPort = netns.ProxyPort

// AllowListNetwork describes the network of a command under the
// allow-list, in fidelity elements.
var AllowListNetwork = fmt.Sprintf("allow-list: a private network namespace with only loopback, where nothing but the proxy listens (127.0.0.1:%d); every connection goes through the proxy, which decides it by network.allow/deny/unknown", ProxyPort)
