package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cordon-sandbox/cordon/executor"
)

type benchOptions struct {
	pf         policyFlags
	backends   []string
	n          int
	warmup     int
	bestEffort bool
	json       bool
	trees      []string
	cpuprofile string
}

func (a *app) benchCommand() *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench [--backend ...] [-n N] [--json]",
		Short: "Measure per-command latency of `true` through each backend against bare sh -c true",
		Long: `bench measures what a backend adds to running one command: N runs of
` + "`true`" + ` through each backend's Run (a long-lived executor, as a workspace
uses it) and N runs of bare /bin/sh -c true forked by this process, all
interleaved round-robin in one run (each round starts at the next runner, so
no runner always goes first), after a few warm-up rounds. It reports the
median, the 95th percentile and the minimum per runner, and the ratio of
each median and p95 to the bare shell's.

The commands run in a fresh temporary workspace under the coding preset,
unless --root and --policy say otherwise.

Exit status: 0 measured; 1 a backend failed to run the command; 2 usage
or setup error (an unknown or unavailable backend).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.bench(cmd.Context(), o)
		},
	}
	o.pf.add(cmd, true)
	f := cmd.Flags()
	f.Lookup("root").Usage = "workspace root the commands run in; default: a fresh temporary directory"
	f.StringSliceVar(&o.backends, "backend", nil, "backends to measure, comma-separated: "+strings.Join(backendNames(), ",")+"; default: every backend available here")
	f.IntVarP(&o.n, "n", "n", 100, "measured runs per runner")
	f.IntVar(&o.warmup, "warmup", 5, "unmeasured warm-up rounds")
	f.BoolVar(&o.bestEffort, "best-effort", false, "build the backends in best-effort mode")
	f.BoolVar(&o.json, "json", false, "print the measurements as JSON")
	f.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of this process (the executors' host side) to `FILE`")
	f.StringSliceVar(&o.trees, "tree", nil, "generate trees of these sizes and report how the cost per command scales: file counts (1k, 300k), nm:N for a node_modules tree with N certificates; with the secrets policy of the README unless --policy")
	return cmd
}

// BenchReport is the output of bench --json.
type BenchReport struct {
	Command string `json:"command"`
	N       int    `json:"n"`
	Warmup  int    `json:"warmup"`
	// Order is "round-robin": every round runs each runner once.
	Order  string `json:"order"`
	Policy string `json:"policy"`
	Root   string `json:"root"`
	// Results: the bare shell first ("sh", the baseline), then each backend.
	Results []BenchResult `json:"results"`
}

// BenchResult is one runner's latencies.
type BenchResult struct {
	Name string `json:"name"`
	// Kind is "baseline" (bare /bin/sh -c true) or "backend".
	Kind     string  `json:"kind"`
	Runs     int     `json:"runs"`
	MedianNS int64   `json:"median_ns"`
	P95NS    int64   `json:"p95_ns"`
	MinNS    int64   `json:"min_ns"`
	MeanNS   int64   `json:"mean_ns"`
	Ratio    float64 `json:"ratio"`
	P95Ratio float64 `json:"p95_ratio"`
	Error    string  `json:"error,omitempty"`
}

// benchRunner runs `true` once.
type benchRunner struct {
	name string
	run  func(ctx context.Context) error
	d    []time.Duration
	err  error
}

func (a *app) bench(ctx context.Context, o *benchOptions) error {
	if o.n < 1 {
		return usageErrorf("bench: -n must be at least 1")
	}
	if o.warmup < 0 {
		return usageErrorf("bench: --warmup must not be negative")
	}
	list, err := parseBackends(o.backends)
	if err != nil {
		return err
	}
	trees, err := parseTrees(o.trees)
	if err != nil {
		return err
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return setupError(fmt.Errorf("bench: --cpuprofile: %w", err))
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return setupError(fmt.Errorf("bench: --cpuprofile: %w", err))
		}
		defer pprof.StopCPUProfile()
	}
	if len(trees) > 0 {
		if o.pf.root != "" {
			return usageErrorf("bench: --tree generates its own roots; drop --root")
		}
		return a.benchTrees(ctx, o, list, trees)
	}
	if o.pf.root == "" {
		dir, err := os.MkdirTemp("", "cordon-bench-")
		if err != nil {
			return setupError(err)
		}
		defer os.RemoveAll(dir)
		o.pf.root = dir
	}
	ws, err := o.pf.load()
	if err != nil {
		return err
	}
	rep, failed, err := a.measure(ctx, o, list, ws)
	if err != nil {
		return err
	}
	if o.json {
		if err := writeJSON(a.stdout, rep); err != nil {
			return err
		}
	} else {
		a.printBench(rep)
	}
	if failed > 0 {
		return failedf("bench: %d runner(s) failed to run `true`", failed)
	}
	return nil
}

// measure runs the bare shell and each backend round-robin in ws and
// returns the report and how many runners failed.
func (a *app) measure(ctx context.Context, o *benchOptions, list []*backend, ws *workspaceSpec) (*BenchReport, int, error) {
	bo := a.backendOptions(o.bestEffort)
	explicit := len(list) > 0
	var avs []*availability
	if explicit {
		avs = checkBackends(ctx, list, bo)
	} else {
		avs = checkBackends(ctx, nil, bo)
	}
	env := minimalEnv(ws.home)
	runners := []*benchRunner{{name: "sh", run: func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "true")
		cmd.Dir, cmd.Env = ws.root, env
		return cmd.Run()
	}}}
	for _, av := range avs {
		if !av.Available {
			if explicit {
				msg := fmt.Sprintf("bench: backend %s is unavailable: %s", av.Name, av.Reason)
				if av.Fix != "" {
					msg += " (fix: " + av.Fix + ")"
				}
				return nil, 0, setupError(errors.New(msg))
			}
			continue
		}
		b, _ := lookupBackend(av.Name)
		x, err := b.New(bo)
		if err != nil {
			return nil, 0, setupError(fmt.Errorf("bench: %w", err))
		}
		defer closeExecutor(x)
		req := &executor.Request{Command: "true", Dir: ws.root, Env: env, Timeout: 5 * time.Minute,
			Policy: ws.policy, Root: ws.root, Home: ws.home}
		if err := req.Compile(); err != nil { // compiled once, as a workspace does
			return nil, 0, setupError(fmt.Errorf("bench: %w", err))
		}
		runners = append(runners, &benchRunner{name: b.Name, run: func(ctx context.Context) error {
			res, err := x.Run(ctx, req)
			if err != nil {
				return err
			}
			if res.ExitCode != 0 {
				return fmt.Errorf("`true` exited %d: %s", res.ExitCode, oneLine(string(res.Stderr)))
			}
			return nil
		}})
	}
	prog := newProgress(a.stderr)
	k := len(runners)
	for round := 0; round < o.warmup+o.n; round++ {
		if err := ctx.Err(); err != nil {
			prog.clear()
			return nil, 0, &exitError{code: 130, err: errors.New("bench interrupted")}
		}
		if round%10 == 0 {
			if round < o.warmup {
				prog.show(fmt.Sprintf("[bench] warm-up %d/%d", round+1, o.warmup))
			} else {
				prog.show(fmt.Sprintf("[bench] round %d/%d", round-o.warmup+1, o.n))
			}
		}
		for j := 0; j < k; j++ {
			r := runners[(round+j)%k]
			if r.err != nil {
				continue
			}
			start := time.Now()
			err := r.run(ctx)
			d := time.Since(start)
			if err != nil {
				if ctx.Err() != nil {
					prog.clear()
					return nil, 0, &exitError{code: 130, err: errors.New("bench interrupted")}
				}
				r.err = err
				continue
			}
			if round >= o.warmup {
				r.d = append(r.d, d)
			}
		}
	}
	prog.clear()
	rep := &BenchReport{Command: "true", N: o.n, Warmup: o.warmup, Order: "round-robin", Policy: ws.source, Root: ws.root}
	var base BenchResult
	failed := 0
	for i, r := range runners {
		res := summarize(r)
		if i == 0 {
			res.Kind = "baseline"
			base = res
		} else {
			res.Kind = "backend"
		}
		if r.err != nil {
			failed++
		}
		if base.MedianNS > 0 && res.Runs > 0 {
			res.Ratio = round2(float64(res.MedianNS) / float64(base.MedianNS))
			res.P95Ratio = round2(float64(res.P95NS) / float64(base.P95NS))
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, failed, nil
}

// summarize computes a runner's statistics.
func summarize(r *benchRunner) BenchResult {
	res := BenchResult{Name: r.name, Runs: len(r.d)}
	if r.err != nil {
		res.Error = oneLine(r.err.Error())
	}
	if len(r.d) == 0 {
		return res
	}
	d := slices.Clone(r.d)
	slices.Sort(d)
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	res.MedianNS = int64(percentile(d, 50))
	res.P95NS = int64(percentile(d, 95))
	res.MinNS = int64(d[0])
	res.MeanNS = int64(sum / time.Duration(len(d)))
	return res
}

// percentile returns the p-th percentile of sorted d (nearest rank; the
// median of an even count is the mean of the middle two).
func percentile(d []time.Duration, p int) time.Duration {
	n := len(d)
	if p == 50 {
		if n%2 == 1 {
			return d[n/2]
		}
		return (d[n/2-1] + d[n/2]) / 2
	}
	i := int(math.Ceil(float64(p)/100*float64(n))) - 1
	return d[max(0, min(i, n-1))]
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func (a *app) printBench(rep *BenchReport) {
	p := newPalette(a.color, a.stdout)
	fmt.Fprintf(a.stdout, "%s `%s`, %d runs per runner after %d warm-up rounds, interleaved %s; %s in %s\n\n",
		p.bold("bench:"), rep.Command, rep.N, rep.Warmup, rep.Order, rep.Policy, rep.Root)
	t := &table{header: []string{"runner", "median", "p95", "min", "ratio", "p95 ratio"}}
	for _, r := range rep.Results {
		name := r.Name
		if r.Kind == "baseline" {
			name = "sh -c true (bare)"
		}
		if r.Runs == 0 {
			t.add(cell{text: name}, cell{text: "failed: " + r.Error, paint: p.red})
			continue
		}
		row := []cell{{text: name}, {text: fmtDur(r.MedianNS)}, {text: fmtDur(r.P95NS)}, {text: fmtDur(r.MinNS)},
			{text: fmt.Sprintf("%.2fx", r.Ratio)}, {text: fmt.Sprintf("%.2fx", r.P95Ratio)}}
		if r.Error != "" {
			row = append(row, cell{text: fmt.Sprintf("failed after %d runs: %s", r.Runs, r.Error), paint: p.red})
		}
		t.add(row...)
	}
	_ = t.write(a.stdout, p)
}

// fmtDur formats nanoseconds with three significant digits.
func fmtDur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.3gµs", float64(d)/float64(time.Microsecond))
	}
}
