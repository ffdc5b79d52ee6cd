package compare

import (
	"bytes"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// scaledTrials makes a result of n trials from the first trial of a
// saved result of trials, each trial's time that one's times slow (and
// 0.1% more per trial): its req/s divided by slow, its latencies the
// same.
func scaledTrials(t *testing.T, n int, slow float64) *document.Trials {
	t.Helper()
	src := readDoc(t, "bench-repeat.json").(*document.Trials)
	rec := src.Trials[0]
	runs := make([]*stats.Run, n)
	recs := make([]*stats.Record, n)
	ts := make([]trials.Trial, n)
	for i := range runs {
		r := *rec
		r.Elapsed = time.Duration(float64(rec.Elapsed) * slow * (1 + 0.001*float64(i)))
		runs[i] = &stats.Run{Record: &r, Summary: stats.SummaryOf(&r)}
		recs[i], ts[i] = &r, stats.TrialOf(&runs[i].Summary)
	}
	m, err := stats.MergeAs(stats.InTurn, recs...)
	if err != nil {
		t.Fatal(err)
	}
	return document.NewTrials(runs, stats.Run{Record: m, Summary: stats.SummaryOf(m)}, trials.Summarize(ts), nil, 1)
}

// savedFile is d saved and read back as compare reads a file.
func savedFile(t *testing.T, name string, d document.Result) *File {
	t.Helper()
	var b bytes.Buffer
	if err := document.Write(&b, d); err != nil {
		t.Fatal(err)
	}
	f, err := Read(name, b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestQuestionsAndDecidedVerdicts: the questions of trials run until
// decided against a saved bench result are its one level's trials, one
// per metric asked, for a run of the same setup, and none for a run that
// differs in two factors or a study; Against with the sequential rule
// judges every comparison by it, the saved side whole: 8 trials 20%
// slower against 6 saved are "slower" from round 6, of the rule's
// confidence, where the fixed-count verdict has no such round.
func TestQuestionsAndDecidedVerdicts(t *testing.T) {
	base := savedFile(t, "base.json", scaledTrials(t, 6, 1))
	run := scaledTrials(t, 8, 1.2)
	f := sweep.FactorsOf("", run.Summary)
	metrics := []string{trials.MetricRequestsPerSecond, trials.MetricP50Ms}
	qs := Questions(base, f, run.Concurrency, metrics)
	if len(qs) != 2 || qs[0].Metric != metrics[0] || qs[1].Metric != metrics[1] || len(qs[0].Baseline) != 6 || qs[0].Series != 0 {
		t.Fatalf("questions %+v: want req/s and p50 against the 6 saved trials", qs)
	}
	other := f
	other.Protocol, other.Transport = "other", "other"
	if qs := Questions(base, other, run.Concurrency, metrics); len(qs) != 0 {
		t.Errorf("a run two factors apart: %d questions, want none", len(qs))
	}
	if qs := Questions(&File{Path: "study.json", study: &study.Result{}}, f, 1, metrics); qs != nil {
		t.Errorf("a study: %d questions, want none", len(qs))
	}

	q := trials.Sequential{MinRounds: 4, MaxRounds: 20, Noise: 0.02}
	res, err := Against(base, "new.json", run, 0.02, nil, &q)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := Against(base, "new.json", run, 0.02, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Comparisons {
		if c.Confidence != q.LookConfidence() {
			t.Errorf("%s: interval of confidence %v, want the rule's %v", c.Metric, c.Confidence, q.LookConfidence())
		}
		switch c.Metric {
		case trials.MetricRequestsPerSecond:
			if c.Verdict != trials.Slower || c.DecidedAt != 5 {
				t.Errorf("req/s: %s at round %d %v, want slower at round 5 (the first look)", c.Verdict, c.DecidedAt, c.RatioCI95)
			}
			if fc := fixed.Comparisons[i]; fc.DecidedAt != 0 || fc.Confidence != 0 {
				t.Errorf("without the rule: %+v", fc)
			}
		case trials.MetricP50Ms:
			if c.Verdict != trials.Same || c.DecidedAt != 5 {
				t.Errorf("p50: %s at round %d %v, want same at round 5", c.Verdict, c.DecidedAt, c.RatioCI95)
			}
		}
	}
}
