package stats

import (
	"testing"
	"time"
)

// TestABArithmetic pins ab's quirks on a small known set: totals 1..5 ms.
func TestABArithmetic(t *testing.T) {
	var rows []RawRow
	for i, total := range []time.Duration{5_000_400, 1_000_000, 3_000_000, 4_000_000, 2_000_999} {
		rows = append(rows, RawRow{Start: int64(i), Connect: 0, Processing: total, Waiting: total / 2, Total: total})
	}
	ct, pct := abArithmetic(rows)
	// µs: 1000 2000 3000 4000 5000 (truncated). Odd count: the median
	// averages elements 2 and 3 (0-based): (3000+4000)/2 = 3500 -> 4 ms.
	if ct.Total.Median != 4 {
		t.Errorf("median %v, want ab's 4", ct.Total.Median)
	}
	// Mean: (1000+2000+3000+4000+5000)/5 = 3000 µs exactly.
	if ct.Total.Mean != 3 || ct.Total.Min != 1 || ct.Total.Max != 5 {
		t.Errorf("total %+v", ct.Total)
	}
	// Percentile p takes element n*p/100: p50 -> element 2 (3 ms), p80 ->
	// element 4 (5 ms), p66 -> element 3 (4 ms).
	for k, want := range map[string]float64{"50": 3, "66": 4, "80": 5, "99": 5, "100": 5} {
		if pct[k] != want {
			t.Errorf("p%s = %v, want %v", k, pct[k], want)
		}
	}
	// An even count takes element n/2.
	ct, _ = abArithmetic(rows[:4])
	if ct.Total.Median != 4 { // sorted 1000 2000 4000 5000 -> element 2 = 4000
		t.Errorf("even median %v", ct.Total.Median)
	}
}
