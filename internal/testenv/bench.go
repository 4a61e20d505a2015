package testenv

import (
	"slices"
	"testing"
	"time"
)

// Op is one contender of Interleave: a name for its metrics, the
// operation, and optionally the name of another op to report its median
// ratio to.
type Op struct {
	Name string
	Run  func() error
	// Base names the op this one's median is divided by ("" for none);
	// the ratio is reported as NAME/BASE.
	Base string
}

// Interleave runs every op once per iteration of b, one after the other,
// so that load on a noisy machine hits them alike, and reports each op's
// median and 95th percentile latency (NAME-median-ns, NAME-p95-ns) and
// the median ratios the ops ask for. An op's error ends the benchmark.
func Interleave(b *testing.B, ops ...Op) {
	b.Helper()
	lat := make([][]time.Duration, len(ops))
	for b.Loop() {
		for i, op := range ops {
			t0 := time.Now()
			if err := op.Run(); err != nil {
				b.Fatalf("%s: %v", op.Name, err)
			}
			lat[i] = append(lat[i], time.Since(t0))
		}
	}
	if len(lat[0]) == 0 {
		return
	}
	medians := map[string]float64{}
	for i, op := range ops {
		l := slices.Clone(lat[i])
		slices.Sort(l)
		q := func(p int) float64 { return float64(l[min(len(l)-1, len(l)*p/100)].Nanoseconds()) }
		medians[op.Name] = q(50)
		b.ReportMetric(q(50), op.Name+"-median-ns")
		b.ReportMetric(q(95), op.Name+"-p95-ns")
	}
	for _, op := range ops {
		if base, ok := medians[op.Base]; ok && base > 0 {
			b.ReportMetric(medians[op.Name]/base, op.Name+"/"+op.Base)
		}
	}
}
