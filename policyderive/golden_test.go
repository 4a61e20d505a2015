package policyderive

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/abspath"
	"github.com/cordon-sandbox/cordon/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenTree builds the fixture every golden case uses below base.
func goldenTree(t *testing.T, base string, withRepo bool) {
	dirs := []string{"ws/src", "ws/secrets", "ws/vendor/lib/.git/hooks", "home/.ssh", "home/.aws", "home/notes", "home/.cache/go-build", "home/reference", "sys/bin", "out"}
	files := []string{"ws/src/main.go", "ws/.env", "ws/README.md", "ws/secrets/token", "ws/vendor/lib/.git/config", "ws/vendor/lib/lib.c",
		"home/.ssh/id_ed25519", "home/.aws/credentials", "home/notes/todo.txt", "home/.bashrc", "home/reference/api.md", "sys/bin/sh", "sys/shadow", "out/report.txt"}
	if withRepo {
		dirs = append(dirs, "ws/.git/hooks", "ws/.git/objects")
		files = append(files, "ws/.git/config", "ws/.git/HEAD", "ws/.git/hooks/pre-commit.sample")
	}
	for _, d := range dirs {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	for _, f := range files {
		require.NoError(t, os.WriteFile(filepath.Join(base, f), []byte("x\n"), 0o644))
	}
	require.NoError(t, os.Symlink("../home/.ssh", filepath.Join(base, "ws/ssh-link")))
}

type goldenCase struct {
	name   string
	repo   bool
	policy func(base string) *policy.Policy
	grants func(base string) []policy.Grant
}

var goldenCases = []goldenCase{
	{
		name: "coding",
		repo: true,
		policy: func(base string) *policy.Policy {
			p := policy.Coding.Policy()
			p.DeniedPaths = []string{".env*", "secrets/", "~/.ssh"}
			return p
		},
	},
	{
		name: "coding-fresh",
		policy: func(base string) *policy.Policy {
			p := policy.Coding.Policy()
			p.PathRules = []policy.PathRule{
				{Pattern: "~/.cache/go-build", Action: policy.Allow},
				{Pattern: "~/reference", Action: policy.Allow, Ops: []policy.Op{policy.Read}},
			}
			return p
		},
		grants: func(base string) []policy.Grant {
			return []policy.Grant{{Path: base + "/home/notes", Op: policy.Read}, {Path: base + "/out", Op: policy.Write}}
		},
	},
	{
		name: "readonly",
		repo: true,
		policy: func(base string) *policy.Policy {
			p := policy.Readonly.Policy()
			p.DeniedPaths = []string{"secrets/"}
			return p
		},
	},
	{
		name: "trusted",
		repo: true,
		policy: func(base string) *policy.Policy {
			p := policy.Trusted.Policy()
			p.DeniedPaths = []string{".env*", "~/.aws"}
			p.Protect.Extra = []string{"*.lock"}
			return p
		},
	},
}

func TestGolden(t *testing.T) {
	fakeRoot := t.TempDir() // the host's top-level entries, for a pod's read of /
	for _, d := range []string{"srv", "work", "usr", "proc"} {
		require.NoError(t, os.Mkdir(filepath.Join(fakeRoot, d), 0o755))
	}
	savedRoot := hostRootDir
	hostRootDir = fakeRoot
	t.Cleanup(func() { hostRootDir = savedRoot })
	saved := runDir
	runDir = t.TempDir() // no host daemon sockets in the golden files
	t.Cleanup(func() { runDir = saved })
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			goldenTree(t, base, tc.repo)
			p := tc.policy(base)
			p.System = []string{base + "/sys", "/dev/null", "/dev/zero"}
			p.Secrets = []string{base + "/sys/shadow"} // host-independent
			var grants []policy.Grant
			if tc.grants != nil {
				grants = tc.grants(base)
			}
			pr, err := Derive(p, base+"/ws", base+"/home", base+"/ws/src", grants)
			require.NoError(t, err)
			got := renderAll(t, pr, base)
			file := filepath.Join("testdata", tc.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "run go test -update to create the golden files")
			assert.Equal(t, string(want), got)
		})
		t.Run(tc.name+"/pod", func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			goldenTree(t, base, tc.repo)
			p := tc.policy(base)
			p.System = []string{base + "/sys", "/dev/null", "/dev/zero"}
			p.Secrets = []string{base + "/sys/shadow"}
			var grants []policy.Grant
			if tc.grants != nil {
				grants = tc.grants(base)
			}
			pr, err := Derive(p, base+"/ws", base+"/home", base+"/ws/src", grants)
			require.NoError(t, err)
			got := renderPod(t, ImageProfile(pr, p), base)
			file := filepath.Join("testdata", tc.name+".pod.golden")
			if *update {
				require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "run go test -update to create the golden files")
			assert.Equal(t, string(want), got)
		})
	}
}

