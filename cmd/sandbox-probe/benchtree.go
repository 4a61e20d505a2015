package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
)

// TreeBenchReport is the output of bench --tree --json: one BenchReport
// per generated tree, in the order given.
type TreeBenchReport struct {
	Policy string      `json:"policy"`
	Trees  []TreeBench `json:"trees"`
}

// TreeBench is the measurement on one generated tree.
type TreeBench struct {
	// Tree is the spec as given (a file count, or nm:N).
	Tree string `json:"tree"`
	// Files is how many files the tree holds, Masked how many of them the
	// policy denies.
	Files  int          `json:"files"`
	Masked int          `json:"masked"`
	Report *BenchReport `json:"report"`
}

// benchTrees generates each tree, measures in it, removes it, and prints
// the scaling table.
func (a *app) benchTrees(ctx context.Context, o *benchOptions, list []*backend, trees []treeSpec) error {
	rep := &TreeBenchReport{Policy: treePolicyName}
	if o.pf.given() {
		rep.Policy = strings.Join(o.pf.files, ", ")
	}
	failed := 0
	for _, t := range trees {
		dir, err := os.MkdirTemp("", "cordon-bench-tree-")
		if err != nil {
			return setupError(err)
		}
		prog := newProgress(a.stderr)
		prog.show(fmt.Sprintf("[bench] generating tree %s", t))
		err = makeTree(dir, t)
		prog.clear()
		if err != nil {
			os.RemoveAll(dir)
			return setupError(fmt.Errorf("bench: generating tree %s: %w", t, err))
		}
		files, masked, err := countTree(dir)
		if err != nil {
			os.RemoveAll(dir)
			return setupError(err)
		}
		o.pf.root = dir
		ws, err := o.pf.load()
		if err == nil && !o.pf.given() {
			ws.policy, ws.source = treePolicy(), treePolicyName
		}
		var r *BenchReport
		var nf int
		if err == nil {
			r, nf, err = a.measure(ctx, o, list, ws)
		}
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
		failed += nf
		rep.Trees = append(rep.Trees, TreeBench{Tree: t.String(), Files: files, Masked: masked, Report: r})
	}
	if o.json {
		if err := writeJSON(a.stdout, rep); err != nil {
			return err
		}
	} else {
		a.printTrees(rep)
	}
	if failed > 0 {
		return failedf("bench: %d runner(s) failed to run `true`", failed)
	}
	return nil
}

// countTree counts the regular files under dir and those a secrets
// pattern of treePolicy names (what the generator put there).
func countTree(dir string) (files, masked int, err error) {
	err = walkFiles(dir, func(name string) {
		files++
		if name == ".env.local" || name == "token" || (len(name) > 4 && name[len(name)-4:] == ".pem") {
			masked++
		}
	})
	return files, masked, err
}

// walkFiles calls f with the base name of every regular file under dir.
func walkFiles(dir string, f func(name string)) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := walkFiles(dir+"/"+e.Name(), f); err != nil {
				return err
			}
			continue
		}
		f(e.Name())
	}
	return nil
}

// printTrees prints one row per tree: each runner's median and its ratio
// to the bare shell measured in the same run, and each backend's median
// relative to its median on the first tree.
func (a *app) printTrees(rep *TreeBenchReport) {
	p := newPalette(a.color, a.stdout)
	if len(rep.Trees) == 0 {
		return
	}
	first := rep.Trees[0].Report
	fmt.Fprintf(a.stdout, "%s `%s`, %d runs per runner after %d warm-up rounds, interleaved %s, per tree; policy: %s\n\n",
		p.bold("bench --tree:"), first.Command, first.N, first.Warmup, first.Order, rep.Policy)
	header := []string{"tree", "files", "masked"}
	var names []string
	for _, r := range first.Results {
		n := r.Name
		if r.Kind == "baseline" {
			n = "sh -c true"
		}
		names = append(names, r.Name)
		header = append(header, n)
	}
	t := &table{header: header}
	base := map[string]int64{}
	for _, tb := range rep.Trees {
		row := []cell{{text: tb.Tree}, {text: fmt.Sprint(tb.Files)}, {text: fmt.Sprint(tb.Masked)}}
		for _, n := range names {
			i := slices.IndexFunc(tb.Report.Results, func(r BenchResult) bool { return r.Name == n })
			if i < 0 || tb.Report.Results[i].Runs == 0 {
				row = append(row, cell{text: "failed", paint: p.red})
				continue
			}
			r := tb.Report.Results[i]
			txt := fmtDur(r.MedianNS)
			if r.Kind != "baseline" {
				txt += fmt.Sprintf(" (%.1fx sh", r.Ratio)
				if b, ok := base[n]; ok && b > 0 {
					txt += fmt.Sprintf(", %.2fx first tree", float64(r.MedianNS)/float64(b))
				}
				txt += ")"
			}
			if _, ok := base[n]; !ok {
				base[n] = r.MedianNS
			}
			row = append(row, cell{text: txt})
		}
		t.add(row...)
	}
	_ = t.write(a.stdout, p)
}
