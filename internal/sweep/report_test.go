package sweep

import (
	"testing"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// TestDocument: the saved sweep keeps the configuration's budget and stop
// rule, each series' label, backend, target and stop, an empty list for a
// series that ran no level, and the judgement's highest passing level.
func TestDocument(t *testing.T) {
	ss := []Series{series(t, "a", "fcgi://127.0.0.1:9/x", true), series(t, "b", "fcgi://127.0.0.1:9/y", false)}
	cfg := Config{Levels: []int{1, 2}, Requests: 50, Duration: 2 * time.Second, StopOnErrors: true, StopErrorRate: 0.05}
	res := Result{Elapsed: 1500 * time.Millisecond, Interrupted: true, Series: []SeriesResult{
		{Label: "a", Levels: []stats.Summary{{Concurrency: 1, Complete: 50, Requests: 50}}, Stop: &Stop{Concurrency: 1, ErrorRate: 0.5, Reason: "errors"}},
		{Label: "b"},
	}}
	sw := cfg.Document(ss, []string{"pool", ""}, res)
	if sw.RequestsPerLevel != 50 || sw.SecondsPerLevel != 2 || sw.TimeTaken != 1.5 || !sw.Interrupted ||
		sw.StopErrorRate == nil || *sw.StopErrorRate != 0.05 || len(sw.Levels) != 2 {
		t.Errorf("sweep %+v", sw)
	}
	if len(sw.Series) != 2 || sw.Series[0].Backend != "pool" || !sw.Series[0].KeepAlive || sw.Series[0].Target.URL != "fcgi://127.0.0.1:9/x" ||
		sw.Series[0].Stop == nil || sw.Series[0].Stop.Reason != "errors" {
		t.Fatalf("series %+v", sw.Series)
	}
	if sw.Series[1].Levels == nil || len(sw.Series[1].Levels) != 0 {
		t.Errorf("a series without levels: %v, want an empty list", sw.Series[1].Levels)
	}
	var none Judgement
	none.Mark(&sw)
	if sw.Series[0].SLOHighestPass != nil {
		t.Error("marked without objectives")
	}
	objs, err := capacity.ParseAll([]string{"errors<=1%"})
	if err != nil {
		t.Fatal(err)
	}
	j := Judge(res.Series, objs)
	j.Mark(&sw)
	if p := sw.Series[0].SLOHighestPass; p == nil || *p != 1 {
		t.Errorf("highest passing level %v, want 1", p)
	}
	if p := sw.Series[1].SLOHighestPass; p == nil || *p != 0 {
		t.Errorf("highest passing level of b %v, want 0", p)
	}
}

// TestTrialsDocument: the trials' part of a saved sweep keeps the plan,
// the noise and the baseline, and the sweep's notes first.
func TestTrialsDocument(t *testing.T) {
	p := trials.Plan{Repeat: 5, Precision: 0.02, MaxRepeat: 20, Seed: 7}
	st := TrialsDocument(p, 0.02, "a", nil, nil, []string{"first"}, nil)
	if st.Repeat != 5 || st.Precision != 0.02 || st.MaxRepeat != 20 || st.Seed != 7 || st.Noise != 0.02 || st.Baseline != "a" {
		t.Errorf("trials %+v", st)
	}
	if len(st.Notes) == 0 || st.Notes[0] != "first" {
		t.Errorf("notes %q", st.Notes)
	}
}
