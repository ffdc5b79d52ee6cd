package compare_test

// The helpers of the tests that compare results saved from live runs on
// in-process backends, as compare reads them: a bench run (or its
// trials) made as the bench command makes it (plan.Options.Build, then
// execute.Run or driver.RunTrials; plan is imported only to build the
// input), or a sweep (plan.SweepOptions.Build, sweep.Run), written with
// document.Write and read back with Load, then Files, Judge and the
// renderers of internal/report.

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/compare"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// liveOnce skips a test under a second engine pass (BACKBENCH_ENGINE
// set): it tests what is made of the runs, not the load path.
func liveOnce(t *testing.T) {
	t.Helper()
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: it tests what is made of the runs, not the load path")
	}
}

// liveSpeedAttempts is how many times liveSpeedRetries tries.
const liveSpeedAttempts = 3

// liveSpeedRetries runs attempt, which measures speed and returns what
// was off, up to liveSpeedAttempts times (a stall of a shared machine
// wrecks a ratio; a broken rule fails every time).
func liveSpeedRetries(t *testing.T, attempt func() []string) {
	t.Helper()
	for i := 1; ; i++ {
		bad := attempt()
		if len(bad) == 0 {
			return
		}
		if i == liveSpeedAttempts {
			t.Fatalf("after %d attempts: %s", i, strings.Join(bad, "; "))
		}
		t.Logf("attempt %d: %s; trying again", i, strings.Join(bad, "; "))
	}
}

// liveSerialFCGI starts a serial built-in FastCGI backend answering after
// delay on a Unix socket (at path, or in a temporary directory for "").
func liveSerialFCGI(t *testing.T, delay time.Duration, path string) *fixtures.Server {
	t.Helper()
	opts := fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: delay, BodyBytes: 5}
	if path == "" {
		return fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", opts)
	}
	s, err := fixtures.Start(fixtures.ProtoFCGI, "unix", path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// liveBench are the options of a bench of n requests at url, as its flags
// give them with -n alone; change, if not nil, sets more.
func liveBench(url string, n int64, change func(*plan.Options)) plan.Options {
	o := plan.Defaults(url)
	o.Requests, o.RequestsSet = n, true
	if change != nil {
		change(&o)
	}
	return o
}

// liveQuiet are the executor's options of a bench run, silent.
var liveQuiet = execute.Options{Stderr: io.Discard, Quiet: true, Observe: true, Version: "test"}

// liveBenchDoc runs o as the bench command does, with repeat trials
// (--repeat; 0: one run), labelled label (--label), and returns the
// result it saves.
func liveBenchDoc(t *testing.T, o plan.Options, repeat int, label string) document.Result {
	t.Helper()
	l, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	if repeat == 0 {
		run, err := execute.Run(context.Background(), l.Plan, liveQuiet)
		if err != nil {
			t.Fatal(err)
		}
		run.Summary.Label = label
		return &document.Run{Summary: &run.Summary, Record: run.Record}
	}
	tp, err := trials.Options{Repeat: repeat, RepeatSet: true, MaxRepeat: trials.DefaultMaxRepeat}.Build()
	if err != nil {
		t.Fatal(err)
	}
	tp.Noise = 0.02
	res, err := driver.RunTrials(context.Background(), l.Plan, &tp, liveQuiet)
	if err != nil {
		t.Fatal(err)
	}
	res.Pooled.Summary.Label = label
	d := document.NewTrials(res.Runs, res.Pooled, res.Medians, res.Precise, tp.Seed)
	d.SetUntil(tp, res.Until)
	return d
}

// liveSave writes d as dir/name, as bench --format json or sweep write
// it, and returns the path.
func liveSave(t *testing.T, dir, name string, d document.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := document.Write(&b, d); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// liveBenchFile runs a bench (liveBenchDoc) and saves it as dir/name.
func liveBenchFile(t *testing.T, dir, name string, o plan.Options, repeat int, label string) string {
	t.Helper()
	return liveSave(t, dir, name, liveBenchDoc(t, o, repeat, label))
}

// liveSweepDoc runs the sweep so as the sweep command does, without
// trials, and returns its saved form (sweep.json) before it is written.
func liveSweepDoc(t *testing.T, so plan.SweepOptions) *document.Sweep {
	t.Helper()
	p, err := so.Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Config
	cfg.Options = liveQuiet
	res, err := sweep.Run(context.Background(), cfg, p.Series)
	if err != nil {
		t.Fatal(err)
	}
	sw := cfg.Document(p.Series, p.Backends, res)
	return &sw
}

// liveSweepFile runs the sweep so (liveSweepDoc) and saves its
// sweep.json as dir/name.
func liveSweepFile(t *testing.T, dir, name string, so plan.SweepOptions) string {
	t.Helper()
	return liveSave(t, dir, name, liveSweepDoc(t, so))
}

// liveCompare reads the saved files at paths and compares them as the
// compare command does (noise 2%), judged by the gate of rules ("": no
// gate); an error of Files is returned.
func liveCompare(t *testing.T, rules string, paths ...string) (*document.Comparison, error) {
	t.Helper()
	var files []*compare.File
	for _, p := range paths {
		f, err := compare.Load(p)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		files = append(files, f)
	}
	res, err := compare.Files(files, 0.02, false)
	if err != nil {
		return nil, err
	}
	if rules != "" {
		rs, err := gate.Parse(rules)
		if err != nil {
			t.Fatal(err)
		}
		compare.Judge(res, rs)
	}
	return res, nil
}

// liveMustCompare is liveCompare that fails on an error.
func liveMustCompare(t *testing.T, rules string, paths ...string) *document.Comparison {
	t.Helper()
	res, err := liveCompare(t, rules, paths...)
	if err != nil {
		t.Fatalf("compare %v: %v", paths, err)
	}
	return res
}

// liveText is compare's text of res (width 0: --wide; else fitted).
func liveText(t *testing.T, res *document.Comparison, width int) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.CompareText(&b, res, width); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// liveGateLine is what the gate says of res in one line: its summary and
// its first finding (the command's error line; "" when it passed).
func liveGateLine(res *document.Comparison) string {
	g := res.Gate
	if g == nil || g.Status == gate.Passed {
		return ""
	}
	msg := g.Summary()
	switch {
	case len(g.Tripped) > 0:
		msg += ": " + g.Tripped[0].Line()
	case len(g.Unjudged) > 0:
		msg += ": " + g.Unjudged[0].Line()
	}
	return msg
}

// liveFind returns the comparison of series against baseline at level c
// for metric, or fails.
func liveFind(t *testing.T, cs []trials.Comparison, series, baseline string, c int, metric string) trials.Comparison {
	t.Helper()
	for _, x := range cs {
		if x.Series == series && x.Baseline == baseline && x.Concurrency == c && x.Metric == metric {
			return x
		}
	}
	t.Fatalf("no comparison of %q against %q at c=%d for %s in %+v", series, baseline, c, metric, cs)
	return trials.Comparison{}
}
