package stats

import (
	"math"
	"sort"
	"strconv"
)

// abArithmetic computes ab 2.4's connection times and percentile table from
// every request, with ab's own quirks (REFERENCE section 1), for users who
// compare with old ab output:
//   - times are whole microseconds (ab's APR clock);
//   - means are integer-divided in µs, then printed rounded to ms;
//   - the median of an odd count (> 1) averages elements n/2 and n/2+1
//     (0-based), one rank high;
//   - percentile p takes element n·p/100 (0-based), one rank high; 100 is
//     the last;
//   - min, max and medians are rounded to whole ms ((µs + 500) / 1000).
func abArithmetic(rows []RawRow) (ConnectionTimes, map[string]float64) {
	n := int64(len(rows))
	type us struct{ c, d, w, t int64 }
	v := make([]us, n)
	for i, r := range rows {
		v[i] = us{r.Connect.Microseconds(), r.Processing.Microseconds(), r.Waiting.Microseconds(), r.Total.Microseconds()}
	}
	phase := func(get func(us) int64) PhaseStats {
		vals := make([]int64, n)
		var sum int64
		for i := range v {
			vals[i] = get(v[i])
			sum += vals[i]
		}
		mean := sum / n // integer division, as ab
		var sd float64
		for _, x := range vals {
			a := float64(x - mean)
			sd += a * a
		}
		if n > 1 {
			sd = math.Sqrt(sd / float64(n-1))
		} else {
			sd = 0
		}
		sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
		median := vals[n/2]
		if n > 1 && n%2 == 1 {
			median = (vals[n/2] + vals[n/2+1]) / 2
		}
		return PhaseStats{
			Min:    roundMs(vals[0]),
			Mean:   float64(mean) / 1000,
			SD:     sd / 1000,
			Median: roundMs(median),
			Max:    roundMs(vals[n-1]),
		}
	}
	ct := ConnectionTimes{
		Connect:    phase(func(x us) int64 { return x.c }),
		Processing: phase(func(x us) int64 { return x.d }),
		Waiting:    phase(func(x us) int64 { return x.w }),
		Total:      phase(func(x us) int64 { return x.t }),
	}
	tot := make([]int64, n)
	for i := range v {
		tot[i] = v[i].t
	}
	sort.Slice(tot, func(i, j int) bool { return tot[i] < tot[j] })
	pct := map[string]float64{}
	for _, p := range Percentiles {
		idx := n - 1
		if p < 100 {
			idx = n * int64(p) / 100
		}
		pct[strconv.Itoa(p)] = roundMs(tot[idx])
	}
	return ct, pct
}

// roundMs is ab's ap_round_ms: whole ms from µs, rounded half up.
func roundMs(us int64) float64 { return float64((us + 500) / 1000) }
