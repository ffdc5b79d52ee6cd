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

// TestSweepKeepAliveIgnored: a sweep with --keepalive-modes off,on of a
// FastCGI backend that closes every kept connection (as Ruby's fcgi.rb
// does) says, as a study's answer does and in the same words
// (trials.KeepAliveIgnored), that keep-alive did not apply to its
// keep-alive series; a backend that keeps them gets no such note.
func TestSweepKeepAliveIgnored(t *testing.T) {
	for _, keepConn := range []string{fixtures.KeepConnIgnore, fixtures.KeepConnHonour} {
		srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Behaviour: fixtures.Behaviour{KeepConn: keepConn}})
		load := plan.Defaults("")
		load.Requests, load.RequestsSet = 40, true
		so := plan.SweepOptions{Load: load, Args: []string{srv.URL("/x")}, KeepAliveModes: "off,on", Levels: "2"}
		p, err := so.Build()
		if err != nil {
			t.Fatal(err)
		}
		tp, err := trials.Options{Repeat: 2, RepeatSet: true, Seed: 3, SeedSet: true}.Build()
		if err != nil {
			t.Fatal(err)
		}
		tp.Noise = 0.02
		setup := p.Config.Prepare(p.Series, true, io.Discard)
		p.Config.Options = execute.Options{Stderr: io.Discard, Quiet: true, Setup: setup}
		p.Config.Trials = &tp
		res, err := sweep.Run(context.Background(), p.Config, p.Series)
		setup.Done()
		if err != nil {
			t.Fatal(err)
		}
		sw := p.Config.Document(p.Series, p.Backends, res)
		sw.SweepTrials = sweep.TrialsDocument(tp, tp.Noise, p.Baseline, res.Series, p.Backends, res.Notes, res.Until)
		var out bytes.Buffer
		if err := report.Comparisons(&out, sw.SweepTrials, 100); err != nil {
			t.Fatal(err)
		}
		kaSeries := ""
		for _, c := range sw.Comparisons {
			if c.Factor == trials.FactorKeepAlive {
				kaSeries = c.Series
			}
		}
		if kaSeries == "" {
			t.Fatalf("%s: no keep-alive comparison:\n%s", keepConn, out.String())
		}
		want := trials.KeepAliveIgnored([]string{kaSeries})
		said := strings.Contains(strings.Join(sw.SweepTrials.Notes, "\n"), want) && strings.Contains(out.String(), "keep-alive did not apply to "+kaSeries)
		if said != (keepConn == fixtures.KeepConnIgnore) {
			t.Errorf("FCGI_KEEP_CONN %s: said %v %q, notes %q\n%s", keepConn, said, want, sw.SweepTrials.Notes, out.String())
		}
	}
}
