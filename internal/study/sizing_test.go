package study

import (
	"strings"
	"testing"
)

// point is a sizing point of one search per capacity, with its memory and
// CPU at the answer.
func point(level string, workerMiB float64, backend, machine float64, caps ...float64) SizingPoint {
	p := SizingPoint{Label: "workers=" + level, Level: level}
	for i, c := range caps {
		p.Searches = append(p.Searches, SizingSearch{Round: i + 1, Capacity: c, LimitedBy: "backend",
			Answer: SizingLoad{Complete: 100, PoolPSSBytes: workerMiB * (1 << 20) * 2, PeakPSSBytes: int64(workerMiB * (1 << 20) * 2),
				WorkerPSS:    Spread{P50: workerMiB * (1 << 20), P95: workerMiB * (1 << 20), Max: workerMiB * (1 << 20)},
				BackendCores: backend, ClientCores: 0.2, MachineCores: machine, CPUPerRequestMs: 5}})
	}
	return p
}

// TestSizingAnswers checks the knee, its limit and the memory budget's
// sentence on synthetic points.
func TestSizingAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      Sizing
		level  string
		want   []string
		absent []string
	}{
		{"cores", Sizing{Factor: "workers", Setting: "pm.max_children", Objectives: []string{"p99<=100ms"}, Cores: 2,
			Points: []SizingPoint{point("1", 10, 0.9, 1.1, 190, 195, 200), point("2", 10, 1.7, 1.95, 370, 380, 390),
				point("4", 10, 1.75, 1.98, 380, 385, 395)}},
			"2", []string{"pm.max_children = 2: 380 [370, 390] req/s within p99<=100ms, 10.0 MiB per worker at p95 under load.",
				"The knee is the machine's 2 cores", "workers = 4 serves 385 [380, 395] req/s (within noise of the knee)"}, nil},
		{"still grows", Sizing{Factor: "workers", Objectives: []string{"p99<=100ms"}, Cores: 2,
			Points: []SizingPoint{point("1", 10, 0.1, 0.3, 48, 49, 50), point("2", 10, 0.2, 0.4, 97, 99, 100),
				point("4", 10, 0.4, 0.6, 190, 195, 200)}},
			"4", []string{"workers = 4: 195 [190, 200] req/s", "Capacity still grows at the largest pool measured"}, []string{"cores", "Other programs"}},
		{"shared machine", Sizing{Factor: "workers", Objectives: []string{"p99<=100ms"}, Cores: 2,
			Points: []SizingPoint{point("1", 10, 0.4, 2, 80, 40, 150), point("2", 10, 0.4, 2, 115, 121, 127),
				point("4", 10, 0.75, 2, 0, 155, 261)}},
			"4", []string{"workers = 4: 155 [0.0, 261] req/s", "Other programs kept 1.40 cores of the machine's 2 busy during the searches"}, nil},
		{"less after the knee", Sizing{Factor: "workers", Objectives: []string{"p99<=100ms"}, Cores: 2,
			Points: []SizingPoint{point("1", 10, 0.9, 1.9, 100), point("2", 10, 1.7, 1.95, 180), point("4", 10, 1.5, 1.9, 104)}},
			"2", []string{"workers = 4 serves 104 req/s (less than the knee, beyond noise)", "from 2 on, 1.95 cores were busy"}, nil},
		{"backend", Sizing{Factor: "workers", Objectives: []string{"p99<=100ms"}, Cores: 8,
			Points: []SizingPoint{point("2", 10, 0.5, 1, 100), point("4", 10, 0.6, 1, 150), point("8", 10, 0.6, 1, 152)}},
			"4", []string{"workers = 4: 150 req/s", "The knee is the backend's own limit: beyond 4"}, nil},
		{"budget", Sizing{Factor: "workers", Objectives: []string{"p99<=100ms"}, Cores: 8, MemoryBudgetBytes: 100 << 20, MemoryMargin: MemoryMargin,
			Points: []SizingPoint{point("2", 10, 0.5, 1, 100), point("4", 10, 0.6, 1, 200), point("8", 15, 0.6, 1, 400)}},
			"4", []string{"workers = 4: 200 req/s", "A 100.0 MiB budget would fit 5 workers at 15.0 MiB each at p95 under load, with a 20% margin",
				"the largest that fits is workers = 4 (the knee does not fit: set that)"}, nil},
		{"none", Sizing{Factor: "workers", Objectives: []string{"p99<=1ms"}, Cores: 2,
			Points: []SizingPoint{point("1", 10, 0.5, 1, 0), point("2", 10, 0.6, 1, 0)}},
			"", []string{"no pool size served any rate within p99<=1ms"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Summarize()
			as := tc.s.Answers()
			if len(as) != 1 {
				t.Fatalf("%d answers", len(as))
			}
			a := as[0]
			if a.Level != tc.level || len(a.Details) != len(tc.s.Points) {
				t.Errorf("level %q, %d details; want %q: %s", a.Level, len(a.Details), tc.level, a.Conclusion)
			}
			// The knee is the level to set, but where it does not fit
			// the budget.
			knee := tc.level
			if tc.name == "budget" {
				knee = "8"
			}
			if a.Knee != knee {
				t.Errorf("knee %q, want %q: %s", a.Knee, knee, a.Conclusion)
			}
			for _, w := range tc.want {
				if !strings.Contains(a.Conclusion, w) {
					t.Errorf("the conclusion lacks %q:\n%s", w, a.Conclusion)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(a.Conclusion, w) {
					t.Errorf("the conclusion has %q:\n%s", w, a.Conclusion)
				}
			}
		})
	}
}

// TestSizingClientLimit: a knee the client set is named as the client's.
func TestSizingClientLimit(t *testing.T) {
	s := Sizing{Factor: "workers", Objectives: []string{"p99<=100ms"}, Cores: 2,
		Points: []SizingPoint{point("1", 10, 0.5, 1, 100), point("2", 10, 0.5, 1, 101)}}
	s.Points[0].Searches[0].LimitedBy, s.Points[0].Searches[0].Reason = "client", "the client's CPU was at 190% of 2 cores"
	s.Summarize()
	if p := s.Points[0]; p.LimitedBy != "client" {
		t.Errorf("one search of one, held back by the client: %s", p.LimitedBy)
	}
	// One search of three held back by the client does not make it the
	// client's limit.
	s.Points[1].Searches = append(s.Points[1].Searches, s.Points[1].Searches[0], s.Points[1].Searches[0])
	s.Points[1].Searches[0].LimitedBy = "client"
	s.Summarize()
	if p := s.Points[1]; p.LimitedBy != "backend" || p.Reason != "" {
		t.Errorf("one search of three held back by the client: %s %q", p.LimitedBy, p.Reason)
	}
	a := s.Answers()[0]
	if a.Level != "1" || !strings.Contains(a.Conclusion, "The knee is the client's limit, not the backend's (the client's CPU was at 190% of 2 cores)") {
		t.Errorf("%s", a.Conclusion)
	}
}

// TestSpreadOf checks the percentiles of a spread.
func TestSpreadOf(t *testing.T) {
	var xs []float64
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	if s := SpreadOf(xs); s != (Spread{P50: 50, P95: 95, Max: 100}) {
		t.Errorf("%+v", s)
	}
	if s := SpreadOf(nil); s != (Spread{}) {
		t.Errorf("%+v", s)
	}
}
