package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
)

// waitDied waits (up to 5 s) for srv to die and reports whether it did.
func waitDied(srv *fixtures.Server) bool {
	select {
	case <-srv.Died():
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// TestBenchBackendFailures: bench's exit status and report on a backend's
// failures (what a run records of them is tested in internal/execute): a
// backend that exits after 100 requests is one line of the text report;
// a healthy run has "backend_lost": null; a backend that died on an empty
// connection is exit 1 with one error line.
func TestBenchBackendFailures(t *testing.T) {
	lost := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Behaviour: fixtures.Behaviour{ExitAfter: 100}})
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "-n", "150", lost.URL("/x"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "Backend lost:           the backend stopped accepting connections after 100 completed requests, at ") ||
		!strings.Contains(out, " s: no such Unix socket\n") {
		t.Errorf("no backend-lost line in the report:\n%s", out)
	}
	code, out, _ = runMain(t, context.Background(), "bench", "-q", "--format", "json", "-n", "5",
		fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{}).URL("/"))
	if code != 0 || !strings.Contains(out, `"backend_lost": null`) {
		t.Errorf("exit %d, no null backend_lost:\n%s", code, out)
	}
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Behaviour: fixtures.Behaviour{DieOnEmptyConn: true}})
	c, err := net.Dial(srv.Network, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if !waitDied(srv) {
		t.Fatal("the switch did not take the backend down")
	}
	code, out, errs = runMain(t, context.Background(), "bench", "-n", "5", srv.URL("/x"))
	if code != exitUnreachable || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("after its death: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
