package capacity

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// simServer is a simulated backend behind a client of ceiling requests in
// flight (open model), a function from the offered rate to what a step
// measures:
//
//   - capacity > 0: a CPU-bound server of that many requests per second,
//     each taking serviceMs alone. Below capacity its p50 is serviceMs /
//     (1 - ρ) and its p99 4.6 times that (an M/M/1 queue's); above it the
//     server serves its capacity, the ceiling fills with requests it has
//     not answered (each waits ceiling / capacity from its actual send),
//     the latency from the intended start grows through the step, and
//     the client reports the ceiling holding requests back, as
//     FromSummary does for such a step.
//   - capacity 0: a server that never saturates, each request taking
//     serviceMs: the ceiling alone limits the rate, to ceiling /
//     serviceMs; the backend answers every request it gets at once.
type simServer struct {
	capacity  float64
	serviceMs float64
	ceiling   int
	now       time.Time
	levels    []float64
}

func (f *simServer) step(_ context.Context, level float64, length time.Duration) (Measure, error) {
	f.levels = append(f.levels, level)
	f.now = f.now.Add(length)
	limit := f.capacity
	client := float64(f.ceiling) * 1000 / f.serviceMs
	if limit == 0 || client < limit {
		limit = client
	}
	if level < limit {
		rho := 0.0
		if f.capacity > 0 {
			rho = level / f.capacity
		}
		p50 := f.serviceMs / (1 - rho)
		return Measure{AchievedRPS: level, P50: p50, P90: 2.3 * p50, P99: 4.6 * p50, P999: 6.9 * p50, Max: 8 * p50, SentP50: p50}, nil
	}
	// Over the limit: requests wait for the ceiling, more through the step.
	sent := float64(f.ceiling) * 1000 / limit
	late := (level - limit) / level * length.Seconds() * 1000 / 2
	m := Measure{AchievedRPS: limit, P50: sent + late, P90: sent + 1.6*late, P99: sent + 1.9*late, P999: sent + 2*late, Max: sent + 2*late,
		SentP50:     sent,
		ClientLimit: fmt.Sprintf("the in-flight ceiling (-c %d) held back many requests while the backend answered within the objectives", f.ceiling),
		Held:        Steadiness{Verdict: HeldNo, Why: "the backend served less than asked", Judged: true}}
	if f.capacity == 0 || client < f.capacity {
		m.SentP50 = f.serviceMs // the backend answers at once
	}
	return m, nil
}

func simSearch(t *testing.T, f *simServer, step time.Duration) Result {
	t.Helper()
	objs, _ := ParseAll([]string{"p99<=100ms"})
	res, err := Search(context.Background(), Config{Objectives: objs, Start: 10, Resolution: 0.05, Step: step, Confirm: 5 * step,
		Now: func() time.Time { return f.now }}, f.step)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSearchSaturatedNarrows: a CPU-bound server of 3,000 req/s behind a
// ceiling of 256 requests in flight. Past its capacity the ceiling fills
// and the client says it held requests back; but the latency objective
// failed and the backend served less than asked, its requests waiting in
// it: the backend is saturated. The search bisects below the failing
// doubling (5,120), ends within 5% of the truth, confirms it, and names
// the backend, at 1 s and at 2 s steps alike.
func TestSearchSaturatedNarrows(t *testing.T) {
	for _, step := range []time.Duration{time.Second, 2 * time.Second} {
		t.Run(step.String(), func(t *testing.T) {
			f := &simServer{capacity: 3000, serviceMs: 0.4, ceiling: 256}
			res := simSearch(t, f, step)
			t.Logf("levels %v: capacity %g", f.levels, res.Capacity)
			if res.Capacity < 0.95*3000 || res.Capacity > 3000 {
				t.Errorf("capacity %g, want within 5%% below 3000 (levels %v)", res.Capacity, f.levels)
			}
			if !res.Confirmed || res.LimitedBy != LimitedByBackend || res.Reason != "" {
				t.Errorf("confirmed %v, limited by %q (%s); want confirmed, the backend (levels %v)", res.Confirmed, res.LimitedBy, res.Reason, f.levels)
			}
			last := res.Steps[len(res.Steps)-1]
			if !last.Confirm || !last.Pass || last.Level != res.Capacity {
				t.Errorf("last step %+v, want the passing confirmation of %g", last, res.Capacity)
			}
			for _, st := range res.Steps {
				if !st.Pass && st.ClientLimit != "" {
					t.Errorf("step at %g failed its latency objective (p99 %.1f ms) and is labelled held back by the client: %s", st.Level, st.P99, st.ClientLimit)
				}
			}
		})
	}
}

// TestSearchCeilingIsTheClient: a backend that never saturates, each
// request 20 ms, behind a ceiling of 4 in flight: at most 200 req/s get
// through. Past that the latency from the intended start grows, but the
// backend answers every request it gets in 20 ms: the client held them
// back. The search ends on a confirmed lower bound, named the client's.
func TestSearchCeilingIsTheClient(t *testing.T) {
	f := &simServer{serviceMs: 20, ceiling: 4}
	res := simSearch(t, f, time.Second)
	if res.LimitedBy != LimitedByClient || !strings.Contains(res.Reason, "in-flight ceiling") {
		t.Fatalf("limited by %q (%s), want the client's ceiling (levels %v)", res.LimitedBy, res.Reason, f.levels)
	}
	if res.Capacity <= 0 || res.Capacity > 200 || !res.Confirmed {
		t.Errorf("capacity %g (confirmed %v), want a confirmed lower bound at most 200 (levels %v)", res.Capacity, res.Confirmed, f.levels)
	}
}