// renderPod renders the profile as the kubernetes executor's session pod
// and NetworkPolicy (YAML) and the fidelity report, with base replaced by
// $BASE.
func renderPod(t *testing.T, pr *Profile, base string) string {
	labels := map[string]string{"cordon.dev/session": "golden"}
	r, f := PodSpec(pr, PodOptions{Image: "cordon-pod:test", PullPolicy: "Never", Helper: "/usr/local/bin/cordon-pod",
		UID: 1000, GID: 1000, AttachTimeout: "2m0s", Labels: labels})
	y, err := r.YAML("golden", "default", labels)
	require.NoError(t, err)
	out := fmt.Sprintf("== pod\n%s-- fidelity\n%s", y, f)
	return strings.ReplaceAll(out, base, "$BASE")
}

// renderAll renders the profile with every renderer, as text, with base
// replaced by $BASE and host directories outside it (which a grant of "/"
// splits in Landlock) left out, so the files do not depend on the host.
func renderAll(t *testing.T, pr *Profile, base string) string {
	host := func(p string) bool {
		return !abspath.Within(p, base) && !abspath.Within(p, "/dev") && !abspath.Within(p, "/proc") && p != "/" && p != abspath.Parent(base) && !abspath.Within(base, p)
	}
	var b strings.Builder
	q := pr.clone()
	q.Dirs = nil
	omitted := 0
	for _, d := range pr.Dirs {
		if !abspath.Within(d.Path, base) {
			omitted++
			continue
		}
		q.Dirs = append(q.Dirs, d)
	}
	js, err := json.MarshalIndent(q, "", "  ")
	require.NoError(t, err)
	fmt.Fprintf(&b, "== profile\n%s\n", js)
	if omitted > 0 {
		b.WriteString("(listings of host directories outside $BASE omitted)\n")
	}

	args, bf := Bwrap(pr)
	b.WriteString("\n== bwrap\n")
	for i := 0; i < len(args); i++ {
		line := args[i]
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			i++
			line += " " + args[i]
		}
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "-- fidelity\n%s", bf)

	rs := Landlock(pr, 7)
	fmt.Fprintf(&b, "\n== landlock abi 7\nhandled fs %v\nhandled net %v\nscoped %v\n", rs.HandledFS, rs.HandledNet, rs.Scoped)
	omitted = 0
	for _, r := range rs.FS {
		if host(r.Path) {
			omitted++
			continue
		}
		kind := "file"
		if r.Dir {
			kind = "dir"
		}
		extra := ""
		if r.PerProcess {
			extra = " per-process"
		}
		fmt.Fprintf(&b, "%s %s %v%s\n", kind, r.Path, r.Access, extra)
	}
	if omitted > 0 {
		b.WriteString("(rules for host paths outside $BASE omitted)\n")
	}
	b.WriteString("-- fidelity\n")
	for _, e := range rs.Fidelity.Elements {
		if p, ok := strings.CutPrefix(e.Subject, "split "); ok && !abspath.Within(p, base) && p != "/" {
			continue
		}
		b.WriteString(e.String() + "\n")
	}

	text, params, sf := SBPL(pr)
	fmt.Fprintf(&b, "\n== sbpl\n%s-- params\n%s\n-- fidelity\n%s", text, strings.Join(params, "\n"), sf)

	ms, of := OCIMounts(pr, OCIOptions{HostSystem: true})
	b.WriteString("\n== oci\n")
	for _, m := range ms {
		fmt.Fprintf(&b, "%s %s %s %s\n", m.Type, m.Source, m.Destination, strings.Join(m.Options, ","))
	}
	fmt.Fprintf(&b, "-- fidelity\n%s", of)
	out := strings.ReplaceAll(b.String(), base, "$BASE")
	return strings.ReplaceAll(out, literalRegex(base, reDeny).re, "$BASE")
}
