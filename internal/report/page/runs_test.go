package page_test

// Real runs against in-process backends (fixtures), saved as the commands
// save them, for the page tests that check the page against what a run
// recorded. The runs are made with the packages above page (plan,
// execute, sweep, driver), used here only to build the page's input.

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/report/page"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// runsQuiet are the executor's options of the runs below: silent.
var runsQuiet = execute.Options{Stderr: io.Discard, Quiet: true, Observe: true}

// runsPlan builds bench's plan against url (plan.Defaults, then change:
// plan.Options.Build), -n given when change leaves no time limit.
func runsPlan(t *testing.T, url string, change func(*plan.Options)) *plan.Load {
	t.Helper()
	o := plan.Defaults(url)
	if change != nil {
		change(&o)
	}
	o.RequestsSet = o.Duration == 0
	l, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// runsSave writes d into dir/name as the commands write their JSON.
func runsSave(t *testing.T, dir, name string, d document.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := document.Write(&b, d); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runsBench runs url as bench -n n -c c does and saves its JSON as
// dir/name.
func runsBench(t *testing.T, dir, name, url string, n int64, c int) (string, *document.Run) {
	t.Helper()
	l := runsPlan(t, url, func(o *plan.Options) { o.Requests, o.Concurrency = n, c })
	run, err := execute.Run(context.Background(), l.Plan, runsQuiet)
	if err != nil {
		t.Fatal(err)
	}
	d := &document.Run{Summary: &run.Summary, Record: run.Record}
	return runsSave(t, dir, name, d), d
}

// runsSweep runs a sweep as sweep -n n -c levels [--repeat repeat]
// LABEL=URL... does (labels[i] with urls[i]) and writes what the command
// writes into dir: sweep.json, and sweep.html and sweep.png as the sweep
// draws them.
func runsSweep(t *testing.T, dir string, levels []int, n int64, repeat int, labels, urls []string) *document.Sweep {
	t.Helper()
	var series []sweep.Series
	for i, u := range urls {
		series = append(series, sweep.Series{Label: labels[i], Plan: runsPlan(t, u, func(o *plan.Options) { o.Requests = n }).Plan})
	}
	cfg := sweep.Config{Levels: levels, Requests: n, Warmup: driver.DefaultWarmup(n, 0), Options: runsQuiet}
	var tp *trials.Plan
	if repeat > 1 {
		p, err := trials.Options{Repeat: repeat, RepeatSet: true}.Build()
		if err != nil {
			t.Fatal(err)
		}
		p.Noise = 0.02
		tp = &p
		cfg.Trials = tp
	}
	res, err := sweep.Run(context.Background(), cfg, series)
	if err != nil {
		t.Fatal(err)
	}
	backends := make([]string, len(series))
	sw := cfg.Document(series, backends, res)
	if tp != nil {
		sw.SweepTrials = sweep.TrialsDocument(*tp, 0.02, labels[0], res.Series, backends, res.Notes, res.Until)
	}
	name := runsSave(t, dir, "sweep.json", &sw)
	var own, png bytes.Buffer
	if err := page.WriteOwn(&own, &sw, name, "sweep", false); err != nil {
		t.Fatal(err)
	}
	if err := report.SweepChart(&png, &sw, "png"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "sweep.html"), own.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "sweep.png"), png.Bytes(), 0o644)
	return &sw
}

// runsCapacity runs a capacity search of o as capacity does (its steps
// through the driver, after a warm-up of o.Warmup) and saves its
// capacity.json into dir.
func runsCapacity(t *testing.T, dir string, o plan.CapacityOptions) (string, capacity.JSONReport) {
	t.Helper()
	if o.Resolution == 0 {
		o.Resolution, o.ResolutionText = 0.02, "2%"
	}
	if o.MaxTime == 0 {
		o.MaxTime = 5 * time.Minute
	}
	c, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	rep := report.Capacity{Model: o.Model, Objectives: c.Config.Objectives, MaxTime: o.MaxTime}
	started := time.Now()
	ctx := context.Background()
	sched := driver.NewCapacity(ctx, c.Config)
	if _, err := driver.Run(ctx, driver.Config{Schedule: sched, Warmup: driver.Warmup{Duration: c.Warmup}, Options: runsQuiet},
		[]driver.Series{{Label: c.ShownURL(), Plan: c.Plan}}); err != nil {
		t.Fatal(err)
	}
	if rep.Result, err = sched.Result(); err != nil {
		t.Fatal(err)
	}
	env := stats.CurrentEnvironment("")
	rep.Started, rep.Ended, rep.Environment = started, time.Now(), &env
	j := rep.JSON(c.Concurrency)
	name := runsSave(t, dir, "capacity.json", &document.Capacity{JSONReport: &j})
	if len(j.Steps) == 0 {
		t.Fatalf("capacity search of no step")
	}
	return name, j
}

// runsPage renders the page of the files (as report -o PAGE FILE... does)
// into dir/name.
func runsPage(t *testing.T, dir, name string, files ...string) string {
	t.Helper()
	var rs []*page.Result
	for _, f := range files {
		r, err := page.ReadFileRedacted(f)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	var b bytes.Buffer
	if err := page.Write(&b, rs, page.Options{Generated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runsSerialCapacity runs a short closed-model capacity search on a serial
// 10 ms built-in backend (c=1 passes p99<=18ms, c=2 queues each request
// behind another and fails it) and returns the path of its capacity.json
// and the report it holds.
func runsSerialCapacity(t *testing.T, dir string) (string, capacity.JSONReport) {
	t.Helper()
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond})
	return runsCapacity(t, dir, plan.CapacityOptions{Model: capacity.ModelClosed, Confirm: 2500 * time.Millisecond, ConfirmSet: true,
		Max: 8, Load: runsCapacityLoad(srv.URL("/"), 500*time.Millisecond, "p99<=18ms", "errors<=1%")})
}

// runsCapacityLoad is the load of a capacity search's steps against url:
// bench's defaults, steps of step (-t), the objectives slo (--slo).
func runsCapacityLoad(url string, step time.Duration, slo ...string) plan.Options {
	o := plan.Defaults(url)
	o.Duration, o.TimeLimitSet, o.SLO = step, true, slo
	return o
}
