package backend

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cordon-sandbox/cordon/policyderive"
)

// Placeholder mount points: the Registry keeps track of those a
// mount-based sandbox makes its tool create on the host: the read-only
// placeholder for .git in a fresh workspace, say, for which bubblewrap or
// the container runtime makes an empty directory to mount on. A Registry
// counts the sandboxes using each one, so that the last to end removes it
// — and only if this process created it: removing a mount point while
// another sandbox still uses it would detach that sandbox's mount.
//
// The live mount points are an input of derivation (Live, then
// policyderive.Deriver.DeriveWith): while a mount point exists, a
// derivation would otherwise see it as an empty directory and mask and
// pin paths inside it. Derive runs that derivation, and again when the
// set changed meanwhile (Gen), so that the profile a sandbox starts from
// matches the registry it acquires its placeholders in.

// Registry counts the users of placeholder mount points. The zero value
// is not usable: call New. Lock it around the check of Gen and Acquire
// (with the start that uses the result); Live, Release and InUse lock it
// themselves.
type Registry struct {
	sync.Mutex
	m   map[string]*entry
	gen uint64
}

type entry struct {
	users   int
	created bool
	mask    policyderive.Mask
}

// New returns an empty registry.
func New() *Registry { return &Registry{m: map[string]*entry{}} }

// Default is the process-wide registry every backend uses: a placeholder
// one backend's sandbox created may be used by another's (bwrap and
// docker on one workspace), and only one count can say when the last
// user is gone.
var Default = New()

// InUse reports whether a sandbox of this process uses p.
func (r *Registry) InUse(p string) bool {
	r.Lock()
	defer r.Unlock()
	e := r.m[p]
	return e != nil && e.users > 0
}

// Live returns the live mount points created by this process (each the
// placeholder mask it stands for), the input of a derivation
// (policyderive.Deriver.DeriveWith), and the registry's generation, which
// changes whenever that set does.
func (r *Registry) Live() ([]policyderive.Mask, uint64) {
	r.Lock()
	defer r.Unlock()
	return r.live(), r.gen
}

func (r *Registry) live() []policyderive.Mask {
	var live []policyderive.Mask
	for _, e := range r.m {
		if e.created && e.users > 0 {
			live = append(live, e.mask)
		}
	}
	slices.SortFunc(live, func(a, b policyderive.Mask) int { return strings.Compare(a.Path, b.Path) })
	return live
}

// Gen returns the registry's generation, which changes whenever the set
// of live mount points does. The caller holds r.
func (r *Registry) Gen() uint64 { return r.gen }

// Current reports whether the live set is still that of generation gen;
// when it is not, it returns the live set now, to derive again with. The
// caller holds r.
func (r *Registry) Current(gen uint64) ([]policyderive.Mask, bool) {
	if r.gen == gen {
		return nil, true
	}
	return r.live(), false
}

// maxDeriveAttempts bounds the derivations Derive runs unlocked.
const maxDeriveAttempts = 3

// Derive runs derive with the live mount points as input until the set
// did not change while it ran, and returns its profile with r locked, so
// that the caller acquires the placeholders it starts with against the
// same set (then unlocks). After maxDeriveAttempts changed sets it
// derives once more with r locked throughout. On an error r is not
// locked.
func (r *Registry) Derive(derive func(live []policyderive.Mask) (*policyderive.Profile, error)) (*policyderive.Profile, error) {
	for attempt := 1; ; attempt++ {
		if attempt > maxDeriveAttempts {
			r.Lock()
			pr, err := derive(r.live())
			if err != nil {
				r.Unlock()
			}
			return pr, err
		}
		live, gen := r.Live()
		pr, err := derive(live)
		if err != nil {
			return nil, err
		}
		r.Lock()
		if r.gen == gen {
			return pr, nil
		}
		r.Unlock()
	}
}

// Acquire registers the placeholders of one sandbox. A path that does not
// exist yet is marked as created by this process (the sandbox tool is
// about to create it). The caller holds r.
func (r *Registry) Acquire(masks []policyderive.Mask) {
	for _, m := range masks {
		e := r.m[m.Path]
		if e == nil {
			e = &entry{mask: m}
			if _, err := os.Lstat(m.Path); errors.Is(err, fs.ErrNotExist) {
				e.created = true
				r.gen++
			}
			r.m[m.Path] = e
		}
		e.users++
	}
}

// Release ends one sandbox's use of its placeholders and removes those no
// sandbox uses any more that this process created (Remove: an empty
// directory only, never through a symbolic link). It returns the paths it
// could not remove, with the reason.
func (r *Registry) Release(masks []policyderive.Mask) []string {
	if len(masks) == 0 {
		return nil
	}
	r.Lock()
	defer r.Unlock()
	var left []string
	// Deepest first, so a placeholder inside another goes before it.
	for i := len(masks) - 1; i >= 0; i-- {
		p := masks[i].Path
		e := r.m[p]
		if e == nil {
			continue
		}
		if e.users--; e.users > 0 {
			continue
		}
		delete(r.m, p)
		if !e.created {
			continue
		}
		r.gen++
		if err := Remove(p); err != nil {
			left = append(left, p+": "+err.Error())
		}
	}
	return left
}
