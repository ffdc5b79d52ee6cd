package report

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// TestTrialsTextFiguresApart: bench's text report of trials whose pooled
// requests/sec (900 requests in 3 s: 300) and median (200) differ shows
// the pooled figure in ab's report and the median under the medians,
// neither in the other's place.
func TestTrialsTextFiguresApart(t *testing.T) {
	t0 := time.Unix(1_764_556_800, 0)
	var runs []*stats.Run
	for i, n := range []int64{100, 200, 600} {
		r := &stats.Record{Schema: stats.Schema, StartedAt: stats.Wall{Time: t0.Add(time.Duration(i) * 2 * time.Second)},
			Plan: stats.Plan{Shape: stats.Shape{Concurrency: 2, Requests: n}, Target: stats.TargetInfo{URL: "http://x/"}}, Elapsed: time.Second}
		r.EndedAt = stats.Wall{Time: r.StartedAt.Add(time.Second)}
		r.Counts.Complete = n
		runs = append(runs, &stats.Run{Record: r, Summary: stats.SummaryOf(r)})
	}
	tr, err := driver.Pool(runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := TrialsText(&b, &Trials{Pooled: &tr.Pooled.Summary, Medians: &tr.Medians, Runs: len(tr.Runs), Precise: tr.Precise,
		Plan: trials.Plan{Repeat: 3, Seed: 1}}, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	ab := regexp.MustCompile(`(?m)^Requests per second:\s+(\S+) \[#/sec\] \(mean\)$`).FindStringSubmatch(out)
	med := regexp.MustCompile(`(?m)^  Requests per second:\s+(\S+) \[#/sec\]`).FindStringSubmatch(out)
	if ab == nil || ab[1] != "300.00" {
		t.Errorf("ab's requests/sec %q, want the pooled 300.00:\n%s", ab, out)
	}
	if med == nil || med[1] != "200.000" {
		t.Errorf("median requests/sec %q, want 200.000:\n%s", med, out)
	}
	if tr.Pooled.Summary.RequestsPerSecond != 300 || tr.Pooled.Summary.Repeated != nil {
		t.Errorf("the pooled run's summary changed: %v req/s", tr.Pooled.Summary.RequestsPerSecond)
	}
	// Not precise: the note names the precision and the trials.
	precise := false
	b.Reset()
	if err := TrialsText(&b, &Trials{Pooled: &tr.Pooled.Summary, Medians: &tr.Medians, Runs: len(tr.Runs), Precise: &precise,
		Plan: trials.Plan{Repeat: 3, Precision: 0.02, MaxRepeat: 3, Seed: 1}}, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "Note: the requests/sec interval is still wider than ±2% after 3 trials (--max-repeat)\n"; !bytes.HasSuffix(b.Bytes(), []byte(want)) {
		t.Errorf("want the note %q:\n%s", want, b.String())
	}
}
