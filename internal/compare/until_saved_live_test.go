package compare_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/compare"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// liveUntilRun is a bench run of trials until decided against a saved
// baseline, as bench --until decided --against FILE makes it.
type liveUntilRun struct {
	doc  *document.Trials
	res  *document.Comparison
	text string
}

// liveUntil runs the bench o with trials until decided (tp's first
// rounds and most trials) against the saved file base, on the metrics of
// rules (req/s without any): the questions of the rounds
// (compare.Questions), the trials (driver.RunTrials), then the
// comparison with the sequential rule's verdicts (compare.Against) and
// bench's text (report.TrialsText, then "Against" and compare's text).
func liveUntil(t *testing.T, base string, o plan.Options, topts trials.Options, rules string) liveUntilRun {
	t.Helper()
	l, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topts.Build()
	if err != nil {
		t.Fatal(err)
	}
	tp.Noise = 0.02
	bf, err := compare.Load(base)
	if err != nil {
		t.Fatal(err)
	}
	var rs []gate.Rule
	if rules != "" {
		if rs, err = gate.Parse(rules); err != nil {
			t.Fatal(err)
		}
	}
	metrics := gate.Metrics(rs)
	if len(metrics) == 0 {
		metrics = []string{trials.MetricRequestsPerSecond}
	}
	f := sweep.PlanFactors(l.Plan)
	qs := compare.Questions(bf, f, l.Plan.Concurrency, metrics)
	if len(qs) == 0 {
		t.Fatalf("nothing in %s pairs with the run", base)
	}
	q := tp.Sequential()
	q.Saved = trials.SavedBaseline
	tp.Saved = qs
	tr, err := driver.RunTrials(t.Context(), l.Plan, &tp, liveQuiet)
	if err != nil {
		t.Fatal(err)
	}
	d := document.NewTrials(tr.Runs, tr.Pooled, tr.Medians, tr.Precise, tp.Seed)
	d.SetUntil(tp, tr.Until)
	res, err := compare.Against(bf, "this run", d, 0.02, rs, &q)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.TrialsText(&b, &report.Trials{Pooled: &tr.Pooled.Summary, Medians: &tr.Medians, Runs: len(tr.Runs),
		Precise: tr.Precise, Plan: tp}, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\nAgainst %s:\n", base)
	if err := report.CompareText(&b, res, report.DefaultWidth); err != nil {
		t.Fatal(err)
	}
	return liveUntilRun{doc: d, res: res, text: b.String()}
}

// TestLiveBenchUntilDecided: a bench of a 12 ms backend with 4 first
// trials, until decided against a saved run of a 10 ms one (6 trials), at
// most 12, adds trials until its comparisons (req/s and p50, the gate's
// metrics) are decided: "slower" and "higher", before the last trial,
// the gate tripped on them, and the report says after how many rounds.
// Against the 10 ms backend itself, within a budget, the saved form keeps
// until, max_repeat, budget_seconds and stopping, and the trials run are
// the rounds it says. A busy machine can spread the trials past what 12
// rounds decide (a slow request in one saved trial is enough: the saved
// side does not grow): the baseline is then saved and the run made once
// more (a broken rule fails both times). Few requests a trial, two at a
// time, keep it short. (The flags and their errors: cmd/backbench's
// TestBenchUntilErrors.)
func TestLiveBenchUntilDecided(t *testing.T) {
	liveOnce(t)
	if testing.Short() {
		t.Skip("runs trials until decided (-short)")
	}
	dir := t.TempDir()
	// The backends run in processes of their own, as a real deployment's
	// do: in the test's process their scheduling mixes with the client's
	// and makes the req/s of short trials too noisy to decide.
	fast := liveServeProcess(t, 10*time.Millisecond)
	slow := liveServeProcess(t, 12*time.Millisecond)
	two := func(o *plan.Options) { o.Concurrency = 2 }
	q := trials.Sequential{MinRounds: 4, MaxRounds: 12}
	var r liveUntilRun
	var saved string
	decided := false
	for try := 1; try <= 2 && !decided; try++ {
		saved = liveBenchFile(t, dir, "saved.json", liveBench(fast, 30, two), 6, "")
		r = liveUntil(t, saved, liveBench(slow, 30, two), trials.Options{Repeat: 4, RepeatSet: true, Until: trials.UntilDecided,
			MaxRepeat: 12, MaxRepeatSet: true}, "req/s slower, p50 higher")
		rows := map[string]string{}
		for _, l := range strings.Split(r.text, "\n") {
			if f := strings.Fields(l); len(f) > 2 && (f[0] == "req/s" || f[0] == "p50") {
				rows[f[0]] = l
			}
		}
		decided = r.res.Gate.Status == gate.Tripped && strings.Contains(rows["req/s"], " slower") && strings.Contains(rows["p50"], " higher") &&
			strings.Contains(r.text, "every comparison with the saved run decided after ")
		if !decided {
			t.Logf("try %d: gate %s, req/s %q, p50 %q", try, r.res.Gate.Status, rows["req/s"], rows["p50"])
		}
	}
	if !decided {
		t.Fatalf("12 ms against a saved 10 ms: want slower and higher, decided, the gate tripped:\n%s", r.text)
	}
	flat := strings.Join(strings.Fields(r.text), " ")
	var k int
	if i := strings.Index(flat, "decided after "); i < 0 || func() bool { _, err := fmt.Sscanf(flat[i:], "decided after %d trials", &k); return err != nil }() || k < 4 || k >= 12 {
		t.Errorf("decided after %d trials: want from 4 to before the most, 12\n%s", k, r.text)
	}
	for _, want := range []string{
		"Trials: trials until the comparisons with the saved run (by req/s and p50) are decided (the first 4, at most 12)",
		fmt.Sprintf("Median of %d trials", k),
		"2 of 2 comparisons with the saved run (by req/s and p50) decided",
		"ratio [" + trials.ConfidenceText(q.LookConfidence()) + " interval]",
		"tripped: req/s slower",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the report does not say %q:\n%s", want, r.text)
		}
	}

	// Against the baseline's own backend, within a budget: the saved form.
	same := liveUntil(t, saved, liveBench(fast, 30, two), trials.Options{Repeat: 1, Until: trials.UntilDecided,
		MaxRepeat: 5, MaxRepeatSet: true, Budget: 5 * time.Minute, BudgetSet: true}, "")
	data, err := os.ReadFile(liveSave(t, dir, "same.json", same.doc))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Until     string            `json:"until"`
		MaxRepeat int               `json:"max_repeat"`
		Budget    float64           `json:"budget_seconds"`
		Stopping  *trials.Stopping  `json:"stopping"`
		Trials    []json.RawMessage `json:"trials"`
		Notes     []string          `json:"notes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	u := doc.Stopping
	if doc.Until != "decided" || doc.MaxRepeat != 5 || doc.Budget != 300 || u == nil || u.Pairs != 1 ||
		(u.Stopped != trials.StoppedDecided && u.Stopped != trials.StoppedMaxRepeat) || u.Rounds != len(doc.Trials) || u.Rounds < 4 || u.Rounds > 5 {
		t.Errorf("until %q, max_repeat %d, budget_seconds %v, stopping %+v, %d trials", doc.Until, doc.MaxRepeat, doc.Budget, u, len(doc.Trials))
	}
	if !strings.Contains(strings.Join(doc.Notes, "\n"), "trials until decided: ") {
		t.Errorf("notes %q: none says how the trials ended", doc.Notes)
	}
}
