package trials

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestFirstLookSaved: against a saved side of n trials the rule has its
// first interval (and so its first chance to decide) where the whole
// range of the pairwise ratios reaches the looks' confidence (99% at the
// looks 5, 7, 10, 14 and 20 of 4 to 20): round 7 against 4 saved trials,
// 5 against 5 or more (as for two sides that both run), 20 against 2,
// never against 1.
func TestFirstLookSaved(t *testing.T) {
	q := Sequential{MinRounds: 4, MaxRounds: 20, Noise: 0.02, Saved: SavedBaseline}
	for _, tc := range []struct{ saved, want int }{{0, 5}, {1, 0}, {2, 20}, {4, 7}, {5, 5}, {6, 5}, {10, 5}} {
		if got := q.FirstLook(tc.saved); got != tc.want {
			t.Errorf("FirstLook(%d) = %d, want %d", tc.saved, got, tc.want)
		}
	}
}

// TestDecideSaved: with a saved side, every look takes all of its trials
// and the first k of the other's, on either side of the ratio; the
// decision replays its looks as without one.
func TestDecideSaved(t *testing.T) {
	var run, saved []float64
	for i := range 20 {
		run = append(run, 800+float64(i))
	}
	for i := range 4 {
		saved = append(saved, 1000+float64(i))
	}
	q := Sequential{MinRounds: 4, MaxRounds: 20, Noise: 0.02}
	if d := q.Decide(run, saved, Faster, Slower); d.Verdict != Undecided || d.Rounds != 4 {
		t.Errorf("both sides in rounds: %+v, want undecided after 4 (the fewer)", d)
	}
	q.Saved = SavedBaseline
	d := q.Decide(run[:6], saved, Faster, Slower)
	if d.Verdict != Undecided || d.Rounds != 6 || d.Final {
		t.Errorf("6 rounds against 4 saved: %+v, want undecided, not final", d)
	}
	d = q.Decide(run, saved, Faster, Slower)
	if d.Verdict != Slower || d.Rounds != 7 || !(d.Lo > 0.79 && d.Hi < 0.82) {
		t.Errorf("20 rounds against 4 saved: %+v, want slower at 7", d)
	}
	q.Saved = SavedSeries
	d = q.Decide(saved, run, Faster, Slower)
	if d.Verdict != Faster || d.Rounds != 7 || !(d.Lo > 1.2 && d.Hi < 1.27) {
		t.Errorf("4 saved against 20 rounds: %+v, want faster at 7", d)
	}
	if d = q.Decide(nil, run, Faster, Slower); d.Verdict != Undecided {
		t.Errorf("nothing saved: %+v", d)
	}
}

// savedTrial is a trial of about rps requests/sec and p50 of 1000/rps
// ms, each within ±spread.
func savedTrial(rng *rand.Rand, rps, spread float64) Trial {
	j := func() float64 { return 1 + spread*(2*rng.Float64()-1) }
	return Trial{RequestsPerSecond: rps * j(), P50Ms: 1000 / rps * j(), MeanMs: 1000 / rps, P99Ms: 1000 / rps, MaxMs: 1000 / rps,
		Finished: 100, Seconds: 2, ClientCPUMeasured: true}
}

