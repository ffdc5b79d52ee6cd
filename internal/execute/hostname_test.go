package execute_test

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
	"github.com/backbench/backbench/internal/stats"
)

// TestNoHostnameInRecord checks that Privacy.NoHostname (bench
// --no-hostname) leaves the host name out of a run's record, as its JSON
// (document.Write) shows it, and that it is there without it. It runs
// once: it tests the record, not the load path.
func TestNoHostnameInRecord(t *testing.T) {
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: it tests the record, not the load path")
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skip("no host name")
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	for _, no := range []bool{false, true} {
		po := plan.Defaults(srv.URL("/"))
		po.Requests, po.RequestsSet = 2, true
		ld, err := po.Build()
		if err != nil {
			t.Fatal(err)
		}
		run, err := execute.Run(context.Background(), ld.Plan, execute.Options{Stderr: io.Discard, Quiet: true, Version: "test",
			Privacy: stats.Privacy{NoHostname: no}})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := document.Write(&out, &document.Run{Summary: &run.Summary, Record: run.Record}); err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(out.String(), `"hostname": "`+host+`"`)
		if has == no {
			t.Errorf("NoHostname=%v: host name in the record: %v", no, has)
		}
	}
}
