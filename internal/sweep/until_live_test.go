package sweep_test

import (
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/trials"
)

// TestLiveSweepUntilDecided: a sweep of three backends, a at 10 ms (the
// baseline), slow at 12 ms and same at 10 ms, run until decided (budget
// 20 min, at most 30 rounds): slow against a is "slower", decided by the
// sequential rule before the last round (its interval of the rule's
// confidence), and slow stops running once decided; same against a gets
// "same" or "undecided", never a direction, on any metric. The saved
// sweep and the text say why the rounds ended and how many pairs were
// decided. A busy machine can spread the trials past what 30 rounds
// decide: the sweep is then run once more (a broken rule fails both
// times). (The flags' errors: cmd/backbench's TestSweepUntilErrors and
// internal/trials' TestUntilOptionsWords.)
func TestLiveSweepUntilDecided(t *testing.T) {
	sweepDocOnce(t)
	if testing.Short() {
		t.Skip("runs rounds until decided (-short)")
	}
	// The backends run in processes of their own, as a real deployment's
	// do: in the test's process their scheduling mixes with the client's.
	start := func(name string, delay time.Duration) string { return name + "=" + liveServeProcess(t, delay) }
	urls := []string{start("a", 10*time.Millisecond), start("slow", 12*time.Millisecond), start("same", 10*time.Millisecond)}
	var r sweepDocRun
	var slow trials.Comparison
	for try := 1; try <= 2; try++ {
		tp, err := trials.Options{Repeat: 1, Until: trials.UntilDecided, Budget: 20 * time.Minute, BudgetSet: true,
			MaxRepeat: 30, MaxRepeatSet: true}.Build()
		if err != nil {
			t.Fatal(err)
		}
		tp.Noise = 0.02
		r = runSweepDoc(t, sweepDocOptions(30, "1", urls...), &tp)
		sweepDocFiles(t, r.sw)
		for _, c := range r.sw.SweepTrials.Comparisons {
			if c.Series == "same" && trials.Directional(c.Verdict) {
				t.Fatalf("10 ms against 10 ms: %s %s %v (try %d)\n%s", c.Metric, c.Verdict, c.RatioCI95, try, r.text)
			}
			if c.Series == "slow" && c.Metric == trials.MetricRequestsPerSecond {
				slow = c
			}
		}
		if slow.Verdict == trials.Slower {
			break
		}
		t.Logf("try %d: 12 ms against 10 ms: %s %v (decided at round %d, withdrawn %v, p %.3g), stopping %+v",
			try, slow.Verdict, slow.RatioCI95, slow.DecidedAt, slow.Withdrawn, slow.PValue, r.sw.SweepTrials.Stopping)
	}
	st := r.sw.SweepTrials
	if slow.Verdict != trials.Slower || slow.DecidedAt < trials.DefaultMinRounds || slow.DecidedAt >= 30 {
		t.Fatalf("12 ms against 10 ms: %s, decided at round %d: want slower before round 30\n%s", slow.Verdict, slow.DecidedAt, r.text)
	}
	q := trials.Sequential{MinRounds: 4, MaxRounds: 30}
	if slow.Confidence != q.LookConfidence() {
		t.Errorf("interval of confidence %v: want the sequential rule's %v", slow.Confidence, q.LookConfidence())
	}
	if st.Until != "decided" || st.Repeat != 4 || st.MaxRepeat != 30 || st.BudgetSeconds != 1200 {
		t.Errorf("sweep.json: until %q, repeat %d, max_repeat %d, budget %v", st.Until, st.Repeat, st.MaxRepeat, st.BudgetSeconds)
	}
	u := st.Stopping
	if u == nil || u.Pairs != 2 || u.Decided < 1 || u.Rounds > 30 ||
		(u.Stopped != trials.StoppedDecided && u.Stopped != trials.StoppedMaxRepeat) ||
		(u.Stopped == trials.StoppedDecided) != (u.Decided == 2) {
		t.Fatalf("stopping %+v: want 2 pairs, 1 or 2 decided, stopped decided when both are, else max_repeat", u)
	}
	trialsOf := map[string]int{}
	for _, s := range r.sw.Series {
		trialsOf[s.Label] = len(s.Levels[0].Trials)
	}
	if trialsOf["slow"] != slow.DecidedAt || trialsOf["a"] < trialsOf["slow"] || trialsOf["a"] != u.Rounds {
		t.Errorf("trials %v, slow decided at round %d, %d rounds: slow should stop once decided, a run every round", trialsOf, slow.DecidedAt, u.Rounds)
	}
	text := strings.Join(strings.Fields(r.text), " ")
	if !strings.Contains(text, "rounds until decided: ") || !strings.Contains(text, "pairs (a pair at a level, by its req/s) decided") ||
		!strings.Contains(text, "rounds until every pair is decided (the first 4 every series, at most 30 per level, within 20 min)") {
		t.Errorf("the text does not say how the rounds went:\n%s", text)
	}
}
