package study

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/trials"
)

// search is a sizing search that passed every rate up to capacity and
// failed at failed (0: no failing step, as when the client ended it).
func search(capacity, failed float64) SizingSearch {
	se := SizingSearch{Capacity: capacity, Confirmed: true, LimitedBy: "backend"}
	for r := 10.0; r <= capacity; r *= 2 {
		se.Steps = append(se.Steps, SizingStep{Rate: r, Pass: true})
	}
	if failed > 0 {
		se.Steps = append(se.Steps, SizingStep{Rate: failed}, SizingStep{Rate: 2 * failed})
	}
	se.Steps = append(se.Steps, SizingStep{Rate: capacity, Pass: true}, SizingStep{Rate: capacity, Pass: true, Confirm: true})
	return se
}

// sizingRun is a sizing study's result of one pool size per element of
// searches (workers=1, 2 ...), each point with those searches, and its
// series with a trial per search, as the runner writes them.
func sizingRun(searches ...[]SizingSearch) *Result {
	r := &Result{Declaration: Declaration{Question: "How many?"}, Sizing: &Sizing{Factor: "workers", Objectives: []string{"p99<=200ms"}}}
	for i, ses := range searches {
		label := "workers=" + string(rune('1'+i))
		p := SizingPoint{Label: label, Series: i, Level: string(rune('1' + i)), Searches: ses}
		st := Step{Concurrency: 256}
		for _, se := range ses {
			st.Trials = append(st.Trials, trials.Trial{RequestsPerSecond: se.Capacity, P50Ms: 20, P99Ms: 30, MaxMs: 40, MeanMs: 20,
				Finished: 100, Seconds: 2, ClientCPUMeasured: true})
			st.Complete += 100
		}
		r.Sizing.Points = append(r.Sizing.Points, p)
		r.Series = append(r.Series, Series{Label: label, Steps: []Step{st}})
	}
	r.Sizing.Summarize()
	return r
}

// TestCompareSizing: two sizing studies are paired by pool size, and each
// pool size's capacity gets a verdict from the searches when they are too
// few for the test: slower where every search of the newer failed at a
// rate every search of the older sustained and the medians differ beyond
// the knee's noise; none where the searches overlap or the difference is
// within that noise.
func TestCompareSizing(t *testing.T) {
	older := sizingRun([]SizingSearch{search(47.5, 48.7)}, []SizingSearch{search(97.5, 100)})
	for _, tc := range []struct {
		name  string
		older *Result // nil: older
		newer *Result
		want  [2]string // the req/s verdicts at workers=1 and 2
		note  bool
	}{
		{"half the capacity", nil, sizingRun([]SizingSearch{search(23.7, 25)}, []SizingSearch{search(48.7, 50)}),
			[2]string{trials.Slower, trials.Slower}, true},
		{"twice the capacity", nil, sizingRun([]SizingSearch{search(95, 100)}, []SizingSearch{search(195, 200)}),
			[2]string{trials.Faster, trials.Faster}, true},
		{"the same", nil, sizingRun([]SizingSearch{search(46.2, 47.5)}, []SizingSearch{search(97.5, 100)}),
			[2]string{trials.NoVerdict, trials.NoVerdict}, false},
		// 7% lower, and failing where the older passed: within the knee's
		// noise, no verdict.
		{"within noise", nil, sizingRun([]SizingSearch{search(44, 45)}, []SizingSearch{search(90, 92.5)}),
			[2]string{trials.NoVerdict, trials.NoVerdict}, false},
		// Half the median, but one search of the newer never failed (the
		// client ended it) above the older's capacity: no verdict at 1.
		{"a search unbounded", nil, sizingRun([]SizingSearch{search(20, 21), search(22, 0), search(21, 22)}, []SizingSearch{search(48.7, 50)}),
			[2]string{trials.NoVerdict, trials.Slower}, true},
		// One search of the older (cut short by a stall, say) sustained
		// less than a search of the newer failed at: no verdict at 1.
		{"overlap", sizingRun([]SizingSearch{search(47.5, 48.7), search(31, 32), search(46.2, 47.5)}, []SizingSearch{search(97.5, 100)}),
			sizingRun([]SizingSearch{search(30, 32), search(31, 33)}, []SizingSearch{search(48.7, 50)}),
			[2]string{trials.NoVerdict, trials.Slower}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := older
			if tc.older != nil {
				base = tc.older
			}
			cs, notes := CompareRuns(base, tc.newer, 0.02)
			got := map[string]string{}
			for _, c := range cs {
				if c.Metric == trials.MetricRequestsPerSecond {
					if c.Series != c.Baseline {
						t.Errorf("%s paired with %s", c.Series, c.Baseline)
					}
					got[c.Series] = c.Verdict
				}
			}
			if len(got) != 2 || got["workers=1"] != tc.want[0] || got["workers=2"] != tc.want[1] {
				t.Errorf("verdicts %v, want workers=1 %q and workers=2 %q", got, tc.want[0], tc.want[1])
			}
			if has := strings.Contains(strings.Join(notes, "\n"), "the verdict is the searches'"); has != tc.note {
				t.Errorf("notes %q: the searches' note %v, want %v", notes, has, tc.note)
			}
		})
	}
	// A pool size searched in one study only is not compared.
	newer := sizingRun([]SizingSearch{search(23.7, 25)})
	cs, notes := CompareRuns(older, newer, 0.02)
	for _, c := range cs {
		if c.Series != "workers=1" {
			t.Errorf("compared %s", c.Series)
		}
	}
	if !strings.Contains(strings.Join(notes, "\n"), `series "workers=2" is in the older study only`) {
		t.Errorf("notes: %q", notes)
	}
}
