package policyderive

import (
	"fmt"
	"strings"
)

// sbplProfile is a parsed SBPL profile of the subset SBPL emits, for the
// soundness tests: rules evaluated last match wins. (The scan engineer's
// policyderive/internal/sbplmodel is the independent evaluator; this one
// keeps the SBPL soundness test running until it lands.)
type sbplProfile struct {
	rules []sbplRule
}

type sbplRule struct {
	allow   bool
	ops     []string
	filters []*filterExpr // any matching filter matches; none: always
}

func parseSBPL(text string) (*sbplProfile, error) {
	p := &sbplProfile{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, ";") || line == "(version 1)" {
			continue
		}
		e, rest, err := parseFilter(line)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(rest) != "" {
			return nil, fmt.Errorf("trailing text %q", rest)
		}
		if e.op != "allow" && e.op != "deny" {
			return nil, fmt.Errorf("not a rule: %q", line)
		}
		r := sbplRule{allow: e.op == "allow"}
		for _, a := range e.args {
			if a.op == "symbol" {
				r.ops = append(r.ops, a.val)
			} else {
				r.filters = append(r.filters, a)
			}
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

func opMatches(ruleOp, op string) bool {
	if ruleOp == "default" || ruleOp == op {
		return true
	}
	if pre, ok := strings.CutSuffix(ruleOp, "*"); ok {
		return strings.HasPrefix(op, pre)
	}
	return false
}

// allowed evaluates op ("file-read-data", "file-write-data") on path.
func (p *sbplProfile) allowed(op, path string, params map[string]string) bool {
	allow := false
	for _, r := range p.rules {
		if !containsOp(r.ops, op) {
			continue
		}
		match := len(r.filters) == 0
		for _, f := range r.filters {
			if pathFilter(f) && f.eval(panicker{}, path, params) {
				match = true
				break
			}
		}
		if match {
			allow = r.allow
		}
	}
	return allow
}

func containsOp(ops []string, op string) bool {
	for _, o := range ops {
		if opMatches(o, op) {
			return true
		}
	}
	return false
}

// pathFilter reports whether f filters on paths (others, such as
// (target same-sandbox), never match a file operation).
func pathFilter(f *filterExpr) bool {
	switch f.op {
	case "subpath", "literal", "regex":
		return true
	case "require-all", "require-any", "require-not":
		for _, a := range f.args {
			if !pathFilter(a) {
				return false
			}
		}
		return true
	}
	return false
}

type panicker struct{}

func (panicker) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
