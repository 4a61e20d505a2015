package policyderive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
)

// Landlock access rights, as go-landlock AccessFSSet values.
const (
	// LandlockRead is read access to a directory tree: list, read,
	// execute.
	LandlockRead landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	// LandlockReadFile is read access to a single file.
	LandlockReadFile landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSReadFile
	// LandlockWrite is read and write access to a directory tree: every
	// right but making devices, ioctl on devices and (below ABI 9 it does
	// not exist) resolving Unix sockets outside write grants. It includes
	// refer, so files can be moved between directories of the tree.
	LandlockWrite landlock.AccessFSSet = LandlockRead | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg |
		ll.AccessFSMakeSym | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSRefer | ll.AccessFSResolveUnix
	// LandlockWriteFile is read and write access to a single file.
	LandlockWriteFile landlock.AccessFSSet = LandlockReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate

	// landlockFileRights are the rights a rule on a non-directory may
	// carry.
	landlockFileRights landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	landlockCreate     landlock.AccessFSSet = ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym
	landlockModify     landlock.AccessFSSet = landlockCreate | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSRefer | ll.AccessFSWriteFile | ll.AccessFSTruncate
)

// LandlockMaxABI is the highest Landlock ABI the renderer knows.
const LandlockMaxABI = 11

// LandlockHandledFS returns the file system rights Landlock restricts at
// the ABI (0 without Landlock).
func LandlockHandledFS(abi int) landlock.AccessFSSet {
	switch {
	case abi <= 0:
		return 0
	case abi == 1:
		return 1<<13 - 1
	case abi == 2:
		return 1<<14 - 1
	case abi <= 4:
		return 1<<15 - 1
	case abi <= 8:
		return 1<<16 - 1
	}
	return 1<<17 - 1
}

