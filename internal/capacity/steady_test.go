package capacity

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

// queueSim simulates a step of known truth: requests due at a constant
// rate (the open model) served in order by c workers whose service time is
// base, plus an exponential jitter of mean jitter·base (timer overshoot),
// plus, for a share hiccup of the requests, a pause of 5 to 40 ms (a busy
// machine). It returns the step's windows as the recorder counts them:
// latency by the time due, finishes by the time done, and nothing for the
// requests not finished when the step ends.
type queueSim struct {
	workers        int
	base           time.Duration
	jitter, hiccup float64
}

// capacity is the simulated backend's true capacity in req/s: its
// workers over the mean service time.
func (q queueSim) capacity() float64 {
	mean := float64(q.base)*(1+q.jitter) + q.hiccup*float64(22500*time.Microsecond)
	return float64(q.workers) * float64(time.Second) / mean
}

func (q queueSim) run(rng *rand.Rand, rate float64, length time.Duration) ([]stats.Window, time.Duration) {
	ws := make([]stats.Window, StepWindows)
	width := length / StepWindows
	free := make([]int64, q.workers)
	interval := float64(time.Second) / rate
	for i := 0; ; i++ {
		due := int64(float64(i) * interval)
		if due >= int64(length) {
			break
		}
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		svc := float64(q.base) * (1 + q.jitter*rng.ExpFloat64())
		if rng.Float64() < q.hiccup {
			svc += float64(5*time.Millisecond) + rng.Float64()*float64(35*time.Millisecond)
		}
		done := max(free[k], due) + int64(svc)
		free[k] = done
		if done >= int64(length) {
			continue // cut off by the end of the step
		}
		w := &ws[due/int64(width)]
		w.Started++
		w.LatencySum += done - due
		ws[done/int64(width)].Finished++
	}
	return ws, width
}

// prefork4 is the built-in prefork:4 backend with 20 ms of service (at
// most 200 req/s) on a machine where 1% of the requests meet a pause;
// busy4 the same where 5% do. cpu2 is a CPU-bound pool of 2 on a 2-core
// machine shared with the client: 0.5 ms of service (about 3,600 req/s),
// a pause of 5 to 40 ms on 0.05% of the requests (about two a second,
// each of which backs up a hundred requests and more at 90%); busy2 the
// same where 0.2% do.
var (
	prefork4 = queueSim{workers: 4, base: 20 * time.Millisecond, jitter: 0.02, hiccup: 0.01}
	busy4    = queueSim{workers: 4, base: 20 * time.Millisecond, jitter: 0.05, hiccup: 0.05}
	cpu2     = queueSim{workers: 2, base: 500 * time.Microsecond, jitter: 0.3, hiccup: 0.0005}
	busy2    = queueSim{workers: 2, base: 500 * time.Microsecond, jitter: 0.3, hiccup: 0.002}
)

// judgeSimStep judges one simulated step at utilisation rho of the true
// capacity: a slow pool or a fast one, each on a quiet machine and a busy
// one (by i), over a length of 1, 2, 5 or 10 s drawn from rng.
func judgeSimStep(rng *rand.Rand, i int, rho float64) Steadiness {
	q := []queueSim{prefork4, busy4, cpu2, busy2}[i%4]
	length := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second}[rng.IntN(4)]
	rate := rho * q.capacity()
	ws, w := q.run(rng, rate, length)
	return Judge(ws, w, 0, rate)
}

// TestJudgeSteady: a steady queue (utilisation from 50% to 92% of the
// true capacity, steps of 1 to 10 s, a quiet or a busy machine) is judged
// held in at least 95% of simulated steps, and judged a growing queue
// outright in at most 1%.
func TestJudgeSteady(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 2000
	held, no := 0, 0
	for i := range n {
		rho := 0.5 + rng.Float64()*0.42
		s := judgeSimStep(rng, i, rho)
		switch s.Verdict {
		case HeldYes:
			held++
		case HeldNo:
			no++
		}
	}
	if float64(held) < 0.95*n || float64(no) > 0.01*n {
		t.Fatalf("steady queues: %d of %d held, %d judged growing; want at least 95%% held, at most 1%% growing", held, n, no)
	}
	t.Logf("steady: %d of %d held, %d growing", held, n, no)
}

