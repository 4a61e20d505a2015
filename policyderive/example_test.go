package policyderive_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// Derive a coding profile for a small repository and see what each
// rendering does with its denied and protected paths.
func Example() {
	base, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(base)
	base, _ = filepath.EvalSymlinks(base)
	root := base + "/repo"
	os.MkdirAll(root+"/.git/hooks", 0o755)
	os.WriteFile(root+"/.env", []byte("TOKEN=x\n"), 0o600)
	os.WriteFile(root+"/main.go", nil, 0o644)

	p := policy.Coding.Policy()
	p.DeniedPaths = []string{".env*"}
	pr, err := policyderive.Derive(p, root, base, "", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range pr.Masks {
		if !strings.HasPrefix(m.Path, root+"/") {
			continue // host secrets such as /etc/shadow are masked too
		}
		what := ""
		if !m.Exists {
			what = " (placeholder: it does not exist yet)"
		}
		fmt.Println(strings.TrimPrefix(m.Path, root+"/"), m.Kind, m.Reason+what)
	}
	_, bf := policyderive.Bwrap(pr)
	_, _, sf := policyderive.SBPL(pr)
	fmt.Println("bwrap strict:", bf.Err() == nil, "seatbelt strict:", sf.Err() == nil)
	// Output:
	// .env hide denied
	// .git/config read-only protected (placeholder: it does not exist yet)
	// .git/hooks read-only protected
	// bwrap strict: true seatbelt strict: true
}
