package compare

import (
	"bytes"
	"context"
	"github.com/backbench/backbench/internal/stats"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
	"github.com/backbench/backbench/sockets"
)

// savedPlan is a bench plan against url, as the command line builds it.
func savedPlan(t *testing.T, url string, change func(*execute.Plan)) *execute.Plan {
	t.Helper()
	tgt, err := sockets.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	p := &execute.Plan{Shape: stats.Shape{Concurrency: 2, Requests: 40}, Target: tgt, KeepAlive: true, Timeout: 5 * time.Second, Method: "GET"}
	if change != nil {
		change(p)
	}
	return p
}

// quiet are the executor's options of the runs below: bench's, silent.
var quiet = execute.Options{Stderr: io.Discard, Quiet: true, Observe: true, Window: 10 * time.Millisecond}

// benchDoc runs p as bench does and returns its result as bench holds it
// in memory before writing it: a run, or trials with repeat > 1.
func benchDoc(t *testing.T, p *execute.Plan, repeat int) document.Result {
	t.Helper()
	if repeat <= 1 {
		run, err := execute.Run(context.Background(), p, quiet)
		if err != nil {
			t.Fatal(err)
		}
		run.Summary.Label = "new"
		return &document.Run{Summary: &run.Summary, Record: run.Record}
	}
	tp := &trials.Plan{Repeat: repeat, Seed: 7}
	res, err := driver.RunTrials(context.Background(), p, tp, quiet)
	if err != nil {
		t.Fatal(err)
	}
	res.Pooled.Summary.Label = "new"
	return document.NewTrials(res.Runs, res.Pooled, res.Medians, res.Precise, tp.Seed)
}

// sweepDoc runs a sweep of two series of trials as sweep does and
// returns its saved form as sweep holds it before writing it.
func sweepDoc(t *testing.T, urls [2]string) document.Result {
	t.Helper()
	tp := &trials.Plan{Repeat: 3, Seed: 7}
	series := []sweep.Series{
		{Label: "a", Plan: savedPlan(t, urls[0], nil)},
		{Label: "b", Plan: savedPlan(t, urls[1], nil)},
	}
	cfg := sweep.Config{Levels: []int{1, 2}, Requests: 30, Options: quiet, Trials: tp}
	res, err := sweep.Run(context.Background(), cfg, series)
	if err != nil {
		t.Fatal(err)
	}
	backends := []string{"", ""}
	sw := cfg.Document(series, backends, res)
	sw.SweepTrials = sweep.TrialsDocument(*tp, 0.02, "a", res.Series, backends, nil, res.Until)
	return &sw
}

// TestAgainstAsSaved: a run compared in memory (Against) compares as its
// saved file would, written and read back (compare BASE FILE): the same
// comparison document, to the last bit of every figure, for bench runs
// (one run, trials, the open model, ab's arithmetic) and a sweep of
// trials made by the executor, so that --against and compare cannot
// drift apart.
func TestAgainstAsSaved(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{BodyBytes: 100})
	other := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 100})
	url := srv.URL("/")
	rules, err := gate.Parse("req/s slower, p99 higher")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		make func() document.Result
	}{
		{"one run", func() document.Result { return benchDoc(t, savedPlan(t, url, nil), 1) }},
		{"trials", func() document.Result { return benchDoc(t, savedPlan(t, url, nil), 3) }},
		{"open model", func() document.Result {
			return benchDoc(t, savedPlan(t, url, func(p *execute.Plan) { p.Rate = 2000 }), 3)
		}},
		{"ab arithmetic", func() document.Result {
			return benchDoc(t, savedPlan(t, url, func(p *execute.Plan) { p.ABCompat = true }), 3)
		}},
		{"sweep", func() document.Result { return sweepDoc(t, [2]string{url, other.URL("/")}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := savedFile(t, "base.json", tc.make())
			d := tc.make()
			for _, q := range []*trials.Sequential{nil, {MinRounds: 3, MaxRounds: 20, Noise: 0.02}} {
				// compare BASE FILE (Files), with the sequential rule's
				// verdicts when the run's trials ran until decided.
				want, err := compareFiles([]*File{base, savedFile(t, "new.json", d)}, 0.02, false, q)
				if err != nil {
					t.Fatal(err)
				}
				Judge(want, rules)
				got, err := Against(base, "new.json", d, 0.02, rules, q)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					var g, w bytes.Buffer
					document.Write(&g, got)
					document.Write(&w, want)
					t.Errorf("sequential %v: in memory\n%s\nwant, as saved,\n%s", q != nil, g.String(), w.String())
				}
			}
		})
	}
}