// TestRoundsSavedQuestions: questions against a saved run (Plan.Saved)
// run the series until each is decided, on its own metric, and no
// longer; a question the saved trials are too few to decide, or whose
// metric the trials have not (the backend's, not sampled), asks for no
// round; a series that never answered settles its questions.
func TestRoundsSavedQuestions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var saved []Trial
	for range 6 {
		saved = append(saved, savedTrial(rng, 100, 0.005))
	}
	slow := func(ran *int) func(int) (Trial, error) {
		return func(int) (Trial, error) { *ran++; return savedTrial(rng, 83, 0.005), nil }
	}
	p := Plan{Repeat: 4, MaxRepeat: 20, Until: UntilDecided, Noise: 0.02, Seed: 1,
		Saved: []SavedPair{{Series: 0, Metric: MetricRequestsPerSecond, Baseline: saved}, {Series: 0, Metric: MetricP50Ms, Baseline: saved}}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	ran := 0
	res, err := NewRounds(p).StepTrials([]int{0}, 1, slow(&ran))
	if err != nil || res.Stopped != StoppedDecided || res.Pairs != 2 || res.Decided != 2 || res.Rounds != 5 || ran != 5 {
		t.Errorf("17%% slower against 6 saved trials: %+v, %v, %d trials: want both decided at round 5", res, err, ran)
	}

	// Too few saved trials, and a metric not sampled: nothing to run for.
	p.Saved = []SavedPair{{Series: 0, Metric: MetricRequestsPerSecond, Baseline: saved[:1]}, {Series: 0, Metric: MetricBackendCPUPerRequest, Baseline: saved}}
	ran = 0
	res, err = NewRounds(p).StepTrials([]int{0}, 1, slow(&ran))
	if err != nil || res.Stopped != StoppedNoSeries || res.Decided != 0 || res.Rounds != 4 {
		t.Errorf("undecidable questions: %+v, %v: want no_series after the first 4 rounds", res, err)
	}

	// Identical sides, wide: undecided to MaxRepeat, then max_repeat.
	p.Saved, p.MaxRepeat = []SavedPair{{Series: 0, Metric: MetricRequestsPerSecond, Baseline: saved}}, 10
	res, _ = NewRounds(p).StepTrials([]int{0}, 1, func(int) (Trial, error) { return savedTrial(rng, 100, 0.2), nil })
	if res.Stopped != StoppedMaxRepeat || res.Rounds != 10 || res.Decided != 0 {
		t.Errorf("wide identical sides: %+v, want max_repeat after 10", res)
	}

	// A budget spent after the first rounds.
	p.Budget = time.Nanosecond
	res, _ = NewRounds(p).StepTrials([]int{0}, 1, func(int) (Trial, error) { return savedTrial(rng, 100, 0.2), nil })
	if res.Stopped != StoppedBudget || res.Rounds != 4 {
		t.Errorf("budget spent: %+v, want budget after 4", res)
	}

	// A series that never answered, or whose backend is gone.
	p.Budget = 0
	for name, tr := range map[string]Trial{"silent": {Finished: 10, Failed: 10}, "gone": {RequestsPerSecond: math.NaN()}} {
		res, _ = NewRounds(p).StepTrials([]int{0}, 1, func(int) (Trial, error) { return tr, nil })
		if res.Stopped != StoppedNoSeries || res.Rounds != 4 {
			t.Errorf("%s series: %+v, want no_series after 4", name, res)
		}
	}

	if err := (Plan{Repeat: 4, MaxRepeat: 20, Saved: p.Saved}).Validate(); err == nil {
		t.Error("questions against a saved run without Until: valid")
	}
}

// TestSavedWords: the plan's line and the note of trials run until
// decided against a saved run say what was decided, on which metrics.
func TestSavedWords(t *testing.T) {
	p := Plan{Repeat: 4, MaxRepeat: 12, Until: UntilDecided, Budget: time.Minute, Seed: 3,
		Saved: []SavedPair{{Metric: MetricP50Ms}, {Metric: MetricRequestsPerSecond}, {Metric: MetricP50Ms}}}
	if got, want := p.SavedMetrics(), "req/s and p50"; got != want {
		t.Errorf("SavedMetrics = %q, want %q", got, want)
	}
	if got, want := p.Describe(false), "Trials: trials until the comparisons with the saved run (by req/s and p50) are decided (the first 4, at most 12, within 60 s), in rounds shuffled with --seed 3"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	u := &Stopping{Stopped: StoppedDecided, Pairs: 2, Decided: 2, Rounds: 9, Seconds: 3, Confidence: 0.99}
	if got := u.SavedText(60, 12, p.SavedMetrics()); !strings.HasPrefix(got, "trials until decided: every comparison with the saved run decided after 9 trials, in 3 s; 2 of 2 comparisons with the saved run (by req/s and p50) decided") {
		t.Errorf("SavedText = %q", got)
	}
	u.Stopped = StoppedBudget
	if got := u.SavedText(60, 12, "req/s"); !strings.Contains(got, "the budget (60 s) was spent after 9 trials") {
		t.Errorf("SavedText = %q", got)
	}
}

// TestRoundsToDecideSaved: against a saved side as large as the rounds
// so far, an interval that both sides growing would halve in variance
// (twice the trials) cannot be decided by the one side that runs; against
// a saved side of many trials, the estimate is the one of both sides
// growing; and in between it asks for more rounds than both growing.
func TestRoundsToDecideSaved(t *testing.T) {
	// An interval [1.01, 1.09] after 6 trials: its centre at 1.05, its
	// half-width on a log scale 0.039; a direction needs it within
	// 1.05/1.02, about 0.029.
	lo, hi, n := 1.01, 1.09, 6
	both := RoundsToDecide(lo, hi, n, 0.02)
	if both < 1 {
		t.Fatalf("both sides growing: %d rounds, want some", both)
	}
	if got := RoundsToDecideSaved(lo, hi, n, 1_000_000, 0.02); got != both {
		t.Errorf("against a saved side of a million trials: %d rounds, want %d (both growing)", got, both)
	}
	if got := RoundsToDecideSaved(lo, hi, n, n, 0.02); got != -1 && got <= both {
		t.Errorf("against %d saved trials: %d rounds, want more than %d or none", n, got, both)
	}
	// Twice the variance to lose: impossible with the saved side as large.
	if got := RoundsToDecideSaved(0.9, 1.3, 6, 6, 0.02); got != -1 {
		t.Errorf("[0.9, 1.3] against 6 saved: %d rounds, want -1 (no rounds decide it)", got)
	}
}