// TestJudgeGrowing: a queue that grows (utilisation from 103% to 130% of
// the true capacity, on a quiet or a busy machine) is judged held in at
// most 1% of simulated steps, and from 105% is judged growing outright in
// at least 95%.
func TestJudgeGrowing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 2000
	held, no, over5, no5 := 0, 0, 0, 0
	for i := range n {
		rho := 1.03 + rng.Float64()*0.27
		s := judgeSimStep(rng, i, rho)
		switch s.Verdict {
		case HeldYes:
			held++
		case HeldNo:
			no++
		}
		if rho >= 1.05 {
			over5++
			if s.Verdict == HeldNo {
				no5++
			}
		}
	}
	if float64(held) > 0.01*n || float64(no5) < 0.95*float64(over5) {
		t.Fatalf("growing queues: %d of %d judged held (want at most 1%%); from 105%%: %d of %d judged growing (want 95%%)", held, n, no5, over5)
	}
	t.Logf("growing: %d of %d judged growing, %d unsure; from 105%%: %d of %d", no, n, n-held-no, no5, over5)
}

// TestJudgeLongerTells: a queue that grows slowly (103% utilisation,
// under the Overload a step must tell) most often cannot be told over
// 1 s, and is judged growing over the 8 s the search lengthens an unsure
// step to.
func TestJudgeLongerTells(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	caught, short := 0, 0
	rate := 1.03 * prefork4.capacity()
	for range 200 {
		ws, w := prefork4.run(rng, rate, 8*time.Second)
		if Judge(ws, w, 0, rate).Verdict == HeldNo {
			caught++
		}
		ws, w = prefork4.run(rng, rate, time.Second)
		if Judge(ws, w, 0, rate).Verdict == HeldNo {
			short++
		}
	}
	if caught < 190 || short > caught/2 {
		t.Fatalf("103%%: over 8 s %d of 200 judged growing, want at least 190; over 1 s %d", caught, short)
	}
}

// TestJudgeServed: windows whose requests finish at 90% of the asked rate
// with no latency growth are not held (the rest are still in flight: the
// backlog grows); a latency that triples is not held either; the closed
// model (rate 0) is not judged, nor are too few windows.
func TestJudgeServed(t *testing.T) {
	ws := make([]stats.Window, StepWindows)
	for i := range ws {
		ws[i] = stats.Window{Started: 18, LatencySum: 18 * int64(20*time.Millisecond), Finished: 18}
	}
	s := Judge(ws, 100*time.Millisecond, 0, 200)
	if s.Verdict != HeldNo || s.ServedRPS != 180 || s.InFlight[1] <= s.InFlight[0] {
		t.Fatalf("served 90%%: %+v", s)
	}
	grown := slices.Clone(ws)
	for i := 5; i < len(grown); i++ {
		grown[i].LatencySum *= 3
	}
	if s := Judge(grown, 100*time.Millisecond, 0, 0); s.Verdict != HeldYes || s.Judged {
		t.Fatalf("closed model: %+v, want not judged", s)
	}
	if s := Judge(grown, 100*time.Millisecond, 0, 180); s.Verdict != HeldNo || s.LatencyMs != [2]float64{20, 60} {
		t.Fatalf("open model, latency tripled in the second half: %+v", s)
	}
	if s := Judge(ws[:3], 100*time.Millisecond, 0, 200); s.Judged || s.Verdict != HeldYes {
		t.Fatalf("3 windows: %+v", s)
	}
	// A run that ended 60 ms before its last window did: 200 req/s served
	// in full through the end of the run is held, read at the run's end;
	// judged as if it had run the whole last window, it would not be.
	full := make([]stats.Window, StepWindows)
	for i := range full {
		full[i] = stats.Window{Started: 20, LatencySum: 20 * int64(20*time.Millisecond), Finished: 20}
	}
	full[9] = stats.Window{Started: 7, LatencySum: 7 * int64(20*time.Millisecond), Finished: 8}
	if s := Judge(full, 100*time.Millisecond, 940*time.Millisecond, 200); s.Verdict != HeldYes || s.ServedRPS < 196 {
		t.Fatalf("a run 60 ms short, read at its end: %+v", s)
	}
	if s := Judge(full, 100*time.Millisecond, 0, 200); s.Verdict == HeldYes {
		t.Fatalf("a run 60 ms short, read past its end: %+v", s)
	}
}
