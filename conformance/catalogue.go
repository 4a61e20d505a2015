//go:build unix

package conformance

import (
	"path"
)

// layers orders the layers in Run's subtests and in the catalogue.
var layers = []Layer{Functional, Process, Filesystem, Protected, Network}

// catalogue returns every case, in order.
func catalogue() []*caseDef {
	var all []*caseDef
	all = append(all, functionalCases()...)
	all = append(all, processCases()...)
	all = append(all, fsCases()...)
	all = append(all, protectCases()...)
	all = append(all, netCases()...)
	all = append(all, proxyCases()...)
	return all
}

// Cases describes every case of the suite, in the order Run and Check run
// them.
func Cases() []CaseInfo {
	var out []CaseInfo
	for _, d := range catalogue() {
		out = append(out, d.CaseInfo)
	}
	return out
}

// SelectCases returns the cases Select(sel...) and Skip(skip...) choose,
// in catalogue order; a malformed pattern or one that matches no case is
// a *PatternError.
func SelectCases(sel, skip []string) ([]CaseInfo, error) {
	ds, err := (&options{selectPats: sel, skipPats: skip}).selected(catalogue())
	if err != nil {
		return nil, err
	}
	out := make([]CaseInfo, len(ds))
	for i, d := range ds {
		out[i] = d.CaseInfo
	}
	return out, nil
}

// selected returns the cases chosen by Select and Skip, in catalogue
// order. A pattern that is malformed or matches no case is an error, so a
// typo cannot silently select nothing.
func (o *options) selected(all []*caseDef) ([]*caseDef, error) {
	match := func(pat string, d *caseDef) (bool, error) {
		a, err := path.Match(pat, d.ID)
		if err != nil {
			return false, &PatternError{Pattern: pat, Err: err}
		}
		b, _ := path.Match(pat, string(d.Layer))
		return a || b, nil
	}
	for _, pat := range append(append([]string(nil), o.selectPats...), o.skipPats...) {
		n := 0
		for _, d := range all {
			ok, err := match(pat, d)
			if err != nil {
				return nil, err
			}
			if ok {
				n++
			}
		}
		if n == 0 {
			return nil, &PatternError{Pattern: pat, Err: ErrNoCase}
		}
	}
	var out []*caseDef
	for _, d := range all {
		keep := len(o.selectPats) == 0
		for _, pat := range o.selectPats {
			if ok, _ := match(pat, d); ok {
				keep = true
			}
		}
		for _, pat := range o.skipPats {
			if ok, _ := match(pat, d); ok {
				keep = false
			}
		}
		if keep {
			out = append(out, d)
		}
	}
	return out, nil
}
