package sweep_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// TestPairsOfEightSeries replays the 2008 study on in-process backends:
// FastCGI serial and evented, each on TCP and on a Unix socket (one label
// per backend), keep-alive on and off, one sweep with 5 trials (seed 8)
// over the 8 series at 2 small levels, built as backbench sweep -n 20
// -c 1,2 --repeat 5 --keepalive-modes on,off builds it (plan.SweepOptions,
// trials.Options). The comparisons and their text hold transport verdicts
// at each keep-alive mode, keep-alive verdicts on each transport and
// backend verdicts at each of the four settings, and no other pair: which
// pairs exist is checked, not which verdict they got.
func TestPairsOfEightSeries(t *testing.T) {
	var args []string
	for _, model := range []string{fixtures.ModelSerial, fixtures.ModelEvented} {
		opts := fixtures.Options{Model: fixtures.Model{Kind: model}, BodyBytes: 5}
		for _, network := range []string{"tcp", "unix"} {
			s := fixtures.StartTB(t, fixtures.ProtoFCGI, network, opts)
			args = append(args, model+"="+s.URL("/x"))
		}
	}
	load := plan.Defaults("")
	load.Requests, load.RequestsSet = 20, true
	so := plan.SweepOptions{Load: load, Args: args, KeepAliveModes: "on,off", Levels: "1,2"}
	p, err := so.Build()
	if err != nil {
		t.Fatal(err)
	}
	tp, err := trials.Options{Repeat: 5, RepeatSet: true, Seed: 8, SeedSet: true}.Build()
	if err != nil {
		t.Fatal(err)
	}
	const noise = 0.02
	tp.Noise = noise
	setup := p.Config.Prepare(p.Series, true, io.Discard)
	defer setup.Done()
	p.Config.Options = execute.Options{Stderr: io.Discard, Quiet: true, Setup: setup}
	p.Config.Trials = &tp
	res, err := sweep.Run(context.Background(), p.Config, p.Series)
	if err != nil {
		t.Fatal(err)
	}
	sw := p.Config.Document(p.Series, p.Backends, res)
	sw.SweepTrials = sweep.TrialsDocument(tp, noise, p.Baseline, res.Series, p.Backends, res.Notes, res.Until)
	var out bytes.Buffer
	if err := report.SweepTableFit(&out, &sw, 100); err != nil {
		t.Fatal(err)
	}
	if err := report.Comparisons(&out, sw.SweepTrials, 100); err != nil {
		t.Fatal(err)
	}
	if len(sw.Series) != 8 || sw.Series[0].Label != "serial tcp ka" || sw.Series[0].Backend != "serial" {
		t.Fatalf("series %+v", sw.Series)
	}
	type pair struct{ factor, series, baseline string }
	got := map[pair]map[int]int{}
	for _, c := range sw.Comparisons {
		p := pair{c.Factor, c.Series, c.Baseline}
		if got[p] == nil {
			got[p] = map[int]int{}
		}
		got[p][c.Concurrency]++
		if c.Verdict == "" || c.Verdict == trials.NoVerdict {
			t.Errorf("%+v: no verdict with 5 trials a side", c)
		}
	}
	want := map[pair]bool{}
	for _, b := range []string{"serial", "evented"} {
		for _, ka := range []string{"ka", "no-ka"} {
			want[pair{trials.FactorTransport, b + " unix " + ka, b + " tcp " + ka}] = true
		}
		for _, tr := range []string{"tcp", "unix"} {
			want[pair{trials.FactorKeepAlive, b + " " + tr + " ka", b + " " + tr + " no-ka"}] = true
		}
	}
	for _, tr := range []string{"tcp", "unix"} {
		for _, ka := range []string{"ka", "no-ka"} {
			want[pair{trials.FactorBackend, "evented " + tr + " " + ka, "serial " + tr + " " + ka}] = true
		}
	}
	for p, levels := range got {
		if !want[p] {
			t.Errorf("unexpected pair %+v", p)
		}
		for _, c := range []int{1, 2} {
			if levels[c] != 5 {
				t.Errorf("%+v at c=%d: %d metrics, want 5 (req/s, mean, p50, p99, max)", p, c, levels[c])
			}
		}
	}
	for p := range want {
		if got[p] == nil {
			t.Errorf("missing pair %+v", p)
		}
	}
	for _, h := range []string{"transport: unix vs tcp", "keep-alive: on vs off", "backend: evented vs serial"} {
		if !strings.Contains(out.String(), h) {
			t.Errorf("the table has no group %q:\n%s", h, out.String())
		}
	}
}
