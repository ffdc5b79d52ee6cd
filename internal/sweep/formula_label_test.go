package sweep_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/sweep"
)

// TestSweepCSVFormulaLabel runs a sweep (-n 4 -c 1, built as backbench
// sweep builds it) whose labels would start formulas in a spreadsheet (@,
// +, -): its CSV (report.SweepCSV, sweep.csv) holds them quoted with a
// leading single quote, and its JSON (document.Write, sweep.json) as
// typed. It runs once: it tests the files, not the load path.
func TestSweepCSVFormulaLabel(t *testing.T) {
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: it tests the files, not the load path")
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	load := plan.Defaults("")
	load.Requests, load.RequestsSet = 4, true
	so := plan.SweepOptions{Load: load, Levels: "1",
		Args: []string{"@SUM(1+1)*cmd|' /C calc'!A0=" + srv.URL("/a"), "+1=" + srv.URL("/b"), "plain=" + srv.URL("/c")}}
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
	sw := p.Config.Document(p.Series, p.Backends, res)
	var b, js bytes.Buffer
	if err := report.SweepCSV(&b, &sw); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n\"'@SUM(1+1)*cmd|' /C calc'!A0\",1,", "\n\"'+1\",1,", "\nplain,1,"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("sweep.csv lacks %q:\n%s", want, b.String())
		}
	}
	if err := document.Write(&js, &sw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"label": "@SUM(1+1)*cmd|' /C calc'!A0"`) {
		t.Errorf("sweep.json changed the label")
	}
}
