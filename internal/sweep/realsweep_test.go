package sweep_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/sweep"
)

// TestRealSweep runs a short sweep (-n 24 -c 1,4 --warmup 4 -s 10) over
// php-fpm (TCP and Unix, with and without keep-alive) and Thin (TCP and
// Unix, -k), both started by scripts/backends.sh, as backbench sweep
// builds it (plan.SweepOptions), and checks the document and its CSV.
func TestRealSweep(t *testing.T) {
	fpm := realbackend.StartScripted(t, "php-fpm", true)
	thin := realbackend.StartScripted(t, "thin", true)
	realSweepCheck(t, []string{"fpm tcp=" + fpm.URL("tcp", "small"), "fpm unix=" + fpm.URL("unix", "small")},
		func(o *plan.SweepOptions) { o.KeepAliveModes, o.Load.DocumentRoot = "off,on", fpm.DocRoot },
		[]string{"fpm tcp no-ka", "fpm tcp ka", "fpm unix no-ka", "fpm unix ka"}, realbackend.ScriptedSmallLen)
	realSweepCheck(t, []string{"thin tcp=" + thin.URL("tcp", "big"), "thin unix=" + thin.URL("unix", "big")},
		func(o *plan.SweepOptions) { o.Load.KeepAlive = true },
		[]string{"thin tcp", "thin unix"}, realbackend.ScriptedBigLen)
}

// realSweepCheck runs the sweep of args (with more's options) and checks
// its document and CSV: the series in order, each level run whole with
// no failure and the right document length.
func realSweepCheck(t *testing.T, args []string, more func(*plan.SweepOptions), labels []string, length int64) {
	t.Helper()
	load := plan.Defaults("")
	load.Requests, load.RequestsSet, load.Timeout = 24, true, 10*time.Second
	so := plan.SweepOptions{Load: load, Args: args, Levels: "1,4", Warmup: 4, WarmupSet: true}
	more(&so)
	p, err := so.Build()
	if err != nil {
		t.Fatal(err)
	}
	setup := p.Config.Prepare(p.Series, true, io.Discard)
	defer setup.Done()
	p.Config.Options = execute.Options{Stderr: io.Discard, Quiet: true, Setup: setup, Version: "test"}
	res, err := sweep.Run(context.Background(), p.Config, p.Series)
	if err != nil {
		t.Fatal(err)
	}
	if errs, _ := sweep.Unreachable(res, p.Series); len(errs) > 0 {
		t.Fatalf("unreachable: %v", errs)
	}
	sw := p.Config.Document(p.Series, p.Backends, res)
	var b bytes.Buffer
	if err := report.SweepCSV(&b, &sw); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatalf("sweep CSV: %v", err)
	}
	if len(sw.Series) != len(labels) || len(rows) != 1+2*len(labels) {
		t.Fatalf("%d series, %d CSV rows; want %d and %d", len(sw.Series), len(rows), len(labels), 1+2*len(labels))
	}
	for i, se := range sw.Series {
		if se.Label != labels[i] || len(se.Levels) != 2 || se.Stop != nil {
			t.Errorf("series %d: %q, %d levels, stop %+v; want %q, 2 levels", i, se.Label, len(se.Levels), se.Stop, labels[i])
			continue
		}
		for _, l := range se.Levels {
			if l.Complete != 24 || l.Failed != 0 || l.DocumentLength != length || l.RequestsPerSecond <= 0 {
				t.Errorf("%s at -c %d: complete %d failed %d length %d req/s %v errors %v",
					se.Label, l.Concurrency, l.Complete, l.Failed, l.DocumentLength, l.RequestsPerSecond, l.ErrorSamples)
			}
		}
	}
}