// LandlockHandledNet returns the network rights Landlock restricts at the
// ABI: TCP bind and connect from ABI 4, UDP from ABI 10.
func LandlockHandledNet(abi int) landlock.AccessNetSet {
	switch {
	case abi < 4:
		return 0
	case abi < 10:
		return ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	return ll.AccessNetBindTCP | ll.AccessNetConnectTCP | ll.AccessNetBindUDP | ll.AccessNetConnectSendUDP
}

// LandlockScoped returns the IPC scopes Landlock restricts at the ABI
// (abstract Unix sockets and signals from ABI 6).
func LandlockScoped(abi int) landlock.ScopedSet {
	if abi < 6 {
		return 0
	}
	return ll.ScopeAbstractUnixSocket | ll.ScopeSignal
}

// LandlockRuleset is a Landlock rendering of a profile: one layer with
// the handled rights of the ABI and the rules granting access. It is
// data: nothing here calls the kernel. Build the ruleset from Config and
// Rules in the process that restricts (or the parent, passing the fd).
type LandlockRuleset struct {
	// ABI is the ABI rendered for (clamped to LandlockMaxABI).
	ABI int `json:"abi"`
	// HandledFS, HandledNet and Scoped are the layer's restrictions.
	HandledFS  landlock.AccessFSSet  `json:"handled_fs"`
	HandledNet landlock.AccessNetSet `json:"handled_net"`
	Scoped     landlock.ScopedSet    `json:"scoped"`
	// FS are the path rules, sorted by path; each path appears once.
	FS []LandlockRule `json:"fs"`
	// Net are the network rules (none: under network none every TCP
	// bind and connect is denied; under full the network is not handled).
	Net []LandlockNetRule `json:"net,omitempty"`
	// Fidelity is the report.
	Fidelity *Fidelity `json:"fidelity"`
}

// LandlockRule grants Access beneath Path (a directory) or on Path (a
// file).
type LandlockRule struct {
	Path   string               `json:"path"`
	Access landlock.AccessFSSet `json:"access"`
	Dir    bool                 `json:"dir"`
	// PerProcess marks /proc/self (and paths below it): it names the
	// process that opens it, so the sandboxed process must open it and
	// add the rule itself, after fork and before landlock_restrict_self.
	PerProcess bool `json:"per_process,omitempty"`
}

// LandlockNetRule allows Access on one port.
type LandlockNetRule struct {
	Port   uint16                `json:"port"`
	Access landlock.AccessNetSet `json:"access"`
}

// Config returns the go-landlock configuration of the layer (strict: not
// best effort).
func (r *LandlockRuleset) Config() landlock.Config {
	return landlock.Config{HandledAccessFS: r.HandledFS, HandledAccessNet: r.HandledNet, Scoped: r.Scoped}
}

// Rules returns the go-landlock rules, PerProcess ones excluded (see
// PerProcessRules). A path that disappeared since derivation is skipped:
// a missing path grants nothing.
func (r *LandlockRuleset) Rules() []landlock.Rule {
	var out []landlock.Rule
	for _, fr := range r.FS {
		if !fr.PerProcess {
			out = append(out, landlock.PathAccess(fr.Access, fr.Path).IgnoreIfMissing())
		}
	}
	for _, nr := range r.Net {
		if nr.Access&ll.AccessNetBindTCP != 0 {
			out = append(out, landlock.BindTCP(nr.Port))
		}
		if nr.Access&ll.AccessNetConnectTCP != 0 {
			out = append(out, landlock.ConnectTCP(nr.Port))
		}
	}
	return out
}

// PerProcessRules returns the rules the sandboxed process must add itself
// (see LandlockRule.PerProcess).
func (r *LandlockRuleset) PerProcessRules() []LandlockRule {
	var out []LandlockRule
	for _, fr := range r.FS {
		if fr.PerProcess {
			out = append(out, fr)
		}
	}
	return out
}

// Landlock renders the profile as one Landlock layer for the ABI (the
// running kernel's, or lower to check what an older kernel would lose).
// A mask inside a granted tree is rendered by granting the tree's
// children one by one, recursively down to the mask, never the tree
// whole: the split directories themselves get only the rights that
// cannot reach the mask (no new entries, removals or renames directly in
// them — reported as stricter).
func Landlock(pr *Profile, abi int) *LandlockRuleset {
	abi = min(max(abi, 0), LandlockMaxABI)
	rs := &LandlockRuleset{
		ABI:        abi,
		HandledFS:  LandlockHandledFS(abi),
		HandledNet: LandlockHandledNet(abi),
		Scoped:     LandlockScoped(abi),
		Fidelity:   &Fidelity{Backend: "landlock"},
	}
	f := rs.Fidelity
	switch pr.Network {
	case policy.NetworkFull:
		rs.HandledNet = 0
	case policy.NetworkAllowList:
		if rs.HandledNet&ll.AccessNetConnectTCP != 0 {
			rs.Net = []LandlockNetRule{{Port: ProxyPort, Access: ll.AccessNetConnectTCP}}
		}
	}
	if abi == 0 {
		f.looser("landlock", policy.ControlFSRead, "", "no Landlock: nothing is restricted", "the kernel does not support Landlock (or it is disabled)", "use Linux ≥ 5.13 with Landlock enabled, another backend, or opt into best effort", false)
		rs.HandledFS, rs.HandledNet, rs.Scoped = 0, 0, 0
		return rs
	}
	lr := &landlockRender{pr: pr, rs: rs, rules: map[string]*LandlockRule{}, dirs: map[string]Listing{}}
	for _, l := range pr.Dirs {
		lr.dirs[l.Path] = l
	}
	type grant struct {
		path    string
		access  landlock.AccessFSSet
		dir     bool
		special Special
	}
	var gs []grant
	add := func(a Access, dirAccess, fileAccess landlock.AccessFSSet) {
		if !a.Exists {
			return
		}
		acc := fileAccess
		if a.Dir {
			acc = dirAccess
		}
		if a.Special == SpecialDevice {
			acc |= ll.AccessFSIoctlDev
			acc &^= ll.AccessFSExecute
		}
		gs = append(gs, grant{path: a.Path, access: acc, dir: a.Dir, special: a.Special})
	}
	for _, a := range pr.Read {
		add(a, LandlockRead, LandlockReadFile)
	}
	for _, a := range pr.Write {
		add(a, LandlockWrite, LandlockWriteFile)
	}
	if pr.TmpDir != "" {
		gs = append(gs, grant{path: pr.TmpDir, access: LandlockWrite, dir: true})
	}
	for _, g := range gs {
		if g.special == SpecialProc {
			lr.rule(g.path, g.access, g.dir, true)
			continue
		}
		if !g.dir {
			if m, ok := lr.maskAt(g.path); ok {
				lr.rule(g.path, g.access&allowedAt(m, false), false, false)
				continue
			}
			lr.rule(g.path, g.access, false, false)
			continue
		}
		lr.split(g.path, g.access, lr.restricting(g.path, g.access, false))
	}
	for _, r := range lr.rules {
		r.Access &= rs.HandledFS
		if !r.Dir {
			r.Access &= landlockFileRights
		}
		if r.Access != 0 {
			rs.FS = append(rs.FS, *r)
		}
	}
	slices.SortFunc(rs.FS, func(a, b LandlockRule) int { return strings.Compare(a.Path, b.Path) })

	grantElements(f, pr, false)
	for _, a := range pr.Read {
		if a.Special == SpecialProc && a.Exists {
			f.exact("read "+a.Path, policy.ControlFSRead, a.Source, "added by the sandboxed process itself (PerProcessRules), since /proc/self names the opener")
			f.key(FeaturePerProcess)
		}
	}
	if pr.TmpDir != "" {
		f.exact("tmp "+pr.TmpDir, policy.ControlFSWrite, "", "private temporary directory, writable")
	} else {
		f.stricter("tmp", policy.ControlFSWrite, "", "no temporary directory is writable (/tmp is the host's and is not granted)", "Landlock has no mount namespace: the backend must create a private directory and set it with Profile.WithTmpDir (and TMPDIR)")
	}
	for _, d := range lr.splitDirs {
		f.add(d)
	}
	f.Elements = append(f.Elements, maskElements(pr, "landlock")...)
	landlockABIElements(f, pr, abi)
	return rs
}

type landlockRender struct {
	pr        *Profile
	rs        *LandlockRuleset
	rules     map[string]*LandlockRule
	dirs      map[string]Listing
	splitDirs []Element
	splitLost map[string]int // rights lost in the reported split of a directory
	splitAt   map[string]int // index in splitDirs
	maskIndex map[string]int // mask path -> index in pr.Masks
}

func bitCount(a landlock.AccessFSSet) int {
	n := 0
	for ; a != 0; a &= a - 1 {
		n++
	}
	return n
}

func (lr *landlockRender) rule(path string, acc landlock.AccessFSSet, dir, perProcess bool) {
	if acc == 0 {
		return
	}
	if r := lr.rules[path]; r != nil {
		r.Access |= acc
		return
	}
	lr.rules[path] = &LandlockRule{Path: path, Access: acc, Dir: dir, PerProcess: perProcess}
}

func (lr *landlockRender) maskAt(p string) (Mask, bool) {
	if lr.maskIndex == nil {
		lr.maskIndex = make(map[string]int, len(lr.pr.Masks))
		for i, m := range lr.pr.Masks {
			lr.maskIndex[m.Path] = i
		}
	}
	i, ok := lr.maskIndex[p]
	if !ok {
		return Mask{}, false
	}
	return lr.pr.Masks[i], true
}

// restricting returns the masks at or below dir that take some of acc
// away (strictly below only when strict is set).
func (lr *landlockRender) restricting(dir string, acc landlock.AccessFSSet, strict bool) []Mask {
	var out []Mask
	for _, m := range lr.pr.Masks {
		if !abspath.Within(m.Path, dir) || (strict && m.Path == dir) {
			continue
		}
		if acc&^allowedAt(m, m.Dir) != 0 {
			out = append(out, m)
		}
	}
	return out
}

// allowedAt returns the rights a grant may keep on the mask itself.
func allowedAt(m Mask, dir bool) landlock.AccessFSSet {
	switch {
	case !m.Exists:
		return LandlockRead &^ landlockModify // nothing exists to grant, nothing may be created
	case m.Kind == Hide:
		return 0
	case dir:
		return LandlockRead
	}
	return LandlockReadFile
}

// allowedAbove returns the rights a directory above the mask may carry:
// rights beneath a directory reach every file and directory below it,
// the mask included.
func allowedAbove(m Mask) landlock.AccessFSSet {
	switch {
	case !m.Exists:
		return LandlockRead // no creation: the placeholder path stays absent
	case m.Kind == Hide && m.Dir:
		return 0 // listing, reading or creating would reach into it
	case m.Kind == Hide:
		return ll.AccessFSReadDir // listing shows its name, not its content
	}
	return LandlockRead // read-only: no creation, removal or rename below
}

// split grants acc beneath dir except where masks take rights away.
func (lr *landlockRender) split(dir string, acc landlock.AccessFSSet, masks []Mask) {
	if len(masks) == 0 {
		lr.rule(dir, acc, true, false)
		return
	}
	if m, ok := lr.maskAt(dir); ok && slices.ContainsFunc(masks, func(x Mask) bool { return x.Path == dir }) {
		acc &= allowedAt(m, true)
		if acc == 0 || !m.Exists {
			return // hidden, or a placeholder: nothing to grant here
		}
		masks = lr.restricting(dir, acc, true)
		if len(masks) == 0 {
			lr.rule(dir, acc, true, false)
			return
		}
	}
	keep := acc
	for _, m := range masks {
		if m.Path != dir {
			keep &= allowedAbove(m)
		}
	}
	lr.rule(dir, keep, true, false)
	if lost := acc &^ keep; lost != 0 {
		lr.reportSplit(dir, acc, keep, masks)
	}
	l, ok := lr.dirs[dir]
	if !ok || l.Err != "" {
		if keep != acc {
			reason := "it was not listed at derivation"
			if l.Err != "" {
				reason = "it could not be listed: " + l.Err
			}
			lr.splitDirs = append(lr.splitDirs, Element{Class: Stricter, Subject: "split " + dir, Control: policy.ControlFSRead,
				Detail: fmt.Sprintf("nothing below %s is granted", dir), Reason: reason})
		}
		return
	}
	for _, e := range l.Entries {
		if e.Type == TypeSymlink {
			continue // never grant through a link: its target is granted (or not) on its own
		}
		cp := abspath.Join(dir, e.Name)
		var sub []Mask
		for _, m := range masks {
			if abspath.Within(m.Path, cp) {
				sub = append(sub, m)
			}
		}
		switch {
		case e.Type == TypeDir:
			lr.split(cp, acc, sub)
		case len(sub) > 0:
			lr.rule(cp, acc&landlockFileRights&allowedAt(sub[0], false), false, false)
		default:
			lr.rule(cp, acc&landlockFileRights, false, false)
		}
	}
}

func (lr *landlockRender) reportSplit(dir string, acc, keep landlock.AccessFSSet, masks []Mask) {
	// One element per directory, for the widest grant split there.
	lost := bitCount(acc &^ keep)
	i, seen := lr.splitAt[dir]
	if seen && lr.splitLost[dir] >= lost {
		return
	}
	if lr.splitLost == nil {
		lr.splitLost, lr.splitAt = map[string]int{}, map[string]int{}
	}
	lr.splitLost[dir] = lost
	var what []string
	if acc&landlockCreate != 0 && keep&landlockCreate == 0 {
		what = append(what, "no new entries")
	}
	if acc&(ll.AccessFSRemoveFile|ll.AccessFSRemoveDir|ll.AccessFSRefer) != 0 && keep&(ll.AccessFSRemoveFile|ll.AccessFSRemoveDir|ll.AccessFSRefer) == 0 {
		what = append(what, "no removals or renames")
	}
	if acc&ll.AccessFSReadDir != 0 && keep&ll.AccessFSReadDir == 0 {
		what = append(what, "it cannot be listed")
	}
	if acc&ll.AccessFSReadFile != 0 && keep&ll.AccessFSReadFile == 0 {
		what = append(what, "files created in it cannot be read")
	} else if acc&ll.AccessFSWriteFile != 0 && keep&ll.AccessFSWriteFile == 0 {
		what = append(what, "files created in it cannot be written")
	}
	var ms []string
	for _, m := range masks {
		if m.Path != dir {
			ms = append(ms, m.Path)
		}
		if len(ms) == 3 {
			ms = append(ms, "…")
			break
		}
	}
	e := Element{
		Class: Stricter, Subject: "split " + dir, Control: policy.ControlFSWrite,
		Detail: fmt.Sprintf("its existing entries are granted one by one; directly in %s: %s", dir, strings.Join(what, ", ")),
		Reason: fmt.Sprintf("Landlock cannot carve a mask out of a granted tree (masks below: %s)", strings.Join(ms, ", ")),
	}
	if seen {
		lr.splitDirs[i] = e
		return
	}
	lr.splitAt[dir] = len(lr.splitDirs)
	lr.splitDirs = append(lr.splitDirs, e)
}

// landlockABIElements reports what the ABI and Landlock itself cannot
// restrict.
func landlockABIElements(f *Fidelity, pr *Profile, abi int) {
	f.add(Element{Class: Exact, Subject: "landlock abi", Detail: fmt.Sprintf("rendered for ABI %d", abi)})
	if abi < 2 {
		f.stricter("refer", policy.ControlFSWrite, "", "renaming or linking files across directories is always denied", "Landlock ABI 1 has no refer right")
	}
	if abi < 3 {
		f.looser("truncate", policy.ControlFSWrite, "", "truncate(2) is not restricted: files the command may not write can be truncated where file permissions allow", fmt.Sprintf("Landlock restricts truncation from ABI 3; this is ABI %d", abi), "use Linux ≥ 6.2, another backend, or opt into best effort", false)
	}
	if abi < 5 {
		f.exact("ioctl", policy.ControlFSWrite, "", "ioctl on devices is not restricted, but only pseudo-devices (/dev/null, ...) are granted")
	}
	f.looser("metadata", policy.ControlFSMetadata, "", "stat, chdir, chmod, chown, utimes and extended attributes are not restricted: the command can see that ungranted paths exist and change the mode, owner and times of files it may not write", "Landlock does not control these operations", "use the bwrap backend, where ungranted paths do not exist", true)
	f.key(FeatureMetadata)
	if abi >= 9 {
		f.exact("unix sockets", policy.ControlNetUnix, "", "connecting to pathname Unix sockets is allowed only in write grants")
		f.key(FeatureUnixSockets)
	} else {
		f.looser("unix sockets", policy.ControlNetUnix, "", "connecting to pathname Unix sockets anywhere is not restricted (a host daemon's socket, the Docker socket among them, can be reached)", fmt.Sprintf("Landlock restricts it from ABI 9; this is ABI %d", abi), "use the bwrap backend, or a kernel with Landlock ABI ≥ 9", true)
		f.key(FeatureUnixSockets)
	}
	if abi >= 6 {
		f.exact("scopes", policy.ControlSignal, "", "abstract Unix sockets and signals are scoped to the sandbox")
	} else {
		f.looser("abstract unix sockets", policy.ControlNetAbstract, "", "abstract Unix sockets of host processes can be reached", fmt.Sprintf("Landlock scopes them from ABI 6; this is ABI %d", abi), "use Linux ≥ 6.12, the bwrap backend, or opt into best effort", false)
		f.key(FeatureAbstractUnix)
		f.looser("signals", policy.ControlSignal, "", "host processes of the same user can be signalled", fmt.Sprintf("Landlock scopes signals from ABI 6; this is ABI %d", abi), "use Linux ≥ 6.12, the bwrap backend, or opt into best effort", false)
	}
	if pr.Network == policy.NetworkFull {
		f.exact("network", policy.ControlNetTCP, "", "full: the network is not restricted")
		return
	}
	if pr.Network == policy.NetworkAllowList {
		f.exact("network", policy.ControlNetTCP, "", AllowListNetwork)
		if abi >= 4 {
			f.exact("network tcp", policy.ControlNetTCP, "", fmt.Sprintf("TCP connect only to port %d (the proxy), every bind denied", ProxyPort))
			f.key(FeatureNetTCP)
		}
		return
	}
	if abi >= 4 {
		f.exact("network tcp", policy.ControlNetTCP, "", "every TCP bind and connect is denied, loopback included")
		f.key(FeatureNetTCP)
	} else {
		f.looser("network tcp", policy.ControlNetTCP, "", "TCP is not restricted", fmt.Sprintf("Landlock restricts TCP from ABI 4; this is ABI %d", abi), "a seccomp filter denying socket(2) for families other than AF_UNIX (the backend then calls Fidelity.Mitigate), or Linux ≥ 6.7", false)
		f.key(FeatureNetTCP)
	}
	if abi >= 10 {
		f.exact("network udp", policy.ControlNetUDP, "", "every UDP bind and send is denied")
		f.key(FeatureNetUDP)
	} else {
		f.looser("network udp", policy.ControlNetUDP, "", "UDP is not restricted", fmt.Sprintf("Landlock restricts UDP from ABI 10; this is ABI %d", abi), "a seccomp filter denying socket(2) for families other than AF_UNIX (the backend then calls Fidelity.Mitigate)", false)
		f.key(FeatureNetUDP)
	}
	f.looser("network other sockets", policy.ControlNetTCP, "", "MPTCP, SCTP, ICMP (ping) and raw sockets are not restricted", "Landlock restricts TCP (and UDP from ABI 10) only", "a seccomp filter denying socket(2) for families other than AF_UNIX and IPPROTO_MPTCP (the backend then calls Fidelity.Mitigate)", false)
	f.key(FeatureNetOther)
}
